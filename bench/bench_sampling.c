// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling overhead: the throughput of a CPU-bound workload on a real JIT (HotSpot, V8)
 * untraced, under `jitrace record -a -F HZ` and under `perf record -a -g -F HZ`, at 99,
 * 999 and 4999 Hz. Throughput is work done in a fixed window, so a slower run shows as less
 * work. Each round starts one workload process per runtime, warms it up, then runs the
 * windows of every condition in it, in a rotated order; a traced window is compared with
 * the untraced windows of the same process, so JIT differences between processes cancel.
 * A bare cpu-clock sampling event (no program, no buffer) gives the floor any sampler pays
 * on this machine, and one extra window times jitrace's sampling program with bpf_stats.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "base/util.h"

#define JAVA_HOME "/usr/lib/jvm/java-17-openjdk-amd64"
#define NODE "node"
#define PERF "perf"
#define WORKLOADS "bench/workloads"
#define WORK_CPU 1		/* the workload's CPU */
#define TRACER_CPU 0		/* the tracers' user space, with whatever else runs here */
#define WARMUP_MS 2500
#define GAP_MS 1200		/* from a tracer's start to the window: it is running by then */
#define MAX_ROUNDS 15
#define NRATES 3
#define NCOND 10		/* windows a round */
#define MAX_CPUS 256

/* The floor: a cpu-clock sampling event on every CPU, with no program and no buffer. */
enum tracer { T_NONE, T_JITRACE, T_PERF, T_FLOOR };
#define NTRACED 3

static const unsigned int rates[NRATES] = { 99, 999, 4999 };
static const char *const tracer_name[] = { "untraced", "jitrace", "perf", "bare event" };

struct cond {
	enum tracer t;
	int rate;		/* index into rates[] */
};

/*
 * The base order: untraced twice, each tracer at each rate, the floor at 999 and 4999 Hz
 * (at 99 Hz it is below the noise). Round r rotates it by r and, in odd rounds, puts perf
 * before jitrace.
 */
static const struct cond base_order[NCOND] = {
	{ T_NONE, 0 },	  { T_JITRACE, 0 }, { T_PERF, 0 },    { T_JITRACE, 1 }, { T_PERF, 1 },
	{ T_FLOOR, 1 },	  { T_NONE, 0 },    { T_JITRACE, 2 }, { T_PERF, 2 },    { T_FLOOR, 2 },
};

struct runtime {
	const char *name;
	char *argv[12];
	bool ok;
	double untraced[MAX_ROUNDS * 2];	/* units/s */
	int n_untraced;
	double ref[MAX_ROUNDS];			/* a round's untraced mean */
	/* [jitrace, perf, floor][rate][round] */
	double tput[NTRACED][NRATES][MAX_ROUNDS];	/* units/s */
	double loss[NTRACED][NRATES][MAX_ROUNDS];	/* percent of the round's untraced */
	double sps[NTRACED][NRATES][MAX_ROUNDS];	/* the workload's samples per second */
	double cpu[NTRACED][NRATES][MAX_ROUNDS];	/* the tracer's CPU seconds, start to exit */
	int rounds;
	double prog_ns;		/* jitrace's sampling program, ns a run (bpf_stats); 0: none */
	long prog_runs;
};

struct bench {
	const char *jitrace;
	const char *agent;
	int rounds;
	unsigned int window_ms;
	char tmp[64];		/* compiled Java, logs */
	struct runtime rt[2];
};

/* Lines from a pipe, with a deadline. */
struct lines {
	int fd;
	size_t len;
	char buf[8192];
};

static double now_s(void)
{
	return jt_now_ns() / 1e9;
}

static void sleep_until(double t)
{
	double d = t - now_s();
	struct timespec ts;

	if (d <= 0)
		return;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
}

