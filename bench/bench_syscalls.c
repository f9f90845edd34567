// SPDX-License-Identifier: GPL-2.0
/*
 * What jitrace's sys_exit hook costs every system call of the host. jt_maps (tp_btf/sys_exit)
 * sees the mappings made after exec: it runs at the exit of every call of every process,
 * and for one not traced does only the pid filter's bit test; for a traced one it reads the
 * call number too and, after mmap, looks the mapping up with bpf_find_vma. Before it, three
 * tracefs tracepoints (sys_exit_mmap, sys_enter_mprotect, sys_enter_pkey_mprotect) did that.
 *
 *   getppid     syscall(SYS_getppid) in a loop: the cheapest call, what every call pays.
 *   mmap        mmap of one anonymous read-write page, then munmap: the calls jt_maps looks
 *               at closely (bpf_find_vma after mmap, for a traced process).
 *
 * Both loops run in this process, pinned to WORK_CPU at nice -20, in windows of BATCHES
 * short batches each, timed by the thread's CPU time (the window's figure is its median
 * batch), under each condition: `jitrace record -p IDLE -F 99` (IDLE, a child asleep: the
 * hook attached, this process untraced); `jitrace record -a -F 99` (this process traced);
 * bench/oldmaps.bpf.c's copies of the old tracefs programs, this process untraced then
 * traced (tracefs mounted for their attach if it is not); and a bare tp_btf/sys_exit
 * program doing only the pid filter, the floor of the hook. Every hooked window stands
 * between two windows with no hook, whose mean it is compared with; the conditions' order
 * rotates every round. jitrace runs on TRACER_CPU. A window waits for other jitrace
 * sessions' sys_exit hooks to go; one that saw such a hook come runs again (up to TRIES
 * times), then is left out of the figures (a hooked window compared with the clean no-hook
 * window beside it, if one is) and counted. After the rounds, extra windows time the programs
 * themselves with BPF_ENABLE_STATS. The target: jt_maps costs an untraced process no more
 * than the bare hook (FLOOR_MAX), so the filter adds nothing to the hook's own price.
 *
 * Usage: bench_syscalls [JITRACE [ROUNDS]], from the source tree's top; JITRACE defaults to
 * the one beside this program's directory (OUT/bench/../jitrace), ROUNDS to 7.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "oldmaps.skel.h"
#include "base/util.h"

#define WORK_CPU 1		/* the loops */
#define TRACER_CPU 0		/* jitrace, the idle child */
#define CHEAP_CALLS 25000	/* getppid calls a batch (~500 ns each in this VM) */
#define MAP_PAIRS 1000		/* mmap+munmap pairs a batch (~10 us each) */
#define BATCHES 41		/* a window: this many batches of each loop, interleaved */
#define SETTLE_MS 300		/* from jitrace's "recording" to the window */
#define MAX_ROUNDS 15
#define TRIES 4			/* runs of a window while a foreign sys_exit hook is loaded */
#define FLOOR_MAX 1.15		/* jt_maps over the bare hook, untraced (the target) */
#define QUIET_S 30		/* how long a window waits for foreign hooks to go */
#define TRACEFS "/sys/kernel/tracing"

enum loop { L_CHEAP, L_MAP, NLOOP };

enum { K_NONE, K_P, K_A, K_OLD_P, K_OLD_A, K_BARE, NCOND };

static const struct cond {
	const char *name;
	const char *jt;		/* jitrace record's target: "-p" (the idle child) or "-a" */
	bool old;		/* the old tracefs programs attached */
	bool bare;		/* the bare sys_exit program attached */
	bool self;		/* this process's bit set in oldmaps' filter */
} conds[NCOND] = {
	[K_NONE] = { "no hook" },
	[K_P] = { "`jitrace record -p IDLE -F 99` (untraced: the filter)", "-p" },
	[K_A] = { "`jitrace record -a -F 99` (traced)", "-a" },
	[K_OLD_P] = { "old tracefs tracepoints, untraced (the filter)", .old = true },
	[K_OLD_A] = { "old tracefs tracepoints, traced", .old = true, .self = true },
	[K_BARE] = { "bare tp_btf/sys_exit, untraced (the floor)", .bare = true },
};

static const char *const loop_names[NLOOP] = { "getppid", "mmap+munmap" };

