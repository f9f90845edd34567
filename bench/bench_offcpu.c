// SPDX-License-Identifier: GPL-2.0
/*
 * What `jitrace record --off-cpu` costs. Its BPF program runs on every context switch of
 * the host (tp_btf/sched_switch): the pid filter first, then for a traced thread leaving the
 * CPU the time and how it left into task storage, and when it runs again a record with its
 * stacks (a wait of at least --off-cpu-min) or a per-thread sum of short waits; the user
 * stack of a thread asleep in a system call is taken when the call returns (sys_exit).
 *
 *   ping-pong   two threads of one process pass a byte back and forth through two pipes,
 *               both pinned to one CPU: every round trip is two switches. Timed as ns a
 *               round trip untraced; under `jitrace record -p PID` (the samplers alone),
 *               `--off-cpu -p PID`, `--off-cpu -a`, `--off-cpu-min 100` and `10000`;
 *               under `perf record -e sched:sched_switch -g -p PID` (Debian's perf has no
 *               --off-cpu) and bcc's `offcputime-bpfcc -p PID` when it runs here. Then the
 *               pid filter: a second ping-pong, untraced, runs on the other CPU, under
 *               -p (its switches only pass the filter) and -a (they take stacks).
 *   handoff     bench/workloads/Handoff.java: the same with two Java threads (park/unpark),
 *               each waiting 24 JIT frames down.
 *   Java, Node  bench/workloads/Work.java and work.js (CPU-bound, single-threaded, with
 *               the runtime's own threads), throughput in a fixed window, untraced and
 *               with and without --off-cpu.
 * For every workload, the off-CPU records a second and the log they make at --off-cpu-min
 * 100, 1000 (the default) and 10000 us.
 *
 * Each round starts a fresh process per workload (pinned to WORK_CPU, its own session at
 * nice -20) and runs the windows of every condition in it, in an order rotated every round;
 * a traced window is compared with the untraced windows of the same round. The tracers run
 * on TRACER_CPU. In the last round, extra windows time jitrace's sched_switch program with
 * BPF_ENABLE_STATS.
 *
 * Usage: bench_offcpu [JITRACE [ROUNDS [WINDOW_MS [WORKLOADS [JITRACE2]]]]], from the source
 * tree's top (run.sh passes OUT/jitrace); JITRACE defaults to the one beside this program's
 * directory (OUT/bench/../jitrace); ROUNDS 5, WINDOW_MS 2000; WORKLOADS is a comma list of
 * pingpong, handoff, java, node (all); JITRACE2, another build of jitrace (say, one before a
 * change to the sched_switch program), adds its `--off-cpu -p PID` to the ping-pong's and
 * the handoff's rounds, side by side with JITRACE's. The ping-pong alone, by hand:
 * bench_offcpu --pingpong WARM_MS WINDOW_MS, then a line on stdin a window ("count
 * ROUND_TRIPS ns NS" back).
 */
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "log/source.h"
#include "base/util.h"

#define JAVA_HOME "/usr/lib/jvm/java-17-openjdk-amd64"
#define PERF "perf"
#define BCC_OFFCPU "offcputime-bpfcc"
#define WORKLOADS "bench/workloads"
#define WORK_CPU 1		/* the measured workload's CPU */
#define TRACER_CPU 0		/* the tracers, this program, the second ping-pong */
#define PP_WARM_MS 500
#define RT_WARM_MS 2500		/* Java and Node */
#define SETTLE_MS 300		/* from a tracer's "recording" to the window */
#define PERF_START_MS 1000	/* perf says nothing once attached: it is by then */
#define MAX_ROUNDS 15
#define BATCH 64		/* round trips between two reads of the clock */

/* ---- the ping-pong workload (bench_offcpu --pingpong) ---- */

static int ping_fd[2], pong_fd[2];

static void *pong(void *arg)
{
	char c;

	(void)arg;
	prctl(PR_SET_NAME, "pong");
	while (read(ping_fd[0], &c, 1) == 1 && write(pong_fd[1], &c, 1) == 1)
		;
	return NULL;
}

/* Round trips until end (ns); -1 if a pipe broke. */
static long ping(uint64_t end)
{
	long n = 0;
	char c = 0;
	int i;

	do {
		for (i = 0; i < BATCH; i++)
			if (write(ping_fd[1], &c, 1) != 1 || read(pong_fd[0], &c, 1) != 1)
				return -1;
		n += BATCH;
	} while (jt_now_ns() < end);
	return n;
}

static int pingpong_main(int argc, char **argv)
{
	char line[64];
	pthread_t t;
	uint64_t warm, win, t0, t1;
	long n;

	if (argc < 4) {
		fprintf(stderr, "usage: bench_offcpu --pingpong WARM_MS WINDOW_MS\n");
		return 2;
	}
	warm = strtoull(argv[2], NULL, 10) * 1000000;
	win = strtoull(argv[3], NULL, 10) * 1000000;
	prctl(PR_SET_NAME, "pingpong");
	if (pipe2(ping_fd, O_CLOEXEC) || pipe2(pong_fd, O_CLOEXEC) ||
	    pthread_create(&t, NULL, pong, NULL)) {
		fprintf(stderr, "pingpong: %s\n", strerror(errno));
		return 1;
	}
	if (ping(jt_now_ns() + warm) < 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		t0 = jt_now_ns();
		n = ping(t0 + win);
		t1 = jt_now_ns();
		if (n < 0)
			return 1;
		printf("count %ld ns %llu\n", n, (unsigned long long)(t1 - t0));
		fflush(stdout);
	}
	return 0;
}

/* ---- conditions ---- */

enum tracer { T_NONE, T_JITRACE, T_PERF, T_BCC };

#define C_OFFCPU 1	/* --off-cpu */
#define C_ALL 2		/* -a, not -p PID */
#define C_OTHER 4	/* a second ping-pong runs, untraced, on TRACER_CPU */
#define C_STATS 8	/* the sched_switch program timed (last round, outside the rotation) */
#define C_IDLE 16	/* the measured ping-pong idles: only the second one runs */
#define C_ALT 32	/* the second jitrace build given (JITRACE2), to compare */

enum {
	K_NONE, K_JT, K_OFF, K_OFF_A, K_PERF, K_BCC, K_OFF_B, K_OFF100, K_OFF10K, K_NONE2,
	K_O_NONE, K_O_OFF, K_O_OFF_A, K_S_OFF, K_S_FILTER, K_S_O_OFF_A, NCOND
};

static const struct cond {
	const char *name;
	enum tracer t;
	unsigned int flags;
	const char *min_us;	/* --off-cpu-min, NULL: the default */
} conds[NCOND] = {
	[K_NONE] = { "untraced", T_NONE, 0, NULL },
	[K_JT] = { "`jitrace record -p PID` (samplers only)", T_JITRACE, 0, NULL },
	[K_OFF] = { "`jitrace record --off-cpu -p PID`", T_JITRACE, C_OFFCPU, NULL },
	[K_OFF_A] = { "`jitrace record --off-cpu -a`", T_JITRACE, C_OFFCPU | C_ALL, NULL },
	[K_PERF] = { "`perf record -e sched:sched_switch -g -p PID`", T_PERF, 0, NULL },
	[K_BCC] = { "`offcputime-bpfcc -p PID`", T_BCC, 0, NULL },
	[K_OFF_B] = { "`JITRACE2 record --off-cpu -p PID`", T_JITRACE, C_OFFCPU | C_ALT, NULL },
	[K_OFF100] = { "`jitrace record --off-cpu-min 100 -p PID`", T_JITRACE, C_OFFCPU, "100" },
	[K_OFF10K] = { "`jitrace record --off-cpu-min 10000 -p PID`", T_JITRACE, C_OFFCPU,
		       "10000" },
	[K_NONE2] = { "untraced", T_NONE, 0, NULL },
	[K_O_NONE] = { "untraced, second ping-pong running", T_NONE, C_OTHER, NULL },
	[K_O_OFF] = { "`--off-cpu -p PID`, second ping-pong running", T_JITRACE,
		      C_OFFCPU | C_OTHER, NULL },
	[K_O_OFF_A] = { "`--off-cpu -a`, second ping-pong running", T_JITRACE,
			C_OFFCPU | C_ALL | C_OTHER, NULL },
	[K_S_OFF] = { "`--off-cpu -p PID`", T_JITRACE, C_OFFCPU | C_STATS, NULL },
	[K_S_FILTER] = { "`--off-cpu -p PID`, PID idle, second ping-pong running", T_JITRACE,
			 C_OFFCPU | C_OTHER | C_STATS | C_IDLE, NULL },
	[K_S_O_OFF_A] = { "`--off-cpu -a`, second ping-pong running", T_JITRACE,
			  C_OFFCPU | C_ALL | C_OTHER | C_STATS, NULL },
};