/* 1 and the next line in out (without its newline), 0 at EOF or timeout. */
static int read_line(struct lines *l, char *out, size_t size, double timeout_s)
{
	double end = now_s() + timeout_s;

	for (;;) {
		char *nl = memchr(l->buf, '\n', l->len);
		struct pollfd p = { .fd = l->fd, .events = POLLIN };
		double left;
		ssize_t n;

		if (nl) {
			size_t k = nl - l->buf;

			snprintf(out, size, "%.*s", (int)k, l->buf);
			memmove(l->buf, nl + 1, l->len - k - 1);
			l->len -= k + 1;
			return 1;
		}
		if (l->len == sizeof(l->buf) - 1)	/* an overlong line: take it as it is */
			l->len = 0;
		left = end - now_s();
		if (left <= 0 || poll(&p, 1, (int)(left * 1000) + 1) <= 0)
			return 0;
		n = read(l->fd, l->buf + l->len, sizeof(l->buf) - 1 - l->len);
		if (n <= 0)
			return 0;
		l->len += n;
	}
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "bench_sampling: pinning to CPU %d: %s\n", cpu, strerror(errno));
}

/*
 * Start argv on cpu. to_child: where we write its stdin (NULL: /dev/null); from_child: where
 * we read its stdout, or its stderr when from_stderr (NULL: inherited).
 */
static pid_t spawn(char *const argv[], int cpu, bool boosted, int *to_child, int *from_child,
		   bool from_stderr)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 };
	pid_t pid;

	if ((to_child && pipe2(in, O_CLOEXEC)) || (from_child && pipe2(out, O_CLOEXEC))) {
		fprintf(stderr, "bench_sampling: pipe: %s\n", strerror(errno));
		exit(1);
	}
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench_sampling: fork: %s\n", strerror(errno));
		exit(1);
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (boosted)
			bench_boost();
		pin(cpu);
		dup2(to_child ? in[0] : null, 0);
		if (from_child && from_stderr) {
			dup2(null, 1);
			dup2(out[1], 2);
		} else if (from_child) {
			dup2(out[1], 1);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "bench_sampling: running %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (to_child) {
		close(in[0]);
		*to_child = in[1];
	}
	if (from_child) {
		close(out[1]);
		*from_child = out[0];
	}
	return pid;
}

/*
 * Wait for pid up to timeout_s, then kill it. 0 if it exited with 0 or was ended by
 * SIGINT (perf re-raises it once it has written its file), else -1.
 */