struct bench {
	const char *jitrace;
	char tmp[64];
	pid_t idle;		/* a child asleep: the process record -p traces */
	struct oldmaps_bpf *skel;
	const char *old_skip;	/* why the old tracepoints were not measured, or NULL */
	bool tracefs_ours;	/* tracefs was not mounted: mounted for each attach */
	double tracefs_ms;	/* how long, in all, it was mounted by us */
	int rounds;		/* done */
	/* CPU ns a call (getppid) or a pair (mmap): each hooked window, and the mean of the
	 * clean no-hook windows just before and after it; every clean no-hook window */
	double ns[NCOND][NLOOP][MAX_ROUNDS], ref[NCOND][NLOOP][MAX_ROUNDS];
	bool ok[NCOND][MAX_ROUNDS];		/* the window and a ref clean */
	double none[NLOOP][NCOND * MAX_ROUNDS];
	int nnone;
	double wall[(2 * NCOND) * MAX_ROUNDS];	/* each window's wall time over its CPU time */
	int nwall;
	int failed;		/* the round that failed (from 1), or 0 */
	int tainted, retried;		/* windows */
	double load0[3], load1[3];	/* /proc/loadavg before and after */
	/* BPF_ENABLE_STATS: ns a run of jt_maps (-p, -a) and bare_exit; runs a second */
	double run_ns[NCOND], runs_s[NCOND];
};

/* ---- the loops ---- */

static void cheap_batch(long n)
{
	long i;

	for (i = 0; i < n; i++)
		syscall(SYS_getppid);
}

static void map_batch(long n)
{
	long i;

	for (i = 0; i < n; i++) {
		void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);

		if (p == MAP_FAILED) {
			fprintf(stderr, "bench_syscalls: mmap: %s\n", strerror(errno));
			exit(1);
		}
		munmap(p, 4096);
	}
}

/*
 * One window: a warm-up batch of each loop, then BATCHES of each in turn; the median batch
 * of each loop (CPU ns a call or a pair) into ns, wall time over CPU time into *wall.
 */
static void window_loops(double ns[NLOOP], double *wall)
{
	static void (*const batch[NLOOP])(long) = { cheap_batch, map_batch };
	static const long n[NLOOP] = { CHEAP_CALLS, MAP_PAIRS };
	double v[NLOOP][BATCHES];
	uint64_t w0, c0, c;
	int b, l;

	for (l = 0; l < NLOOP; l++)
		batch[l](n[l] / 10);
	w0 = jt_now_ns();
	c0 = bench_cpu_ns();
	for (b = 0; b < BATCHES; b++)
		for (l = 0; l < NLOOP; l++) {
			c = bench_cpu_ns();
			batch[l](n[l]);
			v[l][b] = (double)(bench_cpu_ns() - c) / n[l];
		}
	*wall = (double)(jt_now_ns() - w0) / (bench_cpu_ns() - c0);
	for (l = 0; l < NLOOP; l++) {
		bench_sort(v[l], BATCHES);
		ns[l] = v[l][BATCHES / 2];
	}
}

/* ---- BPF programs on the host ---- */