/* What one window measured. */
struct win {
	bool ok;
	double units, ns;		/* round trips or work units, in ns */
	double sw;			/* the workload's context switches (all its threads) */
	double other_units, other_ns, other_sw;
	int threads;
	double cpu_s, wall_s;		/* the tracer's user + system time, its life */
	double win_cpu_s;		/* the tracer's user + system time in the window */
	double bytes;			/* its log, or perf.data */
	double recs_all;		/* off-CPU records in the log */
	double recs, stacks;		/* the workload's, in the window; those with a stack */
	double raw;			/* their bytes as records, before compression */
	double off_s;			/* the time they stand for */
	double prog_ns, prog_runs;	/* C_STATS: the sched_switch program */
	bool lost;			/* the tracer said it lost events */
	char lost_line[160];		/* what it said */
};

enum { W_PP, W_HAND, W_JAVA, W_NODE, NWORK };

struct workload {
	const char *name;
	const char *key;		/* its name in the WORKLOADS argument */
	bool switchy;			/* timed a round trip (ping-pong, handoff), not throughput */
	char *argv[12];
	const int *order;		/* the conditions of a round, NULL ended... */
	int n;				/* ...n of them */
	const int *timed;		/* last round's timed windows */
	int ntimed;
	bool on;
	const char *skipped;
	int rounds;
	struct win w[NCOND][MAX_ROUNDS];
	bool lost[NCOND];
};

static const int pp_order[] = { K_NONE,	  K_OFF,    K_PERF,   K_JT,	K_OFF_A,  K_O_NONE,
				K_O_OFF,  K_OFF100, K_BCC,    K_NONE2,	K_O_OFF_A, K_OFF10K,
				K_OFF_B };
static const int pp_timed[] = { K_S_OFF, K_S_FILTER, K_S_O_OFF_A };
static const int hand_order[] = { K_NONE, K_OFF, K_PERF, K_JT, K_OFF_A, K_OFF100, K_NONE2,
				  K_OFF10K, K_OFF_B };
static const int rt_order[] = { K_NONE, K_OFF, K_JT, K_OFF100, K_OFF_A, K_NONE2, K_OFF10K };
static const int rt_timed[] = { K_S_OFF };

struct bench {
	const char *jitrace;
	const char *jitrace2;		/* another build, to compare (NULL: none) */
	char self[PATH_MAX];
	char tmp[64];
	int rounds;
	unsigned int window_ms;
	bool bcc_ok;
	char bcc_msg[512];		/* why offcputime-bpfcc does not run */
	char perf_msg[512];		/* what perf says of --off-cpu */
	bool kprobes;
	struct workload wl[NWORK];
};

/* ---- processes ---- */

struct child {
	pid_t pid;
	int to, from;			/* its stdin, its stdout */
	size_t len;
	char buf[4096];
};

/* setsid, autogroup and nice -20: other work on the host does not take the workload's CPU */
static void boost(void)
{
	int fd;

	setsid();
	fd = open("/proc/self/autogroup", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "-20", 3) != 3)
			perror("bench_offcpu: autogroup");
		close(fd);
	}
	if (setpriority(PRIO_PROCESS, 0, -20))
		perror("bench_offcpu: nice -20");
}

/*
 * Start argv on cpu. With c: its stdin and stdout are pipes in c; else its stdout and stderr
 * go to the files out and err. Exits if it cannot fork.
 */
static pid_t start(char *const argv[], int cpu, bool boosted, struct child *c, const char *out,
		   const char *err)
{
	int in[2] = { -1, -1 }, op[2] = { -1, -1 };
	pid_t pid;

	if (c && (pipe2(in, O_CLOEXEC) || pipe2(op, O_CLOEXEC))) {
		perror("bench_offcpu: pipe");
		exit(1);
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		perror("bench_offcpu: fork");
		exit(1);
	}
	if (pid == 0) {
		if (boosted)
			boost();
		bench_pin(cpu);
		if (c) {
			dup2(in[0], 0);
			dup2(op[1], 1);
		} else if (!freopen("/dev/null", "r", stdin) || !freopen(out, "w", stdout) ||
			   !freopen(err, "w", stderr)) {
			_exit(127);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "bench_offcpu: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (c) {
		close(in[0]);
		close(op[1]);
		*c = (struct child){ .pid = pid, .to = in[1], .from = op[0] };
	}
	return pid;
}

/* The child's next line (no newline) into out: 1, or 0 at EOF or after timeout_ms. */
static int next_line(struct child *c, char *out, size_t size, int timeout_ms)
{
	uint64_t end = jt_now_ns() + (uint64_t)timeout_ms * 1000000;
	char *nl;
	ssize_t n;

	while (!(nl = memchr(c->buf, '\n', c->len))) {
		struct pollfd p = { .fd = c->from, .events = POLLIN };
		int64_t left = (int64_t)(end - jt_now_ns()) / 1000000;

		if (c->len == sizeof(c->buf))
			c->len = 0;	/* an overlong line: dropped */
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return 0;
		n = read(c->from, c->buf + c->len, sizeof(c->buf) - c->len);
		if (n <= 0)
			return 0;
		c->len += n;
	}
	snprintf(out, size, "%.*s", (int)(nl - c->buf), c->buf);
	c->len -= nl + 1 - c->buf;
	memmove(c->buf, nl + 1, c->len);
	return 1;
}

/* Wait for pid up to timeout_s (then SIGKILL); 0 if it exited 0 or by SIGINT. */
static int finish(pid_t pid, int timeout_s, struct rusage *ru)
{
	uint64_t end = jt_now_ns() + (uint64_t)timeout_s * 1000000000;
	struct rusage dummy;
	int st = 0;
	pid_t r;

	while ((r = wait4(pid, &st, WNOHANG, ru ? ru : &dummy)) == 0) {
		if (jt_now_ns() > end) {
			fprintf(stderr, "bench_offcpu: pid %d did not stop: killed\n", pid);
			kill(pid, SIGKILL);
			wait4(pid, &st, 0, ru ? ru : &dummy);
			return -1;
		}
		usleep(10000);
	}
	if (r < 0)
		return -1;
	return (WIFEXITED(st) && !WEXITSTATUS(st)) || (WIFSIGNALED(st) && WTERMSIG(st) == SIGINT) ?
		       0 : -1;
}

static void end_child(struct child *c)
{
	if (!c->pid)
		return;
	close(c->to);		/* EOF: it exits */
	if (finish(c->pid, 20, NULL))
		fprintf(stderr, "bench_offcpu: workload %d exited badly\n", c->pid);
	close(c->from);
	c->pid = 0;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Poll the file at path for text for up to timeout_ms while pid lives; whether found. */
static bool await_text(const char *path, const char *text, pid_t pid, int timeout_ms)
{
	int i;

	for (i = 0; i < timeout_ms / 20; i++) {
		if (bench_file_has(path, text))
			return true;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return false;
		sleep_ms(20);
	}
	return false;
}

/* Context switches of every thread of pid, and its number of threads. */
static double switches(pid_t pid, int *threads)
{
	char path[64], line[128];
	struct dirent *de;
	double n = 0, v;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	if (!d)
		return 0;
	if (threads)
		*threads = 0;
	while ((de = readdir(d))) {
		FILE *f;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/status", pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "voluntary_ctxt_switches: %lf", &v) == 1 ||
			    sscanf(line, "nonvoluntary_ctxt_switches: %lf", &v) == 1)
				n += v;
		fclose(f);
		if (threads)
			(*threads)++;
	}
	closedir(d);
	return n;
}

/* User + system time of every thread of pid so far, in s (/proc/PID/stat). */
static double cpu_time(pid_t pid)
{
	unsigned long long ut = 0, st = 0;
	char path[64], buf[1024], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	p = strrchr(buf, ')');	/* the comm may hold anything */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
			 &st) != 2)
		return 0;
	return (double)(ut + st) / sysconf(_SC_CLK_TCK);
}

