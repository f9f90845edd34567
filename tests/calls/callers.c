// SPDX-License-Identifier: GPL-2.0
/*
 * A workload of exact calls through libjitrace-agent for the calls-region tests: nested
 * calls on the main thread, waves of threads that exit (their slots given back and taken
 * again), more threads at once than the region has slots, and a forked child with calls
 * of its own. With --wait-taken it waits until a collector drains its region (read from
 * the region itself) before calling, so that the calls go through the buffers: a collector
 * started after it (a late one) finds the region by itself. With --stall N (root, tests
 * only) it stops the collector that drains it (SIGSTOP) while one thread makes N pairs and
 * another 1,000, then lets it go: the first loses exactly what its ring cannot hold, the
 * other none. With --exec it then execs itself as a program of other methods
 * (callers_execed, its pairs on the main thread and one other), whose new agent makes a new
 * region under the same pid. With --late-read N (root, tests only) each image, before its
 * threads call, stops the collector in the middle of reading N records it put in its ring
 * (loads of methods of no code: no perf map line), and lets it go on only once they have
 * exited, right before the exec or the exit: the collector then finds the threads' sums
 * after the exec or the exit, before the ring's record of it. Prints what it did, as the
 * toy JIT does: "pid N", "calls NAME=COUNT", "child N taken T", "stall TID lost N", "done".
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "jitrace/agent.h"
#include "jt_callbuf.h"

struct opts {
	int wait_ms;		/* wait for a collector this long (0: do not) */
	bool wait_sum;		/* and until it asks for sums (summary mode) */
	uint64_t slow;		/* main's calls that sleep 3 ms around their inner call */
	int threads, waves;	/* waves of threads, each thread `pairs` calls */
	int crowd;		/* threads at once, past the slot count (0: none) */
	uint64_t pairs;
	bool fork_child;
	bool exec_self;		/* --exec: exec itself as --execed when done */
	bool execed;		/* --execed: the program after that exec */
	uint64_t rate;		/* calls a second on the main thread (0: as fast as it can) */
	double seconds;		/* with rate: for this long */
	uint64_t stall;		/* pairs a thread makes while the collector is stopped */
	uint64_t late_read;	/* --late-read's records (0: none) */
};

/* The pairs of --stall's quiet thread: 2,000 records, far fewer than a ring holds. */
#define QUIET_PAIRS 1000
/* --late-read: the collector's CPU time on its backlog before it is stopped again. */
#define LATE_READ_NS 2000000ULL

static uint64_t id_main, id_inner, id_thread, id_child, id_burst, id_quiet, id_execed;
static char code[336];	/* the "code" the methods are said to occupy (never run) */

/* This process's own region, from its maps, or NULL. */
static const struct jt_callbuf_hdr *own_region(void)
{
	char line[512];
	unsigned long start = 0;
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/memfd:" JT_CALLBUF_NAME))
			start = strtoul(line, NULL, 16);
	fclose(f);
	return (const struct jt_callbuf_hdr *)start;
}

/* Whether a collector drains our region within ms. */
/* Whether a collector has the region (and, with sum, has asked for summary mode). */
static bool is_taken(const struct jt_callbuf_hdr *r, bool sum)
{
	uint32_t collector = __atomic_load_n(&r->collector, __ATOMIC_ACQUIRE);

	/* with sum, a collector that has it (not one it is on its way to) */
	return collector && (!sum || (collector != JT_CALLBUF_HANDED &&
		__atomic_load_n(&r->mode, __ATOMIC_ACQUIRE) == JT_CALLBUF_MODE_SUM));
}

static int wait_taken(int ms, bool sum)
{
	const struct jt_callbuf_hdr *r = own_region();
	struct timespec pause = { 0, 1000000 };
	int i;

	for (i = 0; r && i < ms; i++) {
		if (is_taken(r, sum))
			return 1;
		nanosleep(&pause, NULL);
	}
	return r && is_taken(r, sum);
}