static int reap(pid_t pid, double timeout_s, struct rusage *ru)
{
	double end = now_s() + timeout_s;
	int st;

	for (;;) {
		pid_t r = wait4(pid, &st, WNOHANG, ru);

		if (r == pid)
			break;
		if (r < 0)
			return -1;
		if (now_s() > end) {
			fprintf(stderr, "bench_sampling: pid %d did not stop: killing it\n", pid);
			kill(pid, SIGKILL);
			wait4(pid, &st, 0, ru);
			return -1;
		}
		usleep(10000);
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	if (WIFSIGNALED(st) && WTERMSIG(st) == SIGINT)
		return 0;
	fprintf(stderr, "bench_sampling: pid %d: %s %d\n", pid,
		WIFEXITED(st) ? "exit status" : "killed by signal",
		WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
	return -1;
}

/* Run argv to the end (on the tracers' CPU); its stdout in buf. 0 on success. */
static int capture(char *const argv[], char *buf, size_t size)
{
	char sink[512];
	size_t len = 0;
	ssize_t n;
	pid_t pid;
	int fd;

	pid = spawn(argv, TRACER_CPU, false, NULL, &fd, false);
	while (len + 1 < size && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = 0;
	while (read(fd, sink, sizeof(sink)) > 0)	/* what does not fit, so it can exit */
		;
	close(fd);
	if (reap(pid, 60, NULL)) {
		fprintf(stderr, "bench_sampling: %s failed\n", argv[0]);
		return -1;
	}
	return 0;
}

/* Run argv to the end, its stdout thrown away. 0 on success. */
static int run_quiet(char *const argv[])
{
	char buf[256];

	return capture(argv, buf, sizeof(buf));
}

/* The samples of process pid in a log: jitrace's report says "N samples, ...". */
static long jitrace_samples(struct bench *b, const char *log, pid_t pid)
{
	char pidstr[16], *out = malloc(1 << 16), *line, *save = NULL;
	char *argv[] = { (char *)b->jitrace, "report", "-n", "1", "-p", pidstr, (char *)log,
			 NULL };
	long n = -1;

	snprintf(pidstr, sizeof(pidstr), "%d", pid);
	if (out && !capture(argv, out, 1 << 16))
		for (line = strtok_r(out, "\n", &save); line && n < 0;
		     line = strtok_r(NULL, "\n", &save))
			if (sscanf(line, "%ld samples,", &n) != 1)
				n = -1;
	free(out);
	return n;
}

/* The samples of process pid in perf.data: the sum over its threads. */
static long perf_samples(const char *data, pid_t pid)
{
	char pidstr[16], *out = malloc(1 << 16), *line, *save = NULL;
	char *argv[] = { PERF, "report", "-i", (char *)data, "--pid", pidstr, "--no-children",
			 "--sort", "pid", "-n", "-q", "--stdio", "-g", "none", NULL };
	long n = -1, k;

	snprintf(pidstr, sizeof(pidstr), "%d", pid);
	if (out && !capture(argv, out, 1 << 16)) {
		n = 0;
		for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
			if (sscanf(line, " %*f%% %ld", &k) == 1)
				n += k;
	}
	free(out);
	return n;
}

struct window {
	double units_s;
	double samples_s;	/* of the workload, per second of window; 0 untraced */
	double cpu_s;		/* the tracer's user + system time */
	double prog_ns;		/* with stats: the sampling program's ns a run */
	long prog_runs;
};

/* The floor's events, one a CPU; the number opened, -1 on error. */
static int floor_open(unsigned int hz, int *fds)
{
	struct perf_event_attr a = {
		.size = sizeof(a),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.freq = 1,
		.sample_freq = hz,
		.sample_type = PERF_SAMPLE_IP,
	};
	long n = sysconf(_SC_NPROCESSORS_ONLN), i;

	for (i = 0; i < n && i < MAX_CPUS; i++) {
		fds[i] = syscall(__NR_perf_event_open, &a, -1, (int)i, -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[i] < 0) {
			fprintf(stderr, "bench_sampling: perf_event_open(cpu-clock, %u Hz) on CPU "
					"%ld: %s\n", hz, i, strerror(errno));
			while (i--)
				close(fds[i]);
			return -1;
		}
	}
	return (int)i;
}

/* kernel.bpf_stats_enabled: set it to on, return the old value (-1: cannot). */
static int bpf_stats(int on)
{
	int fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDWR), old = -1;
	char c;

	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) == 1)
		old = c == '1';
	c = on ? '1' : '0';
	if (pwrite(fd, &c, 1, 0) != 1)
		old = -1;
	close(fd);
	return old;
}

/* Run time and count of tracer pid's perf_event program, from its fdinfo. 0 if found. */
static int prog_stats(pid_t pid, unsigned long *ns, unsigned long *cnt)
{
	char path[320], line[128];
	struct dirent *de;
	DIR *d;
	int found = -1;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return -1;
	while (found && (de = readdir(d))) {
		unsigned long type = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			sscanf(line, "prog_type: %lu", &type);
			sscanf(line, "run_time_ns: %lu", ns);
			sscanf(line, "run_cnt: %lu", cnt);
		}
		fclose(f);
		if (type == 7)	/* BPF_PROG_TYPE_PERF_EVENT: jitrace has one */
			found = 0;
	}
	closedir(d);
	return found;
}

/* Stop a tracer: SIGINT, then its status. */
static int stop(pid_t tp, struct lines *err, struct rusage *ru)
{
	char line[512];
	int rc;

	kill(tp, SIGINT);
	rc = reap(tp, 120, ru);
	while (rc && read_line(err, line, sizeof(line), 0.1))
		fprintf(stderr, "  %s\n", line);
	close(err->fd);
	return rc;
}