/* ---- jitrace's sched_switch program, timed ---- */

/* The id of tracer pid's program named jt_switch, or 0. */
static __u32 switch_prog(pid_t pid)
{
	char path[300], line[128];
	struct dirent *de;
	__u32 found = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo", pid);
	d = opendir(path);
	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info), id = 0;
		FILE *f;
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/fdinfo/%.200s", pid, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			sscanf(line, "prog_id: %u", &id);
		fclose(f);
		if (!id || (fd = bpf_prog_get_fd_by_id(id)) < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, "jt_switch"))
			found = id;
		close(fd);
	}
	closedir(d);
	return found;
}

/* Its run count and time so far; 0 or -1. */
static int prog_stats(__u32 id, double *runs, double *ns)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = bpf_prog_get_fd_by_id(id), err;

	if (fd < 0)
		return -1;
	err = bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	*runs = info.run_cnt;
	*ns = info.run_time_ns;
	return err ? -1 : 0;
}

/* ---- one window ---- */

/* The first line of the file at path that has text (up to " [" or its end). */
static void line_with(const char *path, const char *text, char *out, size_t size)
{
	char line[1024], *p = line, *cut;
	FILE *f = fopen(path, "r");

	out[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, text))
			continue;
		line[strcspn(line, "\n")] = 0;
		if ((cut = strstr(line, " [ ")))	/* perf's "[ perf record: ...]" follows it */
			*cut = 0;
		while (*p == ' ')
			p++;
		snprintf(out, size, "%.*s", (int)strnlen(p, size - 1), p);
		break;
	}
	fclose(f);
}


/* Count the log's off-CPU records: all, and the workload's between t0 and t1. */
static int read_log(const char *path, pid_t pid, uint64_t t0, uint64_t t1, struct win *w)
{
	const struct jt_rec_hdr *rec;
	struct jt_logsrc s;
	int err;

	if (jt_logsrc__open(&s, path, NULL))
		return -1;
	while ((rec = jt_logsrc__next(&s, NULL))) {
		const struct jt_rec_offcpu *o = (const void *)rec;

		if (rec->type != JT_REC_OFFCPU)
			continue;
		w->recs_all++;
		if (o->smp.pid != (__u32)pid || rec->ts < t0 || rec->ts > t1)
			continue;
		w->recs++;
		w->raw += rec->size;
		w->stacks += o->state != JT_OFF_SHORT;
		w->off_s += o->off_ns / 1e9;
	}
	err = jt_logsrc__finish(&s, "counted");
	jt_logsrc__close(&s);
	return err;
}

static double file_size(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (double)st.st_size;
}

/* Parse "count N" and, from the ping-pong, " ns NS"; 0 or -1. */
static int parse_count(const char *line, double window_ns, double *units, double *ns)
{
	unsigned long long d;
	long n;

	if (sscanf(line, "count %ld ns %llu", &n, &d) == 2)
		*ns = d;
	else if (sscanf(line, "count %ld", &n) == 1)
		*ns = window_ns;
	else
		return -1;
	*units = n;
	return 0;
}

/*
 * One window of workload wl (and of other, if the condition has one) under condition k.
 * 0 on success.
 */
static int window(struct bench *b, struct workload *wl, struct child *c, struct child *other,
		  int k, struct win *w)
{
	const struct cond *cd = &conds[k];
	char out[128], err[128], log[128], pidstr[16], line[256];
	char *argv[24];
	double runs0 = 0, ns0 = 0, runs1 = 0, ns1 = 0, sw0, osw0 = 0, cpu0 = 0;
	int a = 0, stats_fd = -1, rc = 0;
	uint64_t born = jt_now_ns(), t0, t1;
	__u32 prog = 0;
	struct rusage ru;
	pid_t tp = 0;

	memset(w, 0, sizeof(*w));
	snprintf(pidstr, sizeof(pidstr), "%d", c->pid);	/* -p: the measured one, idle or not */
	if (cd->flags & C_IDLE) {	/* the second one is measured instead */
		c = other;
		other = NULL;
	}
	snprintf(out, sizeof(out), "%s/tracer.out", b->tmp);
	snprintf(err, sizeof(err), "%s/tracer.err", b->tmp);
	snprintf(log, sizeof(log), "%s/%s", b->tmp, cd->t == T_PERF ? "perf.data" : "off.jtl");
	switch (cd->t) {
	case T_JITRACE:
		argv[a++] = (char *)(cd->flags & C_ALT ? b->jitrace2 : b->jitrace);
		argv[a++] = "record";
		if (cd->min_us) {
			argv[a++] = "--off-cpu-min";
			argv[a++] = (char *)cd->min_us;
		} else if (cd->flags & C_OFFCPU) {
			argv[a++] = "--off-cpu";
		}
		argv[a++] = cd->flags & C_ALL ? "-a" : "-p";
		if (!(cd->flags & C_ALL))
			argv[a++] = pidstr;
		argv[a++] = "-f";
		argv[a++] = "-o";
		argv[a++] = log;
		break;
	case T_PERF:
		argv[a++] = PERF;
		argv[a++] = "record";
		argv[a++] = "-N";	/* no build-id cache in ~/.debug */
		argv[a++] = "-e";
		argv[a++] = "sched:sched_switch";
		argv[a++] = "-g";
		argv[a++] = "-p";
		argv[a++] = pidstr;
		argv[a++] = "-o";
		argv[a++] = log;
		break;
	case T_BCC:
		argv[a++] = BCC_OFFCPU;
		argv[a++] = "-p";
		argv[a++] = pidstr;
		break;
	case T_NONE:
		break;
	}
	argv[a] = NULL;
	if (a) {
		if (cd->t == T_BCC)
			setenv("PYTHONUNBUFFERED", "1", 1);	/* "Tracing" reaches the file */
		tp = start(argv, TRACER_CPU, false, NULL, out, err);
		unsetenv("PYTHONUNBUFFERED");
		if (cd->t == T_JITRACE && !await_text(err, "jitrace: recording", tp, 60000))
			rc = -1;
		else if (cd->t == T_BCC && !await_text(out, "Tracing", tp, 120000))
			rc = -1;
		else if (cd->t == T_PERF)
			sleep_ms(PERF_START_MS);
	}
	sleep_ms(SETTLE_MS);
	if (!rc && (cd->flags & C_STATS)) {
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		prog = switch_prog(tp);
		if (stats_fd < 0 || !prog || prog_stats(prog, &runs0, &ns0))
			fprintf(stderr, "bench_offcpu: cannot time jt_switch (%s)\n",
				stats_fd < 0 ? strerror(errno) : "not found");
	}
	sw0 = switches(c->pid, NULL);
	if (other)
		osw0 = switches(other->pid, NULL);
	if (tp)
		cpu0 = cpu_time(tp);
	t0 = jt_now_ns();
	if (!rc && (write(c->to, "go\n", 3) != 3 || (other && write(other->to, "go\n", 3) != 3)))
		rc = -1;
	if (!rc && (!next_line(c, line, sizeof(line), b->window_ms + 60000) ||
		    parse_count(line, wl == &b->wl[W_PP] ? 0 : b->window_ms * 1e6, &w->units,
				&w->ns)))
		rc = -1;
	if (!rc && other &&
	    (!next_line(other, line, sizeof(line), b->window_ms + 60000) ||
	     parse_count(line, 0, &w->other_units, &w->other_ns)))
		rc = -1;
	t1 = jt_now_ns();
	if (tp)
		w->win_cpu_s = cpu_time(tp) - cpu0;
	w->sw = switches(c->pid, &w->threads) - sw0;
	if (other)
		w->other_sw = switches(other->pid, NULL) - osw0;
	if (prog && !prog_stats(prog, &runs1, &ns1) && runs1 > runs0) {
		w->prog_runs = runs1 - runs0;
		w->prog_ns = (ns1 - ns0) / (runs1 - runs0);
	}
	if (stats_fd >= 0)
		close(stats_fd);
	if (tp) {
		kill(tp, SIGINT);
		if (finish(tp, 120, &ru))
			rc = -1;
		w->wall_s = (jt_now_ns() - born) / 1e9;
		w->cpu_s = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
			   ru.ru_stime.tv_usec / 1e6;
		w->lost = bench_file_has(err, "lost");
		if (w->lost)
			line_with(err, "lost", w->lost_line, sizeof(w->lost_line));
		if (rc) {
			fprintf(stderr, "bench_offcpu: %s failed; it said:\n", cd->name);
			bench_cat_stderr(err);
		}
	}
	if (!rc && (cd->t == T_JITRACE || cd->t == T_PERF))
		w->bytes = file_size(log);
	if (!rc && cd->t == T_JITRACE && (cd->flags & C_OFFCPU) &&
	    read_log(log, c->pid, t0, t1, w))
		rc = -1;
	unlink(log);
	unlink(out);
	unlink(err);
	w->ok = !rc && w->units > 0;
	return w->ok ? 0 : -1;
}