/* n calls of method id, each entered and left. */
static void make_pairs(uint64_t id, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++) {
		jitrace_method_enter(id);
		jitrace_method_leave(id);
	}
}

static void *thread_calls(void *arg)
{
	const struct opts *o = arg;

	make_pairs(id_thread, o->pairs);
	return NULL;
}

/* A thread of --stall: its pairs of one method, its tid given back. */
struct stall_thread {
	uint64_t id, pairs;
	pid_t tid;
};

static void *stall_calls(void *arg)
{
	struct stall_thread *t = arg;

	t->tid = gettid();
	make_pairs(t->id, t->pairs);
	return NULL;
}

/* Whether every thread of process pid is stopped (state T). */
static bool all_stopped(pid_t pid)
{
	char path[384], buf[512], *p;
	bool stopped = true;
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return false;
	while (stopped && (d = readdir(dir))) {
		FILE *f;
		size_t n;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%s/stat", (int)pid, d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;	/* gone */
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[n] = 0;
		p = strrchr(buf, ')');
		stopped = p && p[1] == ' ' && (p[2] == 'T' || p[2] == 't');
	}
	closedir(dir);
	return stopped;
}

/* The collector that has our region, stopped (SIGSTOP) until told to go on: 0 if none. */
static pid_t stop_collector(void)
{
	const struct jt_callbuf_hdr *r = own_region();
	struct timespec pause = { 0, 1000000 };
	uint32_t col = 0;
	int i;

	/* the collector's own pid, once it has the region (not only on its way to it) */
	for (i = 0; r && i < 5000; i++) {
		col = __atomic_load_n(&r->collector, __ATOMIC_ACQUIRE);
		if (col && col != JT_CALLBUF_HANDED)
			break;
		nanosleep(&pause, NULL);
	}
	if (!r || !col || col == JT_CALLBUF_HANDED || kill((pid_t)col, SIGSTOP)) {
		fprintf(stderr, "callers: no collector to stop\n");
		return 0;
	}
	for (i = 0; i < 5000 && !all_stopped((pid_t)col); i++)
		nanosleep(&pause, NULL);
	return (pid_t)col;
}

/*
 * --stall: with the collector stopped, a burst thread overflows its ring by a known count
 * while a quiet one fits in its own; both are new threads, in empty slots.
 */
static int stall(const struct opts *o)
{
	struct stall_thread burst = { id_burst, o->stall, 0 }, quiet = { id_quiet, QUIET_PAIRS, 0 };
	const struct jt_callbuf_hdr *r = own_region();
	pid_t col = stop_collector();
	pthread_t a, b;

	if (!col)
		return -1;
	if (pthread_create(&a, NULL, stall_calls, &burst) == 0) {
		pthread_join(a, NULL);
		if (pthread_create(&b, NULL, stall_calls, &quiet) == 0)
			pthread_join(b, NULL);
	}
	kill(col, SIGCONT);
	printf("stall %d lost %" PRIu64 "\n", (int)burst.tid,
	       2 * o->stall > r->nr_recs ? 2 * o->stall - r->nr_recs : 0);
	printf("stall %d lost 0\n", (int)quiet.tid);
	return burst.tid && quiet.tid ? 0 : -1;
}

/* Nanoseconds pid has run on a CPU (its main thread: the collector's loop), 0 if unknown. */
static uint64_t cpu_ns(pid_t pid)
{
	char path[64];
	unsigned long long ns = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%llu", &ns) != 1)
		ns = 0;
	fclose(f);
	return ns;
}

/*
 * --late-read: the collector stopped in the middle of reading n records of ours, which it
 * found in its ring in one look: what happens until it goes on (late_read_go) is beyond
 * that look, and it reads our region again before it looks at the ring again. Its pid, or
 * 0 when there is no collector to stop.
 */
