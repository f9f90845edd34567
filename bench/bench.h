/* SPDX-License-Identifier: GPL-2.0 */
/* What the benchmarks share: CPU pinning, a live session into a log, medians of rounds. */
#ifndef JT_BENCH_H
#define JT_BENCH_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "jitrace/agent.h"
#include "cmd/liveopts.h"
#include "session/live.h"
#include "log/log.h"
#include "base/util.h"

/* Keep the calling thread on one CPU, so rounds do not differ by where threads land. */
static inline void bench_pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

/*
 * The calling thread's own CPU time, ns: on this shared machine the wall clock also counts
 * the time the thread waited for its CPU, often several times the work's own.
 */
static inline uint64_t bench_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * How many programs named name are loaded on the host; the newest one's run count and run
 * time (counted while BPF_ENABLE_STATS is on) into *runs, *run_ns if not NULL, or with all
 * every one's summed (where another tracer's copy may be newer than ours, but idle).
 */
static inline int bench_progs_named(const char *name, bool all, double *runs, double *run_ns)
{
	__u32 next = 0, newest = 0;
	int n = 0;

	while (!bpf_prog_get_next_id(next, &next)) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_prog_get_fd_by_id(next);

		if (fd < 0)
			continue;	/* unloaded meanwhile */
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && !strcmp(info.name, name)) {
			n++;
			if (runs && run_ns && (all || next > newest)) {
				*runs = (all && n > 1 ? *runs : 0) + info.run_cnt;
				*run_ns = (all && n > 1 ? *run_ns : 0) + info.run_time_ns;
			}
			newest = next > newest ? next : newest;
		}
		close(fd);
	}
	return n;
}

/*
 * A live session as jitrace record runs one, started into a log at path (*w), its header
 * the session's start: the collector under test. Exits on failure (reported).
 */
static inline struct jt_live *bench_live(const struct jt_live_opts *o, const char *path,
					 struct jt_log_writer **w)
{
	struct jt_live *live = jt_live__open(o);
	struct jt_log_header hdr = { 0 };
	struct jt_sink sink;

	if (!live)
		exit(1);
	hdr.start_ns = jt_live__start_ns(live);
	*w = jt_logw__create(path, &hdr, true);
	if (!*w)
		exit(1);
	sink = jt_logw__sink(*w);
	if (jt_live__start(live, &sink))
		exit(1);
	return live;
}

/* Whether a line of the file at path holds text (a tool's message, a perf map's line). */
static inline bool bench_file_has(const char *path, const char *text)
{
	char line[4096];
	bool found = false;
	FILE *f = fopen(path, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, text);
	fclose(f);
	return found;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Sort v so that v[0] is the minimum, v[n / 2] the median and v[n - 1] the maximum. */
static inline void bench_sort(double *v, int n)
{
	qsort(v, n, sizeof(*v), bench_cmp_double);
}

/*
 * Output. Each benchmark prints its own Markdown section on stdout (progress goes to
 * stderr); bench/run.sh puts the sections together into bench/RESULTS.md. A line that
 * begins "MISSED: " names a missed target, with the gap and what holds it back; run.sh
 * lifts those lines into the list at the top of RESULTS.md.
 */
static inline void bench_table_head(void)
{
	printf("| figure | target | median | min | max | |\n");
	printf("| --- | --- | --- | --- | --- | --- |\n");
}

/*
 * One row: v[] (n values, sorted here) printed with fmt ("%.2f", say) and unit; target
 * and verdict are free text ("<= 1.30x", "met"), "" for none.
 */
static inline void bench_row(const char *what, const char *target, const char *fmt,
			     const char *unit, double *v, int n, const char *verdict)
{
	char med[32], lo[32], hi[32];

	bench_sort(v, n);
	snprintf(med, sizeof(med), fmt, v[n / 2]);
	snprintf(lo, sizeof(lo), fmt, v[0]);
	snprintf(hi, sizeof(hi), fmt, v[n - 1]);
	printf("| %s | %s | **%s%s** | %s | %s | %s |\n", what, target, med, unit, lo, hi,
	       verdict);
}

/*
 * Runtimes under test: the call benchmarks (bench_dotnet) run a runtime's Hot program with
 * `bench N`, which prints "pid P" and "bench calls=N ns_per_call=X", in several conditions.
 */

/*
 * The calling process into its own session, hence its own scheduler autogroup, at nice -20
 * (the autogroup too): on a host with other work the autogroups would otherwise split the
 * CPU its workload is measured on. Children inherit it.
 */
static inline void bench_boost(void)
{
	int fd;

	setsid();
	fd = open("/proc/self/autogroup", O_WRONLY);
	if (fd >= 0) {
		if (write(fd, "-20", 3) != 3)
			fprintf(stderr, "bench: /proc/self/autogroup: %s\n", strerror(errno));
		close(fd);
	}
	if (setpriority(PRIO_PROCESS, 0, -20))
		fprintf(stderr, "bench: nice -20: %s\n", strerror(errno));
}

/*
 * Run argv (execvp) with stdout and stderr into files; its exit status, or -1 (said why).
 * *ru (if not NULL) gets its resource use, its waited-for children's included. With cpu >=
 * 0, argv runs boosted (bench_boost) and pinned to that CPU, its children too unless they
 * move.
 */
static inline int bench_run_on(char *const argv[], const char *out, const char *err,
			       struct rusage *ru, int cpu)
{
	struct rusage r;
	int status;
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		if (!freopen(out, "w", stdout) || !freopen(err, "w", stderr))
			_exit(127);
		if (cpu >= 0) {
			bench_boost();
			bench_pin(cpu);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "bench: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	if (wait4(pid, &status, 0, ru ? ru : &r) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static inline int bench_run_ru(char *const argv[], const char *out, const char *err,
			       struct rusage *ru)
{
	return bench_run_on(argv, out, err, ru, -1);
}

static inline int bench_run(char *const argv[], const char *out, const char *err)
{
	return bench_run_ru(argv, out, err, NULL);
}

/* The number after key on the first line of the file at path that has key, or -1. */
static inline double bench_find_number(const char *path, const char *key)
{
	char line[1024], *p;
	double v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if ((p = strstr(line, key))) {
			v = strtod(p + strlen(key), NULL);
			break;
		}
	fclose(f);
	return v;
}

/* The file at path onto stderr: what a failed run printed. */
static inline void bench_cat_stderr(const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fputs(line, stderr);
	fclose(f);
}

/*
 * Whether the perf map of the process whose "pid P" line is in the file out names method.
 * The map is removed either way: a benchmark leaves no /tmp/perf-PID.map behind.
 */
static inline bool bench_map_names(const char *out, const char *method)
{
	double pid = bench_find_number(out, "pid ");
	char map[64];
	bool ok;

	if (pid <= 0)
		return false;
	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)pid);
	ok = bench_file_has(map, method);
	unlink(map);
	return ok;
}