/* ---- rounds ---- */

static void report_window(const struct workload *wl, int r, int k, const struct win *w)
{
	fprintf(stderr, "bench_offcpu: round %d %s, %s: %.0f units in %.0f ms (%.1f ns each), "
		"%.0f switches", r + 1, wl->name, conds[k].name, w->units, w->ns / 1e6,
		w->ns / w->units, w->sw);
	if (conds[k].flags & C_OTHER)
		fprintf(stderr, "; second: %.1f ns each", w->other_ns / w->other_units);
	if (w->wall_s)
		fprintf(stderr, "; tracer %.2f s CPU (%.2f s in the window), %.0f kB, %.0f off-CPU "
			"records (%.0f stacks) in the window%s%s", w->cpu_s, w->win_cpu_s,
			w->bytes / 1e3, w->recs, w->stacks,
			w->lost ? "; it said: " : "", w->lost_line);
	if (w->prog_runs)
		fprintf(stderr, "; jt_switch %.0f runs, %.0f ns a run", w->prog_runs, w->prog_ns);
	fprintf(stderr, "\n");
}

static int round_of(struct bench *b, struct workload *wl, int r)
{
	struct child c = { 0 }, other = { 0 };
	char line[256] = "";
	int i, rc = -1, warm = wl == &b->wl[W_PP] ? PP_WARM_MS : RT_WARM_MS;
	struct win w;

	start(wl->argv, WORK_CPU, true, &c, NULL, NULL);
	if (!next_line(&c, line, sizeof(line), warm + 60000) || strcmp(line, "ready")) {
		fprintf(stderr, "bench_offcpu: %s did not start (\"%s\")\n", wl->name, line);
		goto out;
	}
	if (wl == &b->wl[W_PP]) {	/* the second ping-pong: on the other CPU, as boosted */
		start(wl->argv, TRACER_CPU, true, &other, NULL, NULL);
		if (!next_line(&other, line, sizeof(line), warm + 60000) || strcmp(line, "ready")) {
			fprintf(stderr, "bench_offcpu: the second ping-pong did not start\n");
			goto out;
		}
	}
	for (i = 0; i < wl->n + (r == b->rounds - 1 ? wl->ntimed : 0); i++) {
		int k = i < wl->n ? wl->order[(i + r) % wl->n] : wl->timed[i - wl->n];

		if ((k == K_BCC && !b->bcc_ok) || (k == K_OFF_B && !b->jitrace2))
			continue;
		if (window(b, wl, &c, conds[k].flags & C_OTHER ? &other : NULL, k, &w))
			goto out;
		report_window(wl, r, k, &w);
		wl->w[k][r] = w;
		wl->lost[k] |= w.lost;
	}
	wl->rounds = r + 1;
	rc = 0;
out:
	snprintf(line, sizeof(line), "/tmp/perf-%d.map", c.pid);	/* node's, once it exits */
	end_child(&c);
	end_child(&other);
	if (wl == &b->wl[W_NODE])
		unlink(line);
	return rc;
}

/* ---- figures ---- */

/* The untraced reference of round r: the mean of its two untraced windows, in ns a unit. */
static double ref_ns(const struct workload *wl, int r)
{
	const struct win *a = &wl->w[K_NONE][r], *b = &wl->w[K_NONE2][r];

	return (a->ns / a->units + b->ns / b->units) / 2;
}

static double per_unit(const struct win *w)
{
	return w->ns / w->units;
}

/* Switches of the workload per unit (per round trip). */
static double sw_per_unit(const struct win *w)
{
	return w->sw / w->units;
}

enum fig { F_NS, F_RATIO, F_COST, F_SW, F_O_RATIO, F_O_COST, F_OTHER_COST, F_TPUT, F_LOSS,
	   F_SWS, F_RECS, F_STACKS, F_BYTES, F_MBH, F_CPU, F_DATA, F_PROG, F_RUNS, F_THREADS, F_OTHER_NS, F_RAW };

/* Figure f of condition k in round r; k's untraced reference is K_O_NONE for C_OTHER. */
static double fig(const struct workload *wl, int k, int r, enum fig f)
{
	const struct win *w = &wl->w[k][r], *o = &wl->w[K_O_NONE][r], *base = &wl->w[K_JT][r];
	double ref = ref_ns(wl, r), win_s = w->ns / 1e9;

	switch (f) {
	case F_NS:
		return per_unit(w);
	case F_RATIO:
		return per_unit(w) / ref;
	case F_COST:		/* ns a switch, over the untraced run */
		return (per_unit(w) - ref) / sw_per_unit(w);
	case F_SW:
		return sw_per_unit(w);
	case F_O_RATIO:
		return per_unit(w) / per_unit(o);
	case F_O_COST:
		return (per_unit(w) - per_unit(o)) / sw_per_unit(w);
	case F_OTHER_COST:	/* the second ping-pong's, over its own untraced window */
		return (w->other_ns / w->other_units - o->other_ns / o->other_units) /
		       (w->other_sw / w->other_units);
	case F_TPUT:
		return w->units / win_s;
	case F_LOSS:
		return 100 * (1 - ref / per_unit(w));
	case F_SWS:
		return w->sw / win_s;
	case F_RECS:
		return w->recs / win_s;
	case F_STACKS:
		return w->stacks / win_s;
	case F_BYTES:		/* log bytes a second of window its off-CPU records make */
		return w->recs_all ? (w->bytes - base->bytes) / w->recs_all * w->recs / win_s : 0;
	case F_MBH:
		return fig(wl, k, r, F_BYTES) * 3600 / 1e6;
	case F_CPU:
		return 100 * w->win_cpu_s / win_s;
	case F_DATA:
		return w->bytes / 1e6 / win_s;
	case F_PROG:
		return w->prog_ns;
	case F_RUNS:
		return w->prog_runs / win_s;
	case F_THREADS:
		return w->threads;
	case F_OTHER_NS:
		return w->other_ns / w->other_units;
	case F_RAW:
		return w->raw / win_s;
	}
	return 0;
}