static pid_t late_read(uint64_t n)
{
	struct timespec pause = { 0, 100000 };
	pid_t col = stop_collector();
	uint64_t i, t;

	if (!col)
		return 0;
	for (i = 0; i < n; i++)	/* a definition for calls only: a ring record, no map line */
		jitrace_code_load(code, 0, "callers_backlog");
	t = cpu_ns(col);
	kill(col, SIGCONT);
	/* once it has spent some of its CPU on them, it is well into the one look */
	for (i = 0; i < 50000 && cpu_ns(col) - t < LATE_READ_NS; i++)
		nanosleep(&pause, NULL);
	kill(col, SIGSTOP);
	for (i = 0; i < 50000 && !all_stopped(col); i++)
		nanosleep(&pause, NULL);
	return col;
}

static void late_read_go(pid_t col)
{
	if (col)
		kill(col, SIGCONT);
}

static void *execed_calls(void *arg)
{
	const struct opts *o = arg;

	make_pairs(id_execed, o->pairs);
	return NULL;
}

/* The program --exec makes of this one: other methods, a new agent, the same pid. */
static int execed(const struct opts *o)
{
	pid_t col = 0;
	pthread_t t;

	id_execed = jitrace_code_load(code, 64, "callers_execed");
	printf("execed %d\n", (int)getpid());
	fflush(stdout);
	if (o->late_read && !(col = late_read(o->late_read)))
		return 1;
	if (pthread_create(&t, NULL, execed_calls, (void *)o))
		return 1;
	execed_calls((void *)o);
	pthread_join(t, NULL);
	printf("calls callers_execed=%" PRIu64 "\n", 2 * o->pairs);
	printf("done\n");
	fflush(stdout);
	late_read_go(col);	/* and exit at once */
	return 0;
}

static int run_threads(const struct opts *o, int n)
{
	pthread_t *t = calloc(n, sizeof(*t));
	int i, err = 0;

	if (!t)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		err = pthread_create(&t[i], NULL, thread_calls, (void *)o);
		if (err)
			break;
	}
	while (i-- > 0)
		pthread_join(t[i], NULL);
	free(t);
	return -err;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

/* Main-thread calls: nested pairs, as fast as it can or at o->rate for o->seconds. */
static uint64_t main_calls(const struct opts *o)
{
	uint64_t i, n = o->pairs, start = now_ns();

	if (o->rate)
		n = (uint64_t)(o->rate * o->seconds / 2);	/* enters and leaves: 2 calls */
	for (i = 0; i < n; i++) {
		jitrace_method_enter(id_main);
		jitrace_method_enter(id_inner);
		jitrace_method_leave(id_inner);
		jitrace_method_leave(id_main);
		/* the pace, looked at every 1,024 turns: 2 calls (enter and leave pairs) a turn */
		if (o->rate && !(i & 1023))
			while (now_ns() - start < i * 2 * 1000000000ULL / o->rate)
				;
	}
	for (i = 0; i < o->slow; i++) {	/* long calls, for --calls-min */
		struct timespec ms3 = { 0, 3000000 };

		jitrace_method_enter(id_main);
		nanosleep(&ms3, NULL);
		jitrace_method_enter(id_inner);
		jitrace_method_leave(id_inner);
		jitrace_method_leave(id_main);
	}
	return n + o->slow;
}