/*
 * One measured window of the workload (its stdin at to_wl, its stdout in wl) under tracer
 * t at rate hz; with stats, jitrace's sampling program is timed (bpf_stats). 0 on success.
 */
static int window(struct bench *b, pid_t wl_pid, int to_wl, struct lines *wl, enum tracer t,
		  unsigned int hz, bool stats, struct window *w)
{
	char hzs[16], out[PATH_MAX], line[512];
	char *jargv[] = { (char *)b->jitrace, "record", "-a", "-F", hzs, "-o", out, "-f", NULL };
	char *pargv[] = { PERF, "record", "-a", "-g", "-F", hzs, "-o", out, NULL };
	unsigned long ns0 = 0, cnt0 = 0, ns1 = 0, cnt1 = 0;
	struct lines err = { .fd = -1 };
	int fds[MAX_CPUS], nfds = 0, old_stats = -1, i;
	double start = now_s();
	long count = -1, n;
	struct rusage ru;
	pid_t tp = 0;

	memset(w, 0, sizeof(*w));
	snprintf(hzs, sizeof(hzs), "%u", hz);
	snprintf(out, sizeof(out), "%s/%s.%s", b->tmp, tracer_name[t],
		 t == T_PERF ? "data" : "jtl");
	if (t == T_JITRACE || t == T_PERF) {
		tp = spawn(t == T_JITRACE ? jargv : pargv, TRACER_CPU, false, NULL, &err.fd, true);
		/* jitrace says "jitrace: recording ..." once its programs are attached. */
		while (t == T_JITRACE && read_line(&err, line, sizeof(line), 30) &&
		       !strstr(line, "recording"))
			fprintf(stderr, "  %s\n", line);
	} else if (t == T_FLOOR) {
		nfds = floor_open(hz, fds);
		if (nfds < 0)
			return -1;
	}
	sleep_until(start + GAP_MS / 1e3);
	if (stats && (old_stats = bpf_stats(1)) >= 0)
		prog_stats(tp, &ns0, &cnt0);
	line[0] = 0;
	if (write(to_wl, "go\n", 3) == 3 &&
	    read_line(wl, line, sizeof(line), b->window_ms / 1e3 + 60))
		sscanf(line, "count %ld", &count);
	if (old_stats >= 0) {
		prog_stats(tp, &ns1, &cnt1);
		bpf_stats(old_stats);
		if (cnt1 > cnt0) {
			w->prog_ns = (double)(ns1 - ns0) / (cnt1 - cnt0);
			w->prog_runs = cnt1 - cnt0;
		}
	}
	for (i = 0; i < nfds; i++)
		close(fds[i]);
	if (tp && stop(tp, &err, &ru)) {
		fprintf(stderr, "bench_sampling: %s failed\n", tracer_name[t]);
		return -1;
	}
	if (count < 0) {
		fprintf(stderr, "bench_sampling: the workload gave no count (\"%s\")\n", line);
		return -1;
	}
	w->units_s = count / (b->window_ms / 1e3);
	if (!tp)
		return 0;
	w->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
		   ru.ru_stime.tv_usec / 1e6;
	n = t == T_JITRACE ? jitrace_samples(b, out, wl_pid) : perf_samples(out, wl_pid);
	w->samples_s = n < 0 ? 0 : n / (b->window_ms / 1e3);
	unlink(out);
	return 0;
}

static void cleanup_perfmap(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	unlink(path);
}

/*
 * One round of one runtime: a fresh process, warmed up, then every condition once; in the
 * last round one more jitrace window at 999 Hz times its sampling program.
 */