/* Figure f of condition k in each round that was measured, into v; how many. */
static int values(const struct workload *wl, int k, enum fig f, double *v)
{
	int r, n = 0;

	for (r = 0; r < wl->rounds; r++)
		if (wl->w[k][r].ok)
			v[n++] = fig(wl, k, r, f);
	return n;
}

/* A row of figure f of condition k over the rounds, the median into *med. */
static void row(const struct workload *wl, int k, enum fig f, const char *what, const char *fmt,
		const char *unit, double *med)
{
	double v[MAX_ROUNDS];
	int n = values(wl, k, f, v);

	if (!n)
		return;
	bench_row(what, "", fmt, unit, v, n, "");
	if (med)
		*med = v[n / 2];
}

/* The median of figure f of condition k over the rounds (0 if none). */
static double median(const struct workload *wl, int k, enum fig f)
{
	double v[MAX_ROUNDS];
	int n = values(wl, k, f, v);

	if (!n)
		return 0;
	bench_sort(v, n);
	return v[n / 2];
}

static void row_untraced(const struct workload *wl, bool ns, const char *what)
{
	double v[2 * MAX_ROUNDS];
	int r, n = 0;

	for (r = 0; r < wl->rounds; r++) {
		v[n++] = ns ? per_unit(&wl->w[K_NONE][r]) : fig(wl, K_NONE, r, F_TPUT) / 1e3;
		v[n++] = ns ? per_unit(&wl->w[K_NONE2][r]) : fig(wl, K_NONE2, r, F_TPUT) / 1e3;
	}
	bench_row(what, "", ns ? "%.0f" : "%.1f", ns ? " ns" : "", v, n, "");
}

static const char *short_name(int k)
{
	switch (k) {
	case K_JT: return "jitrace -p (samplers only)";
	case K_OFF: return "jitrace --off-cpu -p";
	case K_OFF_A: return "jitrace --off-cpu -a";
	case K_PERF: return "perf sched_switch -g -p";
	case K_BCC: return "offcputime-bpfcc -p";
	case K_OFF_B: return "JITRACE2 --off-cpu -p";
	case K_OFF100: return "jitrace --off-cpu-min 100 -p";
	case K_OFF10K: return "jitrace --off-cpu-min 10000 -p";
	case K_O_OFF: return "jitrace --off-cpu -p, second ping-pong running";
	case K_S_FILTER: return "jitrace --off-cpu -p, PID idle, second ping-pong running "
				"(every run filtered out)";
	case K_O_OFF_A: case K_S_O_OFF_A: return "jitrace --off-cpu -a, second ping-pong running";
	case K_S_OFF: return "jitrace --off-cpu -p";
	}
	return conds[k].name;
}

/* The cost a switch of a switch-heavy workload (ping-pong, handoff): ns a round trip. */
static void report_switches(struct bench *b, struct workload *wl, const char *title)
{
	static const int traced[] = { K_JT, K_OFF, K_OFF_A, K_OFF_B, K_PERF, K_BCC };
	char what[160];
	size_t i;

	printf("\n**%s** (%d rounds)\n\n", title, wl->rounds);
	bench_table_head();
	row_untraced(wl, true, "ns a round trip, untraced");
	row(wl, K_NONE, F_SW, "switches a round trip, untraced", "%.2f", "", NULL);
	for (i = 0; i < sizeof(traced) / sizeof(traced[0]); i++) {
		int k = traced[i];

		if ((k == K_BCC && !b->bcc_ok) || (k == K_OFF_B && !b->jitrace2))
			continue;
		snprintf(what, sizeof(what), "ns a round trip, %s", conds[k].name);
		row(wl, k, F_NS, what, "%.0f", " ns", NULL);
		snprintf(what, sizeof(what), "**ratio to untraced, %s**", short_name(k));
		row(wl, k, F_RATIO, what, "%.2f", "x", NULL);
		snprintf(what, sizeof(what), "**cost a switch, %s**", short_name(k));
		row(wl, k, F_COST, what, "%.0f", " ns", NULL);
	}
	row(wl, K_PERF, F_DATA, "perf.data written a second of window", "%.1f", " MB/s", NULL);
	if (wl->lost[K_PERF])
		printf("\nperf said it lost events (its ring buffer overflowed) in some windows: "
		       "it recorded fewer switches than there were, having paid for each.\n");
	for (i = 0; i < sizeof(traced) / sizeof(traced[0]); i++)
		if (traced[i] != K_PERF && wl->lost[traced[i]])
			printf("\n%s said it lost events in some windows (what, on stderr).\n",
			       conds[traced[i]].name);
}

static void report_pingpong(struct bench *b, struct workload *pp, struct workload *hand)
{
	struct workload *wl = pp;
	double cost_p, cost_o = 0, oc_p = 0, oc_a = 0;

	printf("\n### Cost per context switch\n\n");
	printf("ns a round trip in %.1f s windows; a ratio is a window's ns a round trip over "
	       "the mean of the same round's two untraced windows; the cost a switch is "
	       "(traced - untraced) ns a round trip over the traced window's own switches a "
	       "round trip (all the process's threads, /proc/PID/task/*/status, voluntary and "
	       "not). The ping-pong (bench_offcpu --pingpong) passes a byte between two threads "
	       "through two pipes, both threads on one CPU (its stacks at a switch are 2 and 3 "
	       "frames: libc's read or write, then the program); the Java handoff "
	       "(bench/workloads/Handoff.java, `java -XX:+PreserveFramePointer "
	       "-XX:-UsePerfData`) hands a turn between two threads with "
	       "LockSupport.park/unpark, each parking 24 JIT frames down. Their waits are "
	       "shorter than --off-cpu-min, so no stack is taken: the cost here is what every "
	       "switch of a traced thread pays, and a recorded wait's stacks cost more, once "
	       "a wait of a millisecond or more.\n",
	       b->window_ms / 1e3);
	if (pp->rounds)
		report_switches(b, pp, "ping-pong");
	if (hand->rounds)
		report_switches(b, hand, "Java handoff");
	if (!b->bcc_ok)
		printf("\n`offcputime-bpfcc -p PID` (Debian's bpfcc-tools 0.26) is not in the "
		       "table: it does not run here. It said: `%s`%s\n",
		       b->bcc_msg,
		       b->kprobes ? "" :
		       " Even with kernel headers it could not: it attaches a kprobe to "
		       "finish_task_switch, and this kernel has no kprobes (no kprobe_events in "
		       "tracefs).");
	if (!pp->rounds)
		return;
	cost_p = median(pp, K_OFF, F_COST);

	printf("\n### The pid filter: a second, untraced ping-pong on the other CPU\n\n");
	printf("A second ping-pong process, not traced, runs on the other CPU (%d, the "
	       "tracer's), boosted as the measured one is, through the same windows. Each ratio "
	       "and cost here is against the same round's untraced window with the second "
	       "ping-pong running. With -p its switches only pass the pid filter; with -a they "
	       "take their stacks too. (On one CPU with a traced thread an untraced one would "
	       "also pay for part of the traced thread's work: the program runs in the context "
	       "of the thread leaving the CPU, so a switch from it to a traced thread does the "
	       "traced thread's return there.)\n\n", TRACER_CPU);
	bench_table_head();
	row(wl, K_O_NONE, F_NS, "ns a round trip, untraced, second ping-pong running", "%.0f",
	    " ns", NULL);
	row(wl, K_O_NONE, F_OTHER_NS, "the second ping-pong's ns a round trip, untraced", "%.0f",
	    " ns", NULL);
	row(wl, K_OFF, F_COST, "cost a switch, `--off-cpu -p PID`, alone (as above)", "%.0f",
	    " ns", NULL);
	row(wl, K_O_OFF, F_O_RATIO, "ratio, `--off-cpu -p PID`, second ping-pong running",
	    "%.2f", "x", NULL);
	row(wl, K_O_OFF, F_O_COST, "**cost a switch, `--off-cpu -p PID`, second ping-pong "
	    "running**", "%.0f", " ns", &cost_o);
	row(wl, K_O_OFF_A, F_O_RATIO, "ratio, `--off-cpu -a`, second ping-pong running", "%.2f",
	    "x", NULL);
	row(wl, K_O_OFF_A, F_O_COST, "cost a switch, `--off-cpu -a`, second ping-pong running",
	    "%.0f", " ns", NULL);
	row(wl, K_O_OFF, F_OTHER_COST, "**the second (untraced) ping-pong's cost a switch, "
	    "under `--off-cpu -p PID`**", "%.0f", " ns", &oc_p);
	row(wl, K_O_OFF_A, F_OTHER_COST, "the second ping-pong's cost a switch, under "
	    "`--off-cpu -a`", "%.0f", " ns", &oc_a);
	printf("\nWith another switch-heavy process running untraced, -p costs the traced "
	       "ping-pong %.0f ns a switch (%.0f ns alone), and the untraced process %.0f ns a "
	       "switch (the filter), against %.0f ns when -a takes its stacks too.\n",
	       cost_o, cost_p, oc_p, oc_a);
}