/*
 * Batches of the runtimes' `batches N` mode (the Hot programs): calls logged one by one fit
 * a thread's ring (65,536 records) when made 8,000 at a time (16,000 records), 25 ms apart:
 * four pauses for the collector to come, at its 10 ms ticks, even on a busy machine.
 */
#define BENCH_BATCH_CALLS 8000
#define BENCH_BATCH_PAUSE_NS 25000000L

/* n pairs of the agent's stubs around id, in batches when batches: their CPU ns into *cpu. */
static inline void bench_stub_pairs(uint64_t id, long n, bool batches, uint64_t *cpu)
{
	struct timespec pause = { 0, BENCH_BATCH_PAUSE_NS };
	long i, b, per = batches ? BENCH_BATCH_CALLS : n;
	uint64_t c0;

	for (b = 0; b < n; b += per) {
		c0 = bench_cpu_ns();
		for (i = 0; i < per; i++) {
			jitrace_method_enter(id);
			jitrace_method_leave(id);
		}
		*cpu += bench_cpu_ns() - c0;
		if (batches)
			nanosleep(&pause, NULL);
	}
}

/*
 * The C side of a runtime's call benchmark: the agent's stubs as a JIT calls them, around
 * one method defined as name (a stand-in range, never run), warm pairs first, then n timed;
 * printed as the Hot programs print theirs (`bench N`, timed by the wall clock; with
 * batches, `batches N`: warm-up and timed pairs in batches, timed by the thread's CPU time,
 * n and warm rounded up to whole batches). Returns main's status.
 */
static inline int bench_stub_loop(const char *name, long warm, long n, bool batches)
{
	static const unsigned char code[64];
	uint64_t id = jitrace_code_load(code, sizeof(code), name), t0, cpu = 0;

	if (batches) {
		warm = (warm + BENCH_BATCH_CALLS - 1) / BENCH_BATCH_CALLS * BENCH_BATCH_CALLS;
		n = (n + BENCH_BATCH_CALLS - 1) / BENCH_BATCH_CALLS * BENCH_BATCH_CALLS;
	}
	bench_stub_pairs(id, warm, batches, &cpu);
	cpu = 0;
	t0 = jt_now_ns();
	bench_stub_pairs(id, n, batches, &cpu);
	printf("pid %d\n", (int)getpid());
	printf("bench calls=%ld warm=%ld ns_per_call=%.2f\n", n, warm,
	       (double)(batches ? cpu : jt_now_ns() - t0) / n);
	return 0;
}

/*
 * Record argv as `jitrace record [o] -o log -- argv` does, in this process (bench_live), its
 * stdout and stderr into the files out and err; the session's statistics into *st. Returns
 * the command's exit status, or -1 (said why). Exits if the session cannot start.
 */
static inline int bench_record(struct jt_live_opts *o, char **argv, const char *log,
			       const char *out, const char *err, struct jt_pipeline_stats *st)
{
	int so, se, fo, fe, status = -1, ret;
	struct jt_log_writer *w;
	struct jt_live *live;

	o->command = argv;
	fflush(stdout);
	fflush(stderr);
	so = fcntl(1, F_DUPFD_CLOEXEC, 3);
	se = fcntl(2, F_DUPFD_CLOEXEC, 3);
	fo = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	fe = open(err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (so < 0 || se < 0 || fo < 0 || fe < 0) {
		fprintf(stderr, "bench: %s, %s: %s\n", out, err, strerror(errno));
		exit(1);
	}
	/* the command is forked as the session starts: it takes these as its own */
	dup2(fo, 1);
	dup2(fe, 2);
	live = bench_live(o, log, &w);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(fo);
	close(fe);
	ret = jt_live__run(live, NULL, NULL);
	if (!jt_live__child_ended(live, &status))
		status = -1;
	jt_live__stats(live, st);
	if (jt_logw__close(w))
		ret = -1;
	jt_live__close(live);
	o->command = NULL;
	if (ret)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

#endif