static int round_of(struct bench *b, struct runtime *rt, int r)
{
	struct lines wl = { .fd = -1 };
	double sum = 0;
	int to_wl, i, nu = 0, rc = -1;
	char line[256] = "";
	struct window w;
	pid_t pid;

	pid = spawn(rt->argv, WORK_CPU, true, &to_wl, &wl.fd, false);
	if (!read_line(&wl, line, sizeof(line), WARMUP_MS / 1e3 + 60) || strcmp(line, "ready")) {
		fprintf(stderr, "bench_sampling: %s workload did not start (\"%s\")\n", rt->name,
			line);
		goto out;
	}
	for (i = 0; i < NCOND; i++) {
		struct cond c = base_order[(i + r) % NCOND];
		int k;

		if (r % 2 && (c.t == T_JITRACE || c.t == T_PERF))	/* perf first in odd rounds */
			c.t = c.t == T_JITRACE ? T_PERF : T_JITRACE;
		if (window(b, pid, to_wl, &wl, c.t, rates[c.rate], false, &w))
			goto out;
		if (c.t == T_NONE) {
			rt->untraced[rt->n_untraced++] = w.units_s;
			sum += w.units_s;
			nu++;
			fprintf(stderr, "bench_sampling: round %d %s untraced: %.0f units/s\n",
				r + 1, rt->name, w.units_s);
			continue;
		}
		k = c.t - 1;
		rt->tput[k][c.rate][r] = w.units_s;
		rt->sps[k][c.rate][r] = w.samples_s;
		rt->cpu[k][c.rate][r] = w.cpu_s;
		fprintf(stderr,
			"bench_sampling: round %d %s %s@%u: %.0f units/s, %.0f samples/s, "
			"tracer CPU %.2f s\n",
			r + 1, rt->name, tracer_name[c.t], rates[c.rate], w.units_s, w.samples_s,
			w.cpu_s);
	}
	rt->ref[r] = sum / nu;
	for (i = 0; i < NTRACED * NRATES; i++)
		rt->loss[i / NRATES][i % NRATES][r] =
			100 * (1 - rt->tput[i / NRATES][i % NRATES][r] / rt->ref[r]);
	rt->rounds = r + 1;
	if (r == b->rounds - 1 && !window(b, pid, to_wl, &wl, T_JITRACE, 999, true, &w)) {
		rt->prog_ns = w.prog_ns;
		rt->prog_runs = w.prog_runs;
		fprintf(stderr, "bench_sampling: %s jitrace@999, timed: %.0f ns a run, %ld runs\n",
			rt->name, w.prog_ns, w.prog_runs);
	}
	rc = 0;
out:
	close(to_wl);	/* EOF: the workload exits */
	if (reap(pid, 10, NULL))
		fprintf(stderr, "bench_sampling: %s workload exited badly\n", rt->name);
	close(wl.fd);
	cleanup_perfmap(pid);
	return rc;
}

static double median_of(const double *v, int n)
{
	double c[MAX_ROUNDS * 2];

	memcpy(c, v, n * sizeof(*v));
	bench_sort(c, n);
	return c[n / 2];
}