/* Rows of the runtimes' throughput table. */
static void report_runtime(struct workload *wl)
{
	static const int traced[] = { K_JT, K_OFF, K_OFF_A };
	char what[160];
	size_t i;

	printf("\n**%s** (%d rounds; throughput in thousands of work units a second; loss in %% "
	       "of the same round's untraced throughput)\n\n", wl->name, wl->rounds);
	bench_table_head();
	row_untraced(wl, false, "throughput, untraced");
	for (i = 0; i < sizeof(traced) / sizeof(traced[0]); i++) {
		int k = traced[i], r;
		double v[MAX_ROUNDS];

		for (r = 0; r < wl->rounds; r++)
			v[r] = fig(wl, k, r, F_TPUT) / 1e3;
		snprintf(what, sizeof(what), "throughput, %s", conds[k].name);
		bench_row(what, "", "%.1f", "", v, wl->rounds, "");
		snprintf(what, sizeof(what), "**loss, %s**", short_name(k));
		row(wl, k, F_LOSS, what, "%.2f", "%", NULL);
	}
	row(wl, K_NONE, F_SWS, "context switches a second (all the process's threads), untraced",
	    "%.0f", "", NULL);
	row(wl, K_OFF, F_SWS, "context switches a second, `--off-cpu -p PID`", "%.0f", "", NULL);
	row(wl, K_OFF, F_RECS, "off-CPU records a second, `--off-cpu -p PID`", "%.0f", "", NULL);
}

static void report_thresholds(struct bench *b)
{
	static const int ks[] = { K_OFF100, K_OFF, K_OFF10K };
	static const char *const us[] = { "100", "1000", "10000" };
	char what[200];
	int i, j;

	printf("\n### Records and log size by --off-cpu-min\n\n");
	printf("`jitrace record --off-cpu-min US -p PID` (1000 is the default) on each workload. "
	       "Records a second: the workload's off-CPU records in the log timed within the "
	       "window, over its length; \"with a stack\" are single waits of US or more, the "
	       "rest sums of shorter waits (no stack). Record bytes: the size of those records "
	       "as the log holds them, before its compression. Log bytes a second: what the "
	       "window's off-CPU records add to the compressed log, (log - the same round's log "
	       "without --off-cpu) / the log's off-CPU records x the window's records / the "
	       "window (where records are few, the two logs' other contents differ by more than "
	       "the records weigh, and this can fall below 0); an hour of it in MB. The recorder's CPU is its user + system time (all its threads, "
	       "/proc/PID/stat, in 10 ms ticks) in the window, over the window. One thread "
	       "makes at most 1e6 / US records a second.\n\n");
	bench_table_head();
	for (i = 0; i < NWORK; i++) {
		struct workload *wl = &b->wl[i];

		if (!wl->rounds)
			continue;
		for (j = 0; j < 3; j++) {
			snprintf(what, sizeof(what), "**%s, %s us: off-CPU records a second**",
				 wl->name, us[j]);
			row(wl, ks[j], F_RECS, what, "%.0f", "", NULL);
			snprintf(what, sizeof(what), "%s, %s us: records with a stack a second",
				 wl->name, us[j]);
			row(wl, ks[j], F_STACKS, what, "%.0f", "", NULL);
			snprintf(what, sizeof(what), "%s, %s us: record bytes a second, before "
				 "compression", wl->name, us[j]);
			row(wl, ks[j], F_RAW, what, "%.0f", " B/s", NULL);
			snprintf(what, sizeof(what), "%s, %s us: log bytes a second", wl->name,
				 us[j]);
			row(wl, ks[j], F_BYTES, what, "%.0f", " B/s", NULL);
			snprintf(what, sizeof(what), "%s, %s us: an hour of log", wl->name, us[j]);
			row(wl, ks[j], F_MBH, what, "%.1f", " MB", NULL);
			snprintf(what, sizeof(what), "%s, %s us: recorder CPU", wl->name, us[j]);
			row(wl, ks[j], F_CPU, what, "%.2f", "%", NULL);
			snprintf(what, sizeof(what), "%s, %s us: workload %s", wl->name, us[j],
				 wl->switchy ? "ratio to untraced" : "loss");
			row(wl, ks[j], wl->switchy ? F_RATIO : F_LOSS, what, "%.2f",
			    wl->switchy ? "x" : "%", NULL);
		}
		snprintf(what, sizeof(what), "%s, without --off-cpu: recorder CPU", wl->name);
		row(wl, K_JT, F_CPU, what, "%.2f", "%", NULL);
		snprintf(what, sizeof(what), "%s: threads of the workload", wl->name);
		row(wl, K_OFF, F_THREADS, what, "%.0f", "", NULL);
	}
	printf("\nMedians, --off-cpu-min 100 / 1000 / 10000 us:");
	for (i = 0; i < NWORK; i++) {
		struct workload *wl = &b->wl[i];

		if (!wl->rounds)
			continue;
		printf(" %s (%.0f threads, %.0f switches a second untraced), %.0f / %.0f / %.0f "
		       "records a second, %.1f / %.1f / %.1f MB of log an hour;", wl->name,
		       median(wl, K_OFF, F_THREADS), median(wl, K_NONE, F_SWS),
		       median(wl, K_OFF100, F_RECS), median(wl, K_OFF, F_RECS),
		       median(wl, K_OFF10K, F_RECS), median(wl, K_OFF100, F_MBH),
		       median(wl, K_OFF, F_MBH), median(wl, K_OFF10K, F_MBH));
	}
	printf(" what a thread cannot exceed: 10000 / 1000 / 100 records a second.\n");
	if (b->wl[W_PP].rounds) {
		const struct workload *pp = &b->wl[W_PP];
		double m100 = median(pp, K_OFF100, F_MBH), m1k = median(pp, K_OFF, F_MBH);
		double m10k = median(pp, K_OFF10K, F_MBH);

		printf("\nWhat this says of the default: the threshold bounds the log, not the "
		       "cost to the workload (a stack is taken at every switch-out whatever the "
		       "threshold: the ping-pong runs %.2fx / %.2fx / %.2fx slower at 100 / 1000 / "
		       "10000 us). A thread switching flat out makes about 1e6 / US records a "
		       "second: at 100 us the ping-pong's log grows %.1f times as fast as at 1000 "
		       "us (%.0f against %.0f MB an hour), and what it adds is sums of short waits "
		       "with no stack (%.0f stack records a second against %.0f); at 10000 us it "
		       "grows %.1f times slower (%.1f MB an hour) but waits of 1 to 10 ms, a lock "
		       "or an I/O, lose their stacks. CPU-bound JIT workloads make a few records a "
		       "second at any threshold.\n",
		       median(pp, K_OFF100, F_RATIO), median(pp, K_OFF, F_RATIO),
		       median(pp, K_OFF10K, F_RATIO), m1k > 0 ? m100 / m1k : 0, m100, m1k,
		       median(pp, K_OFF100, F_STACKS), median(pp, K_OFF, F_STACKS),
		       m10k > 0 ? m1k / m10k : 0, m10k);
	}
}