static int child(const struct opts *o)
{
	int taken = o->wait_ms ? wait_taken(o->wait_ms, o->wait_sum) : 0;

	printf("child %d taken %d\n", (int)getpid(), taken);
	fflush(stdout);
	make_pairs(id_child, o->pairs);
	/* a code load after the parent's, through the stub the parent hit (agent/stubs.S) */
	make_pairs(jitrace_code_load(code + 320, 16, "callers_forkload"), 1);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = { .pairs = 1000 };
	uint64_t t0, n_main;
	int i, status, taken = 0;
	pid_t pid, col = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "0";

		if (!strcmp(a, "--fork")) {
			o.fork_child = true;
			continue;
		}
		if (!strcmp(a, "--exec") || !strcmp(a, "--execed")) {
			o.exec_self |= !strcmp(a, "--exec");
			o.execed |= !strcmp(a, "--execed");
			continue;
		}
		if (!strcmp(a, "--wait-sum")) {	/* with --wait-taken */
			o.wait_sum = true;
			continue;
		}
		i++;
		if (!strcmp(a, "--wait-taken"))
			o.wait_ms = atoi(v);
		else if (!strcmp(a, "--threads"))
			o.threads = atoi(v);
		else if (!strcmp(a, "--waves"))
			o.waves = atoi(v);
		else if (!strcmp(a, "--crowd"))
			o.crowd = atoi(v);
		else if (!strcmp(a, "--pairs"))
			o.pairs = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--rate"))
			o.rate = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--slow"))
			o.slow = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--seconds"))
			o.seconds = atof(v);
		else if (!strcmp(a, "--stall"))
			o.stall = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--late-read"))
			o.late_read = strtoull(v, NULL, 10);
		else {
			fprintf(stderr, "callers: unknown option %s\n", a);
			return 2;
		}
	}
	if (o.execed)
		return execed(&o);
	/* ranges of code, not definitions for calls only: a forked child inherits those */
	id_main = jitrace_code_load(code, 64, "callers_main");
	id_inner = jitrace_code_load(code + 64, 64, "callers_inner");
	id_thread = jitrace_code_load(code + 128, 64, "callers_thread");
	id_child = jitrace_code_load(code + 192, 64, "callers_child");
	id_burst = jitrace_code_load(code + 256, 32, "callers_burst");
	id_quiet = jitrace_code_load(code + 288, 32, "callers_quiet");
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (o.wait_ms)
		taken = wait_taken(o.wait_ms, o.wait_sum);
	printf("taken %d\n", taken);
	t0 = now_ns();
	n_main = main_calls(&o);
	printf("main %" PRIu64 " pairs in %.3f s\n", n_main, (now_ns() - t0) / 1e9);
	if (o.stall && stall(&o))
		return 1;
	if (o.late_read && !(col = late_read(o.late_read)))
		return 1;
	for (i = 0; i < o.waves; i++)
		if (run_threads(&o, o.threads))
			return 1;
	if (o.crowd && run_threads(&o, o.crowd))
		return 1;
	if (o.fork_child) {
		fflush(stdout);
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			status = child(&o);
			fflush(stdout);
			_exit(status);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
			fprintf(stderr, "callers: child %d ended with status 0x%x\n", (int)pid, status);
			return 1;
		}
	}
	printf("calls callers_main=%" PRIu64 "\n", n_main);
	printf("calls callers_inner=%" PRIu64 "\n", n_main);
	printf("calls callers_thread=%" PRIu64 "\n",
	       ((uint64_t)o.waves * o.threads + o.crowd) * o.pairs);
	printf("calls callers_child=%" PRIu64 "\n", o.fork_child ? o.pairs : 0);
	printf("calls callers_forkload=%d\n", o.fork_child ? 1 : 0);
	printf("calls callers_burst=%" PRIu64 "\n", o.stall);
	printf("calls callers_quiet=%" PRIu64 "\n", o.stall ? (uint64_t)QUIET_PAIRS : 0);
	if (o.exec_self) {
		char pairs[32], late[32];
		char *args[] = { argv[0], "--execed", "--pairs", pairs, "--late-read", late, NULL };

		snprintf(pairs, sizeof(pairs), "%" PRIu64, o.pairs);
		snprintf(late, sizeof(late), "%" PRIu64, o.late_read);
		fflush(stdout);
		late_read_go(col);	/* and exec at once */
		execv("/proc/self/exe", args);
		fprintf(stderr, "callers: exec /proc/self/exe: %s\n", strerror(errno));
		return 1;
	}
	printf("done\n");
	fflush(stdout);
	late_read_go(col);
	return 0;
}