/* jitrace's programs on sys_exit loaded on the host: jt_maps, and --off-cpu's jt_sys_exit. */
static int sys_exit_hooks(void)
{
	return bench_progs_named("jt_maps", false, NULL, NULL) +
	       bench_progs_named("jt_sys_exit", false, NULL, NULL);
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Wait up to QUIET_S for another jitrace (another's tests) to unload its sys_exit hooks:
 * while one is attached, every process passes it. Whether none is left.
 */
static bool await_quiet(void)
{
	int i;

	for (i = 0; i < QUIET_S * 5 && sys_exit_hooks(); i++)
		sleep_ms(200);
	return !sys_exit_hooks();
}

/* ---- jitrace ---- */

/* `jitrace record TARGET -F 99` on TRACER_CPU, its stderr into err; its pid, or -1. */
static pid_t jitrace_start(struct bench *b, const char *target, const char *err)
{
	char log[96], idle[16], *argv[12];
	int a = 0;
	pid_t pid;

	snprintf(log, sizeof(log), "%s/rec.jtl", b->tmp);
	snprintf(idle, sizeof(idle), "%d", (int)b->idle);
	argv[a++] = (char *)b->jitrace;
	argv[a++] = "record";
	argv[a++] = (char *)target;
	if (!strcmp(target, "-p"))
		argv[a++] = idle;
	argv[a++] = "-F";
	argv[a++] = "99";
	argv[a++] = "-f";
	argv[a++] = "-o";
	argv[a++] = log;
	argv[a] = NULL;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "bench_syscalls: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		bench_pin(TRACER_CPU);
		setpriority(PRIO_PROCESS, 0, 0);	/* not the loops' -20 */
		if (!freopen("/dev/null", "r", stdin) || !freopen("/dev/null", "w", stdout) ||
		    !freopen(err, "w", stderr))
			_exit(127);
		execv(argv[0], argv);
		fprintf(stderr, "bench_syscalls: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/*
 * Whether jitrace (pid) said it records, within 60 s; false if it exited first (not reaped
 * here: jitrace_stop does, so that no pid is signalled after it could be reused).
 */
static bool jitrace_ready(pid_t pid, const char *err)
{
	siginfo_t si;
	int i;

	for (i = 0; i < 3000; i++) {
		if (bench_file_has(err, "jitrace: recording"))
			return true;
		si.si_pid = 0;
		if (!waitid(P_PID, pid, &si, WEXITED | WNOHANG | WNOWAIT) && si.si_pid == pid)
			return false;
		sleep_ms(20);
	}
	return false;
}

/* Stop jitrace with SIGINT, as Ctrl-C would; 0 if it finished cleanly within 60 s. */
static int jitrace_stop(pid_t pid)
{
	int st = 0, i;

	kill(pid, SIGINT);
	for (i = 0; i < 6000 && waitpid(pid, &st, WNOHANG) == 0; i++)
		sleep_ms(10);
	if (i == 6000) {
		fprintf(stderr, "bench_syscalls: jitrace %d did not stop: killed\n", (int)pid);
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return -1;
	}
	return WIFEXITED(st) && !WEXITSTATUS(st) ? 0 : -1;
}

/* ---- the old tracefs programs and the bare hook ---- */

static bool tracefs_mounted(void)
{
	return !access(TRACEFS "/events/syscalls", F_OK) ||
	       !access("/sys/kernel/debug/tracing/events/syscalls", F_OK);
}

/*
 * Attach the old tracefs programs: tracefs is needed only to find the tracepoints' ids, so
 * when it is not mounted it is mounted for the attach alone and unmounted at once. 0 or -1.
 */
static int old_attach(struct bench *b, struct bpf_link **links)
{
	bool mounted = false;
	uint64_t t0 = jt_now_ns();
	int err = 0;

	if (!tracefs_mounted()) {
		if (mount("nodev", TRACEFS, "tracefs", 0, NULL)) {
			fprintf(stderr, "bench_syscalls: mount -t tracefs nodev %s: %s\n", TRACEFS,
				strerror(errno));
			b->old_skip = "tracefs is not mounted and mounting it failed (see stderr)";
			return -1;
		}
		mounted = b->tracefs_ours = true;
	}
	links[0] = bpf_program__attach(b->skel->progs.old_mmap);
	links[1] = links[0] ? bpf_program__attach(b->skel->progs.old_mprotect) : NULL;
	if (!links[1]) {
		err = -errno;
		fprintf(stderr, "bench_syscalls: attaching the tracepoints syscalls/sys_exit_mmap "
			"and sys_enter_mprotect: %s\n", strerror(-err));
		b->old_skip = "attaching the tracepoints failed (see stderr)";
		bpf_link__destroy(links[0]);
		links[0] = NULL;
	}
	if (mounted && umount2(TRACEFS, 0) && umount2(TRACEFS, MNT_DETACH))
		fprintf(stderr, "bench_syscalls: umount %s: %s\n", TRACEFS, strerror(errno));
	if (mounted)
		b->tracefs_ms += (jt_now_ns() - t0) / 1e6;
	return err ? -1 : 0;
}

/* The filter of oldmaps' programs: only the idle child, or it and this process. */
static void old_filter(struct bench *b, bool self)
{
	__u32 me = getpid() & (JT_PID_LIMIT - 1), idle = b->idle & (JT_PID_LIMIT - 1);

	memset(b->skel->bss->pid_bits, 0, sizeof(b->skel->bss->pid_bits));
	b->skel->bss->pid_bits[idle / 64] |= 1ULL << (idle % 64);
	if (self)
		b->skel->bss->pid_bits[me / 64] |= 1ULL << (me % 64);
}

/* ---- a window ---- */

/*
 * The loops under condition k, into ns; with stats, the program under test timed by
 * BPF_ENABLE_STATS instead (ns a run into b->run_ns[k], runs a second into b->runs_s[k]).
 * The wall time over the CPU time into *wall; *foreign, whether a jitrace not ours had a
 * sys_exit hook loaded at its start or end. 0 or -1 (said why).
 */
static int window(struct bench *b, int k, bool stats, double ns[NLOOP], double *wall,
		  bool *foreign)
{
	const struct cond *c = &conds[k];
	struct bpf_link *links[2] = { NULL, NULL };
	double runs0 = 0, t0 = 0, runs1 = 0, t1 = 0, run_ns = 0, runs_s = 0;
	int ours = 0, stats_fd = -1, rc = 0;
	char err[96];
	uint64_t w0;
	pid_t tp = 0;

	snprintf(err, sizeof(err), "%s/jitrace.err", b->tmp);
	*foreign = !await_quiet();
	if (c->jt) {
		tp = jitrace_start(b, c->jt, err);
		if (tp < 0)
			return -1;
		if (!jitrace_ready(tp, err)) {
			fprintf(stderr, "bench_syscalls: jitrace record %s did not start; it "
				"said:\n", c->jt);
			bench_cat_stderr(err);
			jitrace_stop(tp);
			return -1;
		}
		ours = 1;
		sleep_ms(SETTLE_MS);
	} else if (c->old) {
		old_filter(b, c->self);
		if (old_attach(b, links))
			return -1;
	} else if (c->bare) {
		old_filter(b, false);
		links[0] = bpf_program__attach(b->skel->progs.bare_exit);
		if (!links[0]) {
			fprintf(stderr, "bench_syscalls: attaching tp_btf/sys_exit: %s\n",
				strerror(errno));
			return -1;
		}
	}
	if (stats) {
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (stats_fd < 0 ||
		    !bench_progs_named(c->jt ? "jt_maps" : "bare_exit", false, &runs0, &t0)) {
			fprintf(stderr, "bench_syscalls: cannot time %s: %s\n", c->name,
				stats_fd < 0 ? strerror(errno) : "its program is not loaded");
			rc = -1;
		}
	}
	w0 = jt_now_ns();
	if (!rc)
		window_loops(ns, wall);
	if (stats_fd >= 0) {
		if (!rc && bench_progs_named(c->jt ? "jt_maps" : "bare_exit", false, &runs1, &t1) &&
		    runs1 > runs0) {
			run_ns = (t1 - t0) / (runs1 - runs0);
			runs_s = (runs1 - runs0) / ((jt_now_ns() - w0) / 1e9);
		}
		close(stats_fd);
	}
	if (sys_exit_hooks() > ours)
		*foreign = true;
	if (run_ns && !*foreign) {	/* the newest jt_maps was ours: no other came */
		b->run_ns[k] = run_ns;
		b->runs_s[k] = runs_s;
	}
	bpf_link__destroy(links[0]);
	bpf_link__destroy(links[1]);
	if (tp && jitrace_stop(tp)) {
		fprintf(stderr, "bench_syscalls: jitrace record %s failed; it said:\n", c->jt);
		bench_cat_stderr(err);
		rc = -1;
	}
	unlink(err);
	return rc;
}

static bool skipped(const struct bench *b, int k)
{
	return (conds[k].old || conds[k].bare) && !b->skel;
}

static void loadavg(double v[3])
{
	FILE *f = fopen("/proc/loadavg", "r");

	if (!f || fscanf(f, "%lf %lf %lf", &v[0], &v[1], &v[2]) != 3)
		v[0] = v[1] = v[2] = -1;
	if (f)
		fclose(f);
}

static bool measured(const struct bench *b, int k)
{
	return !skipped(b, k) && !(conds[k].old && b->old_skip);
}

/*
 * Condition k's window of round r, run again while another jitrace's sys_exit hook was
 * loaded: into ns. 0; 1 if the last try had one too (left out of the figures); -1 if the
 * window failed.
 */
static int run_window(struct bench *b, int r, int k, double ns[NLOOP])
{
	double wall;
	bool foreign;
	int t;

	for (t = 0; t < TRIES; t++) {
		if (window(b, k, false, ns, &wall, &foreign))
			return -1;
		if (!foreign)
			break;
		fprintf(stderr, "bench_syscalls: round %d, %s: another jitrace had a sys_exit hook "
			"loaded: %s\n", r + 1, conds[k].name,
			t + 1 < TRIES ? "run again" : "left out");
		b->retried += t + 1 < TRIES;
	}
	b->tainted += foreign;
	b->wall[b->nwall++] = wall;
	fprintf(stderr, "bench_syscalls: round %d, %s: getppid %.1f ns, mmap+munmap %.1f ns "
		"(CPU time; wall %.2fx)\n", r + 1, conds[k].name, ns[L_CHEAP], ns[L_MAP], wall);
	return foreign;
}

/*
 * Round r: a no-hook window, then each hooked condition followed by another no-hook
 * window, in an order rotated by r. A hooked window is compared with the clean no-hook
 * windows beside it (one will do). 0, or -1 if a window failed.
 */
static int round_of(struct bench *b, int r)
{
	double before[NLOOP], after[NLOOP], ns[NLOOP];
	int i, l, rc, ra, nnone = b->nnone;
	bool had_before, had_after;

	if ((rc = run_window(b, r, K_NONE, before)) < 0)
		return -1;
	had_before = !rc;
	for (l = 0; l < NLOOP && had_before; l++)
		b->none[l][b->nnone] = before[l];
	b->nnone += had_before;
	for (i = 0; i < NCOND - 1; i++) {
		int k = K_NONE + 1 + (i + r) % (NCOND - 1);

		if (!measured(b, k))
			continue;
		rc = run_window(b, r, k, ns);
		if (rc < 0 && conds[k].old && b->old_skip)
			continue;	/* said why; measured() leaves them out from now */
		if (rc < 0 || (ra = run_window(b, r, K_NONE, after)) < 0) {
			b->nnone = nnone;	/* the round is left out */
			return -1;
		}
		had_after = !ra;
		b->ok[k][r] = !rc && (had_before || had_after);
		for (l = 0; l < NLOOP; l++) {
			b->ns[k][l][r] = ns[l];
			b->ref[k][l][r] = !had_before ? after[l] :
					  !had_after ? before[l] : (before[l] + after[l]) / 2;
			if (had_after)
				b->none[l][b->nnone] = before[l] = after[l];
		}
		b->nnone += had_after;
		had_before = had_after;
	}
	return 0;
}

/* ---- the section ---- */

/* Condition k's window of round r minus the no-hook windows on either side of it. */
static double cost(const struct bench *b, int k, enum loop l, int r)
{
	return b->ns[k][l][r] - b->ref[k][l][r];
}

enum fig { F_NS, F_COST, F_MINUS, F_RATIO };

/*
 * Figure f of loop l over the rounds where condition k's window (and k2's, unless K_NONE)
 * was clean, into v: k's CPU ns, its cost, its cost minus k2's, or over k2's. How many.
 */
static int figures(const struct bench *b, int k, int k2, enum loop l, enum fig f, double *v)
{
	int r, n = 0;

	for (r = 0; r < b->rounds; r++) {
		if (!b->ok[k][r] || (k2 != K_NONE && !b->ok[k2][r]))
			continue;
		switch (f) {
		case F_NS:
			v[n++] = b->ns[k][l][r];
			break;
		case F_COST:
			v[n++] = cost(b, k, l, r);
			break;
		case F_MINUS:
			v[n++] = cost(b, k, l, r) - cost(b, k2, l, r);
			break;
		case F_RATIO:
			v[n++] = cost(b, k, l, r) / cost(b, k2, l, r);
			break;
		}
	}
	return n;
}

/* The median of figures(); 0 if there is none. */
static double fig_median(const struct bench *b, int k, int k2, enum loop l, enum fig f)
{
	double v[MAX_ROUNDS];
	int n = figures(b, k, k2, l, f, v);

	if (!n)
		return 0;
	bench_sort(v, n);
	return v[n / 2];
}

/* A row of figures() if there are any. */
static void fig_row(const struct bench *b, const char *what, int k, int k2, enum loop l,
		    enum fig f, const char *fmt, const char *unit)
{
	double v[MAX_ROUNDS];
	char name[240];
	int n = figures(b, k, k2, l, f, v);

	snprintf(name, sizeof(name), "%s (%d of %d rounds: the others touched by another "
		 "jitrace)", what, n, b->rounds);
	if (n)
		bench_row(n < b->rounds ? name : what, "", fmt, unit, v, n, "");
}

/*
 * Rows of loop l: the no-hook windows, each hooked condition, each one's difference from
 * the no-hook windows on either side of it, then jt_maps beside the old tracepoints and
 * the floor. The target (getppid): jt_maps costs an untraced process what the bare hook
 * does, within FLOOR_MAX: its filter adds nothing to the hook's own price.
 */
static void table(struct bench *b, enum loop l)
{
	static const int vs[][2] = { { K_P, K_OLD_P }, { K_A, K_OLD_A } };
	double v[MAX_ROUNDS], med;
	char what[200];
	unsigned int i;
	int k, n;

	printf("\n### %s: CPU ns a %s\n\n", loop_names[l],
	       l == L_CHEAP ? "call" : "pair (two calls)");
	bench_table_head();
	if (b->nnone)
		bench_row("no hook (every clean window)", "", "%.1f", " ns", b->none[l], b->nnone,
			  "");
	for (k = K_NONE + 1; k < NCOND; k++)
		if (measured(b, k))
			fig_row(b, conds[k].name, k, K_NONE, l, F_NS, "%.1f", " ns");
	for (k = K_NONE + 1; k < NCOND; k++) {
		snprintf(what, sizeof(what), "%s, minus no hook", conds[k].name);
		if (measured(b, k))
			fig_row(b, what, k, K_NONE, l, F_COST, "%+.1f", " ns");
	}
	for (i = 0; i < sizeof(vs) / sizeof(vs[0]) && measured(b, vs[i][1]); i++) {
		snprintf(what, sizeof(what), "jt_maps's cost over the old tracepoints', %s",
			 vs[i][0] == K_P ? "untraced" : "traced");
		fig_row(b, what, vs[i][0], vs[i][1], l, F_MINUS, "%+.1f", " ns");
	}
	if (l != L_CHEAP || !measured(b, K_BARE) ||
	    !(n = figures(b, K_P, K_BARE, l, F_RATIO, v)))
		return;
	bench_sort(v, n);
	med = v[n / 2];
	snprintf(what, sizeof(what), "<= %.2fx", FLOOR_MAX);
	bench_row("**jt_maps's cost to an untraced process over the bare hook's**", what, "%.2f",
		  "x", v, n, med <= FLOOR_MAX ? "met" : "MISSED");
	if (med > FLOOR_MAX)
		printf("\nMISSED: jitrace's sys_exit hook costs an untraced getppid %.2fx what a "
		       "bare sys_exit hook costs (the median of %d rounds' ratios; target %.2fx): "
		       "%+.1f ns against %+.1f ns a call (medians).\n", med, n, FLOOR_MAX,
		       fig_median(b, K_P, K_NONE, l, F_COST),
		       fig_median(b, K_BARE, K_NONE, l, F_COST));
}

/* The spread of the no-hook windows, (max - min) / median, in percent, of loop l. */
static double spread(struct bench *b, enum loop l)
{
	double *v = b->none[l];
	int n = b->nnone;

	if (!n)
		return 0;
	bench_sort(v, n);
	return 100 * (v[n - 1] - v[0]) / v[n / 2];
}

/* The programs themselves, as BPF_ENABLE_STATS timed them. */
static void report_stats(const struct bench *b)
{
	static const char *const prog[NCOND] = {
		[K_P] = "jt_maps under `record -p IDLE` (every run filtered out)",
		[K_A] = "jt_maps under `record -a` (every run traced)",
		[K_BARE] = "bare_exit (the test alone)",
	};
	double v[1];
	char what[160];
	int k;

	printf("\n### The programs themselves, timed\n\n");
	printf("One extra window each after the rounds, with BPF_ENABLE_STATS on for it alone: "
	       "the program's mean run time (every system call of the host, both CPUs; the "
	       "kernel's timing of each run is in it, which is why the bare test costs tens of "
	       "ns) and its runs a second. The rest of a difference in the tables is the "
	       "hook's dispatch and the slower path the system call takes while anything is "
	       "attached to sys_exit (every call of every task goes through the tracepoint's "
	       "work then).\n\n");
	bench_table_head();
	for (k = 0; k < NCOND; k++) {
		if (!prog[k] || !b->run_ns[k])
			continue;
		v[0] = b->run_ns[k];
		snprintf(what, sizeof(what), "%s: ns a run", prog[k]);
		bench_row(what, "", "%.1f", " ns", v, 1, "");
		v[0] = b->runs_s[k];
		snprintf(what, sizeof(what), "%s: runs a second", prog[k]);
		bench_row(what, "", "%.0f", "", v, 1, "");
	}
}

/* The median of loop l's clean no-hook windows (b->none, left in its order). */
static double none_median(const struct bench *b, enum loop l)
{
	double v[NCOND * MAX_ROUNDS];
	int n = b->nnone;

	memcpy(v, b->none[l], n * sizeof(v[0]));
	bench_sort(v, n);
	return v[n / 2];
}

/* What the tables say, in medians: an untraced process's price, beside the old hooks. */
static void report_summary(const struct bench *b)
{
	double v[MAX_ROUNDS], base;

	if (!b->nnone || !figures(b, K_P, K_NONE, L_CHEAP, F_COST, v) ||
	    !figures(b, K_A, K_NONE, L_CHEAP, F_COST, v))
		return;
	base = none_median(b, L_CHEAP);
	printf("\nWhat this says: while jitrace samples anywhere on the host, a process it does "
	       "not trace pays %+.0f ns a system call (getppid: %.0f%% of the call's %.0f ns); a "
	       "traced one %+.0f ns. ", fig_median(b, K_P, K_NONE, L_CHEAP, F_COST),
	       100 * fig_median(b, K_P, K_NONE, L_CHEAP, F_COST) / base, base,
	       fig_median(b, K_A, K_NONE, L_CHEAP, F_COST));
	if (figures(b, K_BARE, K_NONE, L_CHEAP, F_COST, v))
		printf("A sys_exit program that only tests the filter costs %+.0f ns: the price "
		       "is the hook's, not jt_maps's. ",
		       fig_median(b, K_BARE, K_NONE, L_CHEAP, F_COST));
	if (figures(b, K_P, K_OLD_P, L_CHEAP, F_MINUS, v) &&
	    figures(b, K_A, K_OLD_A, L_CHEAP, F_MINUS, v))
		printf("The old tracefs tracepoints cost every call %+.0f ns too (a program on "
		       "any syscalls tracepoint sends every call of every task through the "
		       "tracepoint path, though theirs ran for mmap and mprotect alone): the "
		       "broader hook costs an untraced call %+.0f ns more than they did, a traced "
		       "one %+.0f ns, the price of needing no tracefs. ",
		       fig_median(b, K_OLD_P, K_NONE, L_CHEAP, F_COST),
		       fig_median(b, K_P, K_OLD_P, L_CHEAP, F_MINUS),
		       fig_median(b, K_A, K_OLD_A, L_CHEAP, F_MINUS));
	printf("An mmap+munmap pair (%.0f ns) pays %+.0f ns untraced and %+.0f ns traced, "
	       "bpf_find_vma included.\n", none_median(b, L_MAP),
	       fig_median(b, K_P, K_NONE, L_MAP, F_COST),
	       fig_median(b, K_A, K_NONE, L_MAP, F_COST));
}

static void report(struct bench *b)
{
	printf("## System calls under jitrace's sys_exit hook (jt_maps): what every process "
	       "pays\n\n");
	printf("jitrace sees the mappings made after exec (mmap of a file with PROT_EXEC, "
	       "mprotect and pkey_mprotect making memory executable) with one program, jt_maps, "
	       "on the BTF raw tracepoint sys_exit (no tracefs needed), attached whenever it "
	       "samples or records off-CPU time. It runs at the exit of every system call of "
	       "the host: for a process not traced it tests the pid filter's bit and returns; "
	       "for a traced one it reads the call number and, after mmap, looks the mapping up "
	       "with bpf_find_vma. Before, three tracefs tracepoints (syscalls/sys_exit_mmap, "
	       "sys_enter_mprotect, sys_enter_pkey_mprotect) did it for those calls alone. ");
	printf("One process times two loops, pinned to CPU %d at nice -20: "
	       "`syscall(SYS_getppid)`, %d calls a batch, and mmap of one anonymous read-write "
	       "page then munmap, %d pairs a batch; a window is a warm-up then %d batches of "
	       "each, interleaved, its figure the median batch, timed by the thread's CPU time "
	       "(CLOCK_THREAD_CPUTIME_ID: the wall clock also counts the time the thread waited "
	       "for its CPU on this shared machine, see Noise). ",
	       WORK_CPU, CHEAP_CALLS, MAP_PAIRS, BATCHES);
	printf("The conditions, one window each a round, each between two no-hook windows, "
	       "in an order rotated every round, %d rounds: `jitrace record -p IDLE -F 99` "
	       "(IDLE, a child asleep: the hook attached, this process untraced); `jitrace "
	       "record -a -F 99` (this process traced); bench/oldmaps.bpf.c's copies of the old "
	       "tracepoint programs on sys_exit_mmap and sys_enter_mprotect (the same pid "
	       "filter and bpf_find_vma), this process untraced and then traced; and a bare "
	       "tp_btf/sys_exit program that does only the filter's test, the floor of the "
	       "hook. jitrace (`%s`) runs on CPU %d, started before the window (until it says "
	       "it is recording, then %d ms) and stopped with SIGINT after it. A difference is "
	       "taken against the mean of the no-hook windows just before and after the "
	       "window.\n", b->rounds, b->jitrace, TRACER_CPU, SETTLE_MS);
	if (b->failed)
		printf("\nRound %d failed (see stderr): the figures are of the %d before it.\n",
		       b->failed, b->rounds);
	if (!b->skel)
		printf("\nbench/oldmaps.bpf.c did not load (see stderr): neither the old "
		       "tracepoints nor the bare hook were measured.\n");
	else if (b->old_skip)
		printf("\nThe old tracefs tracepoints were not measured: %s.\n", b->old_skip);
	else if (b->tracefs_ours)
		printf("\ntracefs was not mounted: the old tracepoints' windows mounted it on %s "
		       "for their attach alone (it gives the tracepoints' ids) and unmounted it at "
		       "once, %.0f ms in all.\n", TRACEFS, b->tracefs_ms);
	else
		printf("\ntracefs was mounted: the old tracepoints were attached through it.\n");
	table(b, L_CHEAP);
	table(b, L_MAP);
	report_summary(b);
	if (b->run_ns[K_P] || b->run_ns[K_A] || b->run_ns[K_BARE])
		report_stats(b);
	bench_sort(b->wall, b->nwall);
	printf("\nNoise: load average %.2f before the rounds, %.2f after, on %ld CPUs. A "
	       "window's wall time was %.2fx its CPU time at the median (%.2fx to %.2fx): the "
	       "excess is time this thread waited for its CPU despite nice -20, which the CPU "
	       "clock leaves out. The no-hook windows spread %.1f%% (getppid) and %.1f%% (mmap) "
	       "of their median from min to max. ",
	       b->load0[0], b->load1[0], sysconf(_SC_NPROCESSORS_ONLN), b->wall[b->nwall / 2],
	       b->wall[0], b->wall[b->nwall - 1], spread(b, L_CHEAP), spread(b, L_MAP));
	printf("A window waits up to %d s for other jitrace sessions' sys_exit hooks (jt_maps, "
	       "jt_sys_exit) to be unloaded, since every process passes them too, and runs "
	       "again if one came during it: %d windows ran again; %d had one in each of %d "
	       "tries and were left out (a hooked window is then compared with the clean "
	       "no-hook window on its other side, or left out too).\n", QUIET_S, b->retried,
	       b->tainted, TRIES);
}

int main(int argc, char **argv)
{
	static struct bench bench;
	struct bench *b = &bench;
	char *rm[] = { "rm", "-rf", b->tmp, NULL };
	static char self[PATH_MAX], jt[PATH_MAX + 16];
	double ns[NLOOP], wall;
	uint64_t t0 = jt_now_ns();
	bool foreign;
	int r, rounds;

	if (!realpath("/proc/self/exe", self)) {
		perror("bench_syscalls: /proc/self/exe");
		return 1;
	}
	if (argc > 1) {
		b->jitrace = argv[1];
	} else {	/* OUT/bench/bench_syscalls: OUT/jitrace */
		snprintf(jt, sizeof(jt), "%.*s/../jitrace", (int)(strrchr(self, '/') - self),
			 self);
		b->jitrace = jt;
	}
	rounds = argc > 2 ? atoi(argv[2]) : 7;
	if (rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: bench_syscalls [JITRACE [ROUNDS (1 to %d)]]\n",
			MAX_ROUNDS);
		return 2;
	}
	if (access(b->jitrace, X_OK)) {
		fprintf(stderr, "bench_syscalls: %s: %s\n", b->jitrace, strerror(errno));
		return 1;
	}
	if (geteuid()) {
		fprintf(stderr, "bench_syscalls: jitrace loads BPF programs: run as root\n");
		return 1;
	}
	snprintf(b->tmp, sizeof(b->tmp), "/tmp/bench_syscalls.XXXXXX");
	if (!mkdtemp(b->tmp)) {
		perror("bench_syscalls: mkdtemp");
		return 1;
	}
	libbpf_set_print(NULL);
	b->skel = oldmaps_bpf__open_and_load();
	if (!b->skel)
		fprintf(stderr, "bench_syscalls: loading bench/oldmaps.bpf.c failed: %s\n",
			strerror(errno));
	fflush(stdout);
	fflush(stderr);
	b->idle = fork();
	if (b->idle == 0) {
		bench_pin(TRACER_CPU);
		pause();
		_exit(0);
	}
	if (b->idle < 0) {
		perror("bench_syscalls: fork");
		return 1;
	}
	bench_pin(WORK_CPU);
	if (setpriority(PRIO_PROCESS, 0, -20))
		fprintf(stderr, "bench_syscalls: nice -20: %s\n", strerror(errno));
	loadavg(b->load0);
	for (r = 0; r < rounds; r++) {
		if (round_of(b, r)) {
			b->failed = r + 1;
			break;
		}
		b->rounds = r + 1;
	}
	if (!b->rounds) {
		fprintf(stderr, "bench_syscalls: the first round failed\n");
		printf("MISSED: bench_syscalls: its first round failed (see its stderr); no "
		       "figures.\n");
	} else {
		/* the programs timed, outside the rounds */
		if (!window(b, K_P, true, ns, &wall, &foreign) &&
		    !window(b, K_A, true, ns, &wall, &foreign) && b->skel)
			window(b, K_BARE, true, ns, &wall, &foreign);
		loadavg(b->load1);
		report(b);
	}
	fflush(stdout);
	kill(b->idle, SIGKILL);
	waitpid(b->idle, NULL, 0);
	oldmaps_bpf__destroy(b->skel);
	bench_run(rm, "/dev/null", "/dev/null");
	fprintf(stderr, "bench_syscalls: %.0f s\n", (jt_now_ns() - t0) / 1e9);
	return 0;
}