static void report_timed(struct bench *b)
{
	char what[200];
	int i, j;

	printf("\n### Where it goes: jitrace's sched_switch program, timed\n\n");
	printf("One extra window of each in the last round, with BPF_ENABLE_STATS on for it "
	       "alone (the kernel then times every run, which adds to the figures above if left "
	       "on): jitrace's jt_switch program's mean run time (tp_btf/sched_switch, every "
	       "switch of the host, both CPUs), and its runs a second.\n\n");
	bench_table_head();
	for (i = 0; i < NWORK; i++) {
		struct workload *wl = &b->wl[i];

		if (!wl->rounds || wl->rounds < b->rounds)
			continue;
		for (j = 0; j < wl->ntimed; j++) {
			int k = wl->timed[j];

			snprintf(what, sizeof(what), "%s, %s: ns a run", wl->name, short_name(k));
			row(wl, k, F_PROG, what, "%.0f", " ns", NULL);
			snprintf(what, sizeof(what), "%s, %s: runs a second", wl->name,
				 short_name(k));
			row(wl, k, F_RUNS, what, "%.0f", "", NULL);
		}
	}
}

/* ---- what perf and bcc say ---- */

static void probe_tools(struct bench *b)
{
	char out[128], err[128], data[128], pid[16], line[1024], last[512] = "";
	char *perf[] = { PERF, "record", "--off-cpu", "-o", data, "--", "true", NULL };
	char *bcc[] = { BCC_OFFCPU, "-p", pid, "1", NULL };
	FILE *f;
	int rc;

	snprintf(out, sizeof(out), "%s/probe.out", b->tmp);
	snprintf(err, sizeof(err), "%s/probe.err", b->tmp);
	snprintf(data, sizeof(data), "%s/probe.data", b->tmp);
	rc = bench_run(perf, out, err);
	line_with(err, "off-cpu", b->perf_msg, sizeof(b->perf_msg));
	if (!b->perf_msg[0])
		snprintf(b->perf_msg, sizeof(b->perf_msg), "(nothing said of --off-cpu; status %d)",
			 rc);
	unlink(data);

	b->kprobes = !access("/sys/kernel/tracing/kprobe_events", F_OK) ||
		     !access("/sys/kernel/debug/tracing/kprobe_events", F_OK);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("PYTHONUNBUFFERED", "1", 1);
	rc = bench_run(bcc, out, err);
	unsetenv("PYTHONUNBUFFERED");
	b->bcc_ok = !rc && bench_file_has(out, "Tracing");
	if (!b->bcc_ok && rc == 127 && bench_file_has(err, "cannot run")) {
		snprintf(b->bcc_msg, sizeof(b->bcc_msg), "%s: not installed (`scripts/deps.sh "
			 "bench` installs bpfcc-tools)", BCC_OFFCPU);
	} else if (!b->bcc_ok) {
		/* its first words that are its own (not a shell's, nor the traceback's head),
		 * on stdout or stderr, and the last on stderr (the exception) */
		const char *files[] = { out, err };
		int i;

		for (i = 0; i < 2; i++) {
			if (!(f = fopen(files[i], "r")))
				continue;
			while (fgets(line, sizeof(line), f)) {
				line[strcspn(line, "\n")] = 0;
				if (!line[0])
					continue;
				if (!b->bcc_msg[0] && strncmp(line, "sh: ", 4) &&
				    strncmp(line, "chdir(", 6) && strncmp(line, "Traceback", 9))
					snprintf(b->bcc_msg, sizeof(b->bcc_msg), "%.300s", line);
				if (i == 1)
					snprintf(last, sizeof(last), "%.200s", line);
			}
			fclose(f);
		}
		if (last[0] && strcmp(last, b->bcc_msg))
			snprintf(b->bcc_msg + strlen(b->bcc_msg), sizeof(b->bcc_msg) -
				 strlen(b->bcc_msg), "` ... `%s", last);
	}
	fprintf(stderr, "bench_offcpu: perf --off-cpu: %s\nbench_offcpu: %s: %s\n", b->perf_msg,
		BCC_OFFCPU, b->bcc_ok ? "runs" : b->bcc_msg);
	unlink(out);
	unlink(err);
}

/* ---- setup ---- */

static void set_argv(struct workload *wl, char *const *argv)
{
	int i;

	for (i = 0; i < 11 && argv[i]; i++)
		wl->argv[i] = argv[i];
	wl->argv[i] = NULL;
}

static void setup(struct bench *b, const char *which)
{
	static char win[16], ppwarm[16], rtwarm[16], js[PATH_MAX], src[PATH_MAX], src2[PATH_MAX];
	static char java_bin[] = JAVA_HOME "/bin/java", javac_bin[] = JAVA_HOME "/bin/javac";
	char out[128], err[128];
	char *pp[] = { b->self, "--pingpong", ppwarm, win, NULL };
	char *java[] = { java_bin, "-XX:+PreserveFramePointer", "-XX:-UsePerfData", "-cp",
			 b->tmp, "Work", rtwarm, win, NULL };
	char *node[] = { "node", "--perf-basic-prof", "--logfile=/dev/null", js, rtwarm, win,
			 NULL };
	char *hand[] = { java_bin, "-XX:+PreserveFramePointer", "-XX:-UsePerfData", "-cp",
			 b->tmp, "Handoff", rtwarm, win, NULL };
	char *javac[] = { javac_bin, "-d", b->tmp, src, src2, NULL };
	char *node_v[] = { "node", "--version", NULL };
	struct workload *wl = b->wl;
	int i;

	snprintf(win, sizeof(win), "%u", b->window_ms);
	snprintf(ppwarm, sizeof(ppwarm), "%d", PP_WARM_MS);
	snprintf(rtwarm, sizeof(rtwarm), "%d", RT_WARM_MS);
	snprintf(out, sizeof(out), "%s/setup.out", b->tmp);
	snprintf(err, sizeof(err), "%s/setup.err", b->tmp);
	wl[W_PP] = (struct workload){ .name = "ping-pong", .key = "pingpong", .switchy = true,
				      .order = pp_order,
				      .n = sizeof(pp_order) / sizeof(pp_order[0]),
				      .timed = pp_timed,
				      .ntimed = sizeof(pp_timed) / sizeof(pp_timed[0]) };
	wl[W_HAND] = (struct workload){ .name = "Java handoff", .key = "handoff",
					.switchy = true, .order = hand_order,
					.n = sizeof(hand_order) / sizeof(hand_order[0]),
					.timed = rt_timed, .ntimed = 1 };
	wl[W_JAVA] = (struct workload){ .name = "Java (HotSpot 17)", .key = "java",
					.order = rt_order,
					.n = sizeof(rt_order) / sizeof(rt_order[0]),
					.timed = rt_timed, .ntimed = 1 };
	wl[W_NODE] = (struct workload){ .name = "Node", .key = "node", .order = rt_order,
					.n = sizeof(rt_order) / sizeof(rt_order[0]),
					.timed = rt_timed, .ntimed = 1 };
	set_argv(&wl[W_PP], pp);
	set_argv(&wl[W_HAND], hand);
	set_argv(&wl[W_JAVA], java);
	set_argv(&wl[W_NODE], node);
	for (i = 0; i < NWORK; i++)
		wl[i].on = strstr(which, wl[i].key);
	if (wl[W_JAVA].on || wl[W_HAND].on) {
		const char *why = NULL;

		if (access(java_bin, X_OK) || access(javac_bin, X_OK))
			why = JAVA_HOME "/bin/java or javac is not installed";
		else if (!realpath(WORKLOADS "/Work.java", src) ||
			 !realpath(WORKLOADS "/Handoff.java", src2) || bench_run(javac, out, err))
			why = "javac of " WORKLOADS "/Work.java and Handoff.java failed";
		wl[W_JAVA].skipped = wl[W_HAND].skipped = why;
	}
	if (wl[W_NODE].on) {
		if (bench_run(node_v, out, err))
			wl[W_NODE].skipped = "node is not installed";
		else if (!realpath(WORKLOADS "/work.js", js))
			wl[W_NODE].skipped = WORKLOADS "/work.js is missing";
	}
	unlink(out);
	unlink(err);
}