static double min_of(const double *v, int n)
{
	double m = v[0];
	int i;

	for (i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

static double max_of(const double *v, int n)
{
	double m = v[0];
	int i;

	for (i = 1; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

static bool measured(int t, int rate)
{
	return t != T_FLOOR || rate > 0;
}

/* The table of one runtime; its MISSED lines after it, and where the time goes. */
static void report(struct bench *b, struct runtime *rt)
{
	int n = rt->rounds, i, k;
	char what[96], target[64], missed[3][512];
	double v[MAX_ROUNDS * 2];

	printf("\n**%s** (%d rounds, %.1f s windows; throughput in thousands of work units/s; "
	       "loss in %% of the same process's untraced throughput)\n\n",
	       rt->name, n, b->window_ms / 1e3);
	bench_table_head();
	for (i = 0; i < rt->n_untraced; i++)
		v[i] = rt->untraced[i] / 1e3;
	bench_row("throughput, untraced", "", "%.1f", "", v, rt->n_untraced, "");
	for (i = 0; i < NRATES; i++) {
		double jl = median_of(rt->loss[0][i], n), pl = median_of(rt->loss[1][i], n);
		bool met = jl <= pl && (rates[i] != 999 || jl <= 1.0);

		missed[i][0] = 0;
		for (k = 0; k < NTRACED; k++) {
			if (!measured(k + 1, i))
				continue;
			snprintf(what, sizeof(what), "throughput, %s @ %u Hz", tracer_name[k + 1],
				 rates[i]);
			memcpy(v, rt->tput[k][i], n * sizeof(*v));
			for (int j = 0; j < n; j++)
				v[j] /= 1e3;
			bench_row(what, "", "%.1f", "", v, n, "");
		}
		if (rates[i] == 999)
			snprintf(target, sizeof(target), "<= 1%% and <= perf (%.2f%%)", pl);
		else
			snprintf(target, sizeof(target), "<= perf (%.2f%%)", pl);
		snprintf(what, sizeof(what), "**loss, jitrace @ %u Hz**", rates[i]);
		memcpy(v, rt->loss[0][i], n * sizeof(*v));
		bench_row(what, target, "%.2f", "%", v, n, met ? "met" : "MISSED");
		for (k = 1; k < NTRACED; k++) {
			if (!measured(k + 1, i))
				continue;
			snprintf(what, sizeof(what), "loss, %s @ %u Hz", tracer_name[k + 1],
				 rates[i]);
			memcpy(v, rt->loss[k][i], n * sizeof(*v));
			bench_row(what, "", "%.2f", "%", v, n, "");
		}
		for (k = 0; measured(T_FLOOR, i) && k < 2; k++) {
			int j;

			snprintf(what, sizeof(what), "%s over the bare event @ %u Hz (points)",
				 tracer_name[k + 1], rates[i]);
			for (j = 0; j < n; j++)
				v[j] = rt->loss[k][i][j] - rt->loss[2][i][j];
			bench_row(what, "", "%.2f", "", v, n, "");
		}
		for (k = 0; k < 2; k++) {
			snprintf(what, sizeof(what), "%s samples/s of the workload @ %u Hz",
				 tracer_name[k + 1], rates[i]);
			snprintf(target, sizeof(target), "~%u", rates[i]);
			memcpy(v, rt->sps[k][i], n * sizeof(*v));
			bench_row(what, target, "%.0f", "", v, n, "");
		}
		for (k = 0; k < 2; k++) {
			snprintf(what, sizeof(what), "%s CPU time, start to exit @ %u Hz",
				 tracer_name[k + 1], rates[i]);
			memcpy(v, rt->cpu[k][i], n * sizeof(*v));
			bench_row(what, "", "%.2f", " s", v, n, "");
		}
		if (met)
			continue;
		if (rates[i] == 999 && jl > 1.0) {
			double us = median_of(rt->loss[2][2], n) / 100 / rates[2] * 1e6;

			snprintf(missed[i], sizeof(missed[i]),
				 "MISSED: sampling overhead, %s @ 999 Hz: jitrace loses %.2f%% of "
				 "throughput (target <= 1%%; perf -g %.2f%%); a bare cpu-clock "
				 "sampling event with no program and no buffer loses %.2f%% at 999 "
				 "Hz and %.2f%% at 4999 Hz here, about %.1f µs a sample or %.1f%% at "
				 "999 Hz: the sample interrupt of this VM holds it back, not "
				 "jitrace's program (%.0f ns a run, %.2f%% at 999 Hz)\n",
				 rt->name, jl, pl, median_of(rt->loss[2][1], n),
				 median_of(rt->loss[2][2], n), us, us * 999 / 1e4, rt->prog_ns,
				 rt->prog_ns * 999 / 1e7);
		} else {
			snprintf(missed[i], sizeof(missed[i]),
				 "MISSED: sampling overhead, %s @ %u Hz: jitrace loses %.2f%% of "
				 "throughput, perf -g %.2f%% (target <= perf); the gap of %.2f points "
				 "is %s the rounds' spread (jitrace %.2f to %.2f%%, perf %.2f to "
				 "%.2f%%)\n",
				 rt->name, rates[i], jl, pl, jl - pl,
				 jl - pl < max_of(rt->loss[0][i], n) - min_of(rt->loss[0][i], n) ?
					 "within" : "beyond",
				 min_of(rt->loss[0][i], n), max_of(rt->loss[0][i], n),
				 min_of(rt->loss[1][i], n), max_of(rt->loss[1][i], n));
		}
	}
	printf("\n");
	for (i = 0; i < NRATES; i++)
		fputs(missed[i], stdout);
	{
		double f = median_of(rt->loss[2][2], n);
		double us = f / 100 / rates[2] * 1e6;

		printf("%sWhere the time goes (%s): the bare cpu-clock event at 4999 Hz, which only "
		       "takes the sample interrupt, loses %.2f%%, about %.1f µs of the workload's "
		       "CPU a sample; ",
		       missed[0][0] || missed[1][0] || missed[2][0] ? "\n" : "", rt->name, f, us);
		if (rt->prog_ns > 0)
			printf("jitrace's sampling program (frame-pointer user stack, one ring-buffer "
			       "record) ran %ld times in one extra 999 Hz window at %.0f ns a run "
			       "(kernel.bpf_stats_enabled, on for that window only), %.2f%% of a CPU "
			       "at 999 Hz.\n",
			       rt->prog_runs, rt->prog_ns, rt->prog_ns * 999 / 1e7);
		else
			printf("jitrace's sampling program could not be timed (bpf_stats).\n");
	}
}

/* javac the workload into b->tmp; 0 on success. */
static int compile_java(struct bench *b, const char *dir)
{
	char javac[] = JAVA_HOME "/bin/javac", src[PATH_MAX];
	char *argv[] = { javac, "-d", b->tmp, src, NULL };

	snprintf(src, sizeof(src), "%s/Work.java", dir);
	if (access(javac, X_OK)) {
		fprintf(stderr, "bench_sampling: %s: %s\n", javac, strerror(errno));
		return -1;
	}
	return run_quiet(argv) ? -1 : 0;
}

static bool have_node(void)
{
	char *argv[] = { NODE, "--version", NULL };

	return run_quiet(argv) == 0;
}

int main(int argc, char **argv)
{
	static char warm[16], win[16], agentopt[PATH_MAX + 16], nodejs[PATH_MAX];
	struct bench b = { .rounds = 6, .window_ms = 2500 };
	const char *dir = WORKLOADS;
	double t0 = now_s();
	int r, i, max_rate0;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: bench_sampling JITRACE LIBJITRACE-JVMTI.SO [ROUNDS "
				"[WINDOW_MS [WORKLOAD_DIR]]]\n");
		return 2;
	}
	b.jitrace = argv[1];
	b.agent = argv[2];
	if (argc > 3)
		b.rounds = atoi(argv[3]);
	if (argc > 4)
		b.window_ms = atoi(argv[4]);
	if (argc > 5)
		dir = argv[5];
	if (b.rounds < 1 || b.rounds > MAX_ROUNDS || b.window_ms < 100) {
		fprintf(stderr, "bench_sampling: 1 to %d rounds of at least 100 ms\n", MAX_ROUNDS);
		return 2;
	}
	snprintf(b.tmp, sizeof(b.tmp), "/tmp/bench_sampling.XXXXXX");
	if (!mkdtemp(b.tmp)) {
		fprintf(stderr, "bench_sampling: mkdtemp: %s\n", strerror(errno));
		return 1;
	}
	snprintf(warm, sizeof(warm), "%d", WARMUP_MS);
	snprintf(win, sizeof(win), "%u", b.window_ms);
	snprintf(agentopt, sizeof(agentopt), "-agentpath:%s", b.agent);
	snprintf(nodejs, sizeof(nodejs), "%s/work.js", dir);

	b.rt[0] = (struct runtime){
		.name = "Java (HotSpot 17)",
		.argv = { JAVA_HOME "/bin/java", agentopt, "-XX:+PreserveFramePointer", "-cp",
			  b.tmp, "Work", warm, win, NULL },
	};
	b.rt[1] = (struct runtime){
		.name = "Node",
		.argv = { NODE, "--perf-basic-prof", "--logfile=/dev/null", nodejs, warm, win,
			  NULL },
	};
	b.rt[0].ok = !compile_java(&b, dir) && !access(b.agent, R_OK);
	b.rt[1].ok = have_node() && !access(nodejs, R_OK);

	f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	if (!f || fscanf(f, "%d", &max_rate0) != 1)
		max_rate0 = -1;
	if (f)
		fclose(f);

	for (r = 0; r < b.rounds; r++)
		for (i = 0; i < 2; i++) {
			struct runtime *rt = &b.rt[(i + r) % 2];

			if (rt->ok && round_of(&b, rt, r))
				rt->ok = false;
		}

	printf("## Sampling overhead\n\n");
	printf("Throughput of a single-threaded CPU-bound workload (bench/workloads: FNV "
	       "hashing, insertion sort of 48 ints, a gcd loop, under 24 nested calls), as work "
	       "units done in a fixed %.1f s window, untraced, under `jitrace record -a -F HZ "
	       "-o LOG -f` and under `perf record -a -g -F HZ -o DATA` (perf's cpu-clock here, "
	       "as jitrace's), at 99, 999 and 4999 Hz. ",
	       b.window_ms / 1e3);
	printf("Java runs as `java %s -XX:+PreserveFramePointer -cp DIR Work` and Node as "
	       "`node --perf-basic-prof --logfile=/dev/null work.js` in every condition, so "
	       "only the tracer differs. ",
	       agentopt);
	printf("Each of %d rounds starts one fresh process per runtime, warms it up for %.1f s "
	       "and then runs %d windows in it: untraced twice, each tracer at each rate, and a "
	       "bare cpu-clock sampling event on every CPU with no program and no buffer (the "
	       "floor any sampler pays here) at 999 and 4999 Hz, in an order rotated every round "
	       "(perf before jitrace in odd rounds). A tracer is started %.1f s before its window "
	       "(jitrace only once it says it is recording) and stopped with SIGINT right after "
	       "it. ",
	       b.rounds, WARMUP_MS / 1e3, NCOND, GAP_MS / 1e3);
	printf("The workload (all its threads) is pinned to CPU %d in its own session at nice "
	       "-20 (its autogroup too), so that other work on the host does not take its CPU; "
	       "the tracers' user space is pinned to CPU %d, so what is measured is what "
	       "sampling costs on the sampled CPU (the sample interrupt, jitrace's BPF program "
	       "or perf's stack walk, their cache footprint), not a share of the workload's CPU "
	       "taken by a collector that on a real host runs on another core; the tracers' own "
	       "CPU time is shown too. ",
	       WORK_CPU, TRACER_CPU);
	printf("Loss is 1 - traced / untraced, per round against the mean of the same "
	       "process's two untraced windows; \"over the bare event\" is a tracer's loss "
	       "minus the bare event's in the same round, the tracer's own cost; samples/s counts the workload process's samples "
	       "in the log (`jitrace report -p PID`, `perf report --pid PID`) over the window's "
	       "length.\n");
	for (i = 0; i < 2; i++) {
		if (!b.rt[i].ok && !b.rt[i].rounds) {
			printf("\n**%s**: not measured (its runtime or workload could not run; see "
			       "stderr)\n",
			       b.rt[i].name);
			continue;
		}
		report(&b, &b.rt[i]);
	}
	f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	if (f && fscanf(f, "%d", &i) == 1 && i != max_rate0)
		printf("\nThe kernel lowered perf_event_max_sample_rate from %d to %d during the "
		       "run (a sample's interrupt took too long).\n",
		       max_rate0, i);
	if (f)
		fclose(f);
	fflush(stdout);

	{
		char *rm[] = { "rm", "-rf", b.tmp, NULL };

		run_quiet(rm);
	}
	fprintf(stderr, "bench_sampling: %.0f s\n", now_s() - t0);
	return 0;
}