int main(int argc, char **argv)
{
	static struct bench bench;
	struct bench *b = &bench;
	char *rm[] = { "rm", "-rf", b->tmp, NULL };
	const char *which = "pingpong,handoff,java,node";
	static char jt[PATH_MAX + 16];
	uint64_t t0 = jt_now_ns();
	int r, i;

	if (argc > 1 && !strcmp(argv[1], "--pingpong"))
		return pingpong_main(argc, argv);
	if (!realpath("/proc/self/exe", b->self)) {
		perror("bench_offcpu: /proc/self/exe");
		return 1;
	}
	if (argc > 1) {
		b->jitrace = argv[1];
	} else {	/* OUT/bench/bench_offcpu: OUT/jitrace */
		size_t dir = strrchr(b->self, '/') - b->self;

		snprintf(jt, sizeof(jt), "%.*s/../jitrace", (int)dir, b->self);
		b->jitrace = jt;
	}
	b->rounds = argc > 2 ? atoi(argv[2]) : 5;
	b->window_ms = argc > 3 ? (unsigned int)atoi(argv[3]) : 2000;
	if (argc > 4)
		which = argv[4];
	if (argc > 5)
		b->jitrace2 = argv[5];
	if (b->rounds < 1 || b->rounds > MAX_ROUNDS || b->window_ms < 200) {
		fprintf(stderr, "usage: bench_offcpu [JITRACE [ROUNDS (1 to %d) [WINDOW_MS (200 or "
			"more) [pingpong,handoff,java,node [JITRACE2]]]]]\n", MAX_ROUNDS);
		return 2;
	}
	for (i = 0; i < 2; i++) {
		const char *jt_path = i ? b->jitrace2 : b->jitrace;

		if (jt_path && access(jt_path, X_OK)) {
			fprintf(stderr, "bench_offcpu: %s: %s\n", jt_path, strerror(errno));
			return 1;
		}
	}
	if (geteuid()) {
		fprintf(stderr, "bench_offcpu: jitrace loads BPF programs: run as root\n");
		return 1;
	}
	snprintf(b->tmp, sizeof(b->tmp), "/tmp/bench_offcpu.XXXXXX");
	if (!mkdtemp(b->tmp)) {
		perror("bench_offcpu: mkdtemp");
		return 1;
	}
	bench_pin(TRACER_CPU);
	probe_tools(b);
	setup(b, which);

	for (r = 0; r < b->rounds; r++)
		for (i = 0; i < NWORK; i++) {
			struct workload *wl = &b->wl[(i + r) % NWORK];

			if (wl->on && !wl->skipped && round_of(b, wl, r))
				wl->on = false;	/* its rounds so far are reported */
		}

	printf("## Off-CPU recording (`record --off-cpu`): what it costs\n\n");
	printf("`jitrace record --off-cpu` attaches a program to sched:sched_switch (tp_btf): "
	       "on every context switch of the host it checks the pid filter, then for a "
	       "traced thread leaving the CPU keeps when and how it left in task storage and, "
	       "when the thread runs again, sends a record with its stacks if it was off for "
	       "--off-cpu-min (default 1000 us) or more (the user stack of a thread asleep in a "
	       "system call is taken as the call returns, at sys_exit), else adds the time to "
	       "a per-thread sum sent when it reaches the threshold. ");
	printf("Each round starts a fresh process per workload, pinned to CPU %d in its own "
	       "session at nice -20, and runs a window of %.1f s of each condition in it, in an "
	       "order rotated every round; the tracers run on CPU %d, started before the window "
	       "(jitrace until it says it is recording, then %d ms; perf %d ms) and stopped "
	       "with SIGINT after it. ",
	       WORK_CPU, b->window_ms / 1e3, TRACER_CPU, SETTLE_MS, PERF_START_MS + SETTLE_MS);
	printf("jitrace is `%s`%s%s%s. ", b->jitrace, b->jitrace2 ? "; JITRACE2, another build "
	       "compared with it, is `" : "", b->jitrace2 ? b->jitrace2 : "",
	       b->jitrace2 ? "`" : "");
	printf("Debian's perf 6.1 has no off-CPU mode: `perf record --off-cpu` says \"%s\" "
	       "and records nothing off-CPU, so perf's row is the classic off-CPU recording, a "
	       "sample with its call chain at every switch of the process's threads.\n",
	       b->perf_msg);
	for (i = 0; i < NWORK; i++)
		if (b->wl[i].skipped)
			printf("\n**%s**: not measured: %s.\n", b->wl[i].name, b->wl[i].skipped);
		else if (!b->wl[i].rounds && strstr(which, b->wl[i].key))
			printf("\n**%s**: not measured: its first round failed (see stderr).\n",
			       b->wl[i].name);
	if (b->wl[W_PP].rounds || b->wl[W_HAND].rounds)
		report_pingpong(b, &b->wl[W_PP], &b->wl[W_HAND]);
	if (b->wl[W_JAVA].rounds || b->wl[W_NODE].rounds) {
		printf("\n### Java and Node: throughput with and without --off-cpu\n\n");
		printf("bench/workloads/Work.java (`java -XX:+PreserveFramePointer "
		       "-XX:-UsePerfData -cp DIR Work`) and work.js (`node --perf-basic-prof "
		       "--logfile=/dev/null`): work units done in the window, warmed up %.1f s "
		       "first; CPU-bound and single-threaded, with the runtime's own threads "
		       "(compiler, GC, timers) switching around it.\n",
		       RT_WARM_MS / 1e3);
		for (i = W_JAVA; i <= W_NODE; i++)
			if (b->wl[i].rounds)
				report_runtime(&b->wl[i]);
	}
	report_thresholds(b);
	report_timed(b);
	fflush(stdout);
	bench_run(rm, "/dev/null", "/dev/null");
	fprintf(stderr, "bench_offcpu: %.0f s\n", (jt_now_ns() - t0) / 1e9);
	return 0;
}
