// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of a traced enter+leave pair through the agent API, against the floor of this
 * kernel: the same loop under uprobes on the agent's stubs that do nothing. jitrace's side
 * runs its real programs with its real collector draining into a log on the other CPU,
 * once through the agent's per-thread buffers (--calls) and once through the stubs'
 * uprobes (--calls-via uprobe). The loop runs on WORK_CPU at nice -20, the collector on
 * TRACER_CPU, and a pair is timed by the thread's CPU time (which holds the uprobes'
 * kernel time), the wall time beside it. Rounds are interleaved and medians reported; one
 * more round of the floor and of the uprobe path times their BPF programs (bpf_stats).
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sys/resource.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "bare.skel.h"
#include "jitrace/agent.h"
#include "bench.h"
#include "cmd/liveopts.h"
#include "session/live.h"
#include "log/log.h"
#include "base/util.h"

#define PAIRS 2000000
#define BATCH 16000		/* 32,000 calls: half a thread's buffer */
#define PAUSE_NS 25000000	/* between batches: two of the collector's ticks and more */
#define ROUNDS 7
#define WORK_CPU 1		/* the calling loop, at nice -20 */
#define TRACER_CPU 0		/* jitrace's collector, as bench_sampling and bench_syscalls */
#define STUB_HIT_MIN_NS 100	/* below it a pair did not hit the uprobes: it went elsewhere */

/* ns a pair: by the thread's CPU time (uprobes' kernel time included), and by the wall */
struct cost {
	double cpu, wall;
};

/* ns a run of an enter and a leave program, and runs, counted while bpf_stats was on */
struct prog_time {
	double pair_ns, runs;
};

struct drain {
	struct jt_live *live;
	atomic_bool stop;
	bool hold;		/* wait while a batch runs: the ring read only between batches */
	int err;
};

/* Whether the loop is in a timed batch: what a held collector waits out. */
static atomic_bool batch_on;

/*
 * PAIRS pairs in batches of BATCH, only the batches timed, with a pause between them: a
 * thread's buffer holds 65,536 calls and jitrace drains it every 10 ms, so a loop of
 * millions at full speed would measure the cost of a call lost to a full buffer, not of one
 * in the log. The CPU time leaves out what a batch waited for its CPU (other work, or the
 * collector itself where it shares the CPU); the wall time counts it.
 */
static struct cost loop_ns_per_pair(void)
{
	struct timespec pause = { 0, PAUSE_NS };
	uint64_t cpu = 0, wall = 0, c0, w0;
	double n = PAIRS / BATCH * BATCH;
	int i, b;

	for (b = 0; b < PAIRS / BATCH; b++) {
		atomic_store(&batch_on, true);
		w0 = jt_now_ns();
		c0 = bench_cpu_ns();
		for (i = 0; i < BATCH; i++) {
			jitrace_method_enter(1);
			jitrace_method_leave(1);
		}
		cpu += bench_cpu_ns() - c0;
		wall += jt_now_ns() - w0;
		atomic_store(&batch_on, false);
		nanosleep(&pause, NULL);
	}
	return (struct cost){ cpu / n, wall / n };
}

static int drain_tick(void *ctx, uint64_t now)
{
	struct timespec nap = { 0, 100000 };
	struct drain *d = ctx;

	(void)now;
	while (d->hold && atomic_load(&batch_on) && !atomic_load(&d->stop))
		nanosleep(&nap, NULL);
	return atomic_load(&d->stop) ? JT_LIVE_STOP : 0;
}

static void *drain_thread(void *arg)
{
	struct drain *d = arg;

	/*
	 * The collector on the other CPU, at the loop's nice -20 (inherited): at nice 0 it lost
	 * millions of calls a run to other helpers' work on that CPU, and a call lost costs the
	 * loop less than one logged, so the figures flattered.
	 */
	bench_pin(TRACER_CPU);
	d->err = jt_live__run(d->live, drain_tick, d);
	return NULL;
}

/* The run time and runs of every program named enter or leave, summed, into *ns, *runs. */
static void progs_time(const char *enter, const char *leave, double *ns, double *runs)
{
	double r1 = 0, t1 = 0, r2 = 0, t2 = 0;

	bench_progs_named(enter, true, &r1, &t1);
	bench_progs_named(leave, true, &r2, &t2);
	*ns = t1 + t2;
	*runs = r1 + r2;
}

/*
 * The loop, its enter and leave programs (named enter, leave) timed by BPF_ENABLE_STATS if
 * pt is not NULL: ns an enter and a leave run together, into *pt. Stats add two clock
 * reads a run, so the rounds that give the medians run without them.
 */
static struct cost timed_loop(const char *enter, const char *leave, struct prog_time *pt)
{
	double ns0 = 0, runs0 = 0, ns1 = 0, runs1 = 0;
	int stats_fd = -1;
	struct cost c;

	if (pt) {
		stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (stats_fd < 0)
			fprintf(stderr, "bench_calls: BPF_ENABLE_STATS: %s\n", strerror(errno));
		progs_time(enter, leave, &ns0, &runs0);
	}
	c = loop_ns_per_pair();
	if (pt) {
		progs_time(enter, leave, &ns1, &runs1);
		pt->runs = runs1 - runs0;
		pt->pair_ns = stats_fd >= 0 && pt->runs > 0 ? 2 * (ns1 - ns0) / pt->runs : 0;
		if (stats_fd >= 0)
			close(stats_fd);
	}
	return c;
}

static struct cost bare_round(const char *agent, struct prog_time *pt)
{
	struct bare_bpf *skel = bare_bpf__open_and_load();
	/* the stubs the agent calls while no collector drains its buffers */
	LIBBPF_OPTS(bpf_uprobe_opts, oe, .func_name = "jitrace_stub_method_enter");
	LIBBPF_OPTS(bpf_uprobe_opts, ol, .func_name = "jitrace_stub_method_leave");
	struct bpf_link *le, *ll;
	struct cost c;

	if (!skel) {
		fprintf(stderr, "bench_calls: loading the bare probes failed\n");
		exit(1);
	}
	le = bpf_program__attach_uprobe_opts(skel->progs.bare_enter, -1, agent, 0, &oe);
	ll = bpf_program__attach_uprobe_opts(skel->progs.bare_leave, -1, agent, 0, &ol);
	if (!le || !ll) {
		fprintf(stderr, "bench_calls: attaching the bare probes to %s: %s\n", agent,
			strerror(errno));
		exit(1);
	}
	c = timed_loop("bare_enter", "bare_leave", pt);
	bpf_link__destroy(le);
	bpf_link__destroy(ll);
	bare_bpf__destroy(skel);
	return c;
}

/* What the agent adds a call to time it: CLOCK_MONOTONIC through the vDSO. */
static double clock_ns(void)
{
	struct timespec ts;
	uint64_t t0 = jt_now_ns(), sum = 0;
	int i;

	for (i = 0; i < PAIRS; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sum += ts.tv_nsec;
	}
	return (double)(jt_now_ns() - t0 + (sum & 1)) / PAIRS;
}

/* What it adds where the kernel keeps time by the TSC: rdtsc. */
static double tsc_ns(void)
{
	uint64_t t0 = jt_now_ns(), sum = 0;
	int i;

	for (i = 0; i < PAIRS; i++)
		sum += __rdtsc();
	return (double)(jt_now_ns() - t0 + (sum & 1)) / PAIRS;
}

/* What a session delivered and lost, summed over rounds. */
struct tally {
	uint64_t events, lost, full;
	int lossy;		/* rounds that lost any */
	int short_;		/* rounds whose calls did not all reach this session */
};

static struct cost jitrace_round(const char *agent, bool via_uprobe, bool hold, struct tally *t,
				 struct prog_time *pt)
{
	struct jt_live_opts lo;
	struct jt_log_writer *w;
	struct drain d = { 0 };
	struct jt_pipeline_stats st;
	uint64_t lost = 0;
	pthread_t th;
	struct cost c;
	int i;

	jt_liveopts__init(&lo);
	lo.hz = 0;
	lo.calls = true;
	lo.calls_via_uprobe = via_uprobe;
	lo.no_usdt = true;
	lo.agent_path = agent;
	lo.pids[lo.nr_pids++] = getpid();
	d.hold = hold;
	d.live = bench_live(&lo, "/tmp/jitrace-bench-calls.jtl", &w);
	pthread_create(&th, NULL, drain_thread, &d);
	c = timed_loop("jt_enter", "jt_leave", pt);
	atomic_store(&d.stop, true);
	pthread_join(th, NULL);
	if (d.err)
		exit(1);
	jt_live__stats(d.live, &st);
	t->events += st.received;
	for (i = 0; i < JT_DROP_MAX; i++)
		lost += st.lost[i];
	t->lost += lost;
	t->lossy += lost > 0;
	/* fewer than the loop's enters and leaves: another jitrace (-a --calls) took the
	 * process's calls region, and the calls went into its buffers, not through ours */
	t->short_ += st.received + lost < 2ULL * (PAIRS / BATCH * BATCH);
	t->full += st.lost[JT_DROP_CALLS_FULL];
	jt_logw__close(w);
	jt_live__close(d.live);
	return c;
}

/* /proc/loadavg's first figure: how busy the machine was around the rounds. */
static double load1(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

int main(int argc, char **argv)
{
	double none[ROUNDS], bare[ROUNDS], up[ROUNDS], buf[ROUNDS], up_ratio[ROUNDS];
	double buf_ratio[ROUNDS], clk[ROUNDS], tsc[ROUNDS], bare_w[ROUNDS], up_w[ROUNDS];
	double buf_w[ROUNDS], up_ratio_w[ROUNDS], held[ROUNDS], held_ratio[ROUNDS];
	double load0, load_end;
	struct prog_time bare_pt = { 0 }, up_pt = { 0 };
	struct tally upt = { 0 }, heldt = { 0 }, buft = { 0 };
	struct cost c, bare_st, up_st;
	char agent[PATH_MAX];
	int r, tries, taken = 0;

	if (argc != 2 || !realpath(argv[1], agent)) {
		fprintf(stderr, "usage: bench_calls PATH/libjitrace-agent.so\n");
		return 2;
	}
	libbpf_set_print(NULL);
	bench_pin(WORK_CPU);
	if (setpriority(PRIO_PROCESS, 0, -20))
		fprintf(stderr, "bench_calls: nice -20: %s\n", strerror(errno));
	/* the agent makes its calls region with its first code: a method for the calls */
	if (jitrace_code_load(NULL, 0, "bench_calls") != 1) {
		fprintf(stderr, "bench_calls: the agent's first method id is not 1\n");
		return 1;
	}
	load0 = load1();
	/*
	 * Interleaved, so drift hits every condition alike. A round in which the stubs were not
	 * reached (a jitrace recording calls system-wide took this process's calls region: the
	 * calls went into its buffers) is made again, up to ROUNDS more times, and counted.
	 */
	for (r = 0, tries = 0; r < ROUNDS && tries < 2 * ROUNDS; tries++) {
		int short0 = upt.short_ + heldt.short_ + buft.short_;

		none[r] = loop_ns_per_pair().cpu;
		clk[r] = clock_ns();
		tsc[r] = tsc_ns();
		c = bare_round(agent, NULL);
		bare[r] = c.cpu;
		bare_w[r] = c.wall;
		c = jitrace_round(agent, true, false, &upt, NULL);
		up[r] = c.cpu;
		up_w[r] = c.wall;
		held[r] = jitrace_round(agent, true, true, &heldt, NULL).cpu;
		c = jitrace_round(agent, false, false, &buft, NULL);
		buf[r] = c.cpu;
		buf_w[r] = c.wall;
		up_ratio[r] = up[r] / bare[r];
		up_ratio_w[r] = up_w[r] / bare_w[r];
		held_ratio[r] = held[r] / bare[r];
		buf_ratio[r] = buf[r] / bare[r];
		fprintf(stderr, "bench_calls: round %d: floor %.1f ns (wall %.1f), uprobe path "
			"%.1f ns (wall %.1f), %.2fx; held %.2fx; buffers %.1f ns\n", tries + 1,
			bare[r], bare_w[r], up[r], up_w[r], up_ratio[r], held_ratio[r], buf[r]);
		if (bare[r] < STUB_HIT_MIN_NS || up[r] < STUB_HIT_MIN_NS ||
		    held[r] < STUB_HIT_MIN_NS || upt.short_ + heldt.short_ + buft.short_ > short0) {
			fprintf(stderr, "bench_calls: round %d taken by another jitrace: again\n",
				tries + 1);
			taken++;
			continue;
		}
		r++;
	}
	if (r < ROUNDS) {
		fprintf(stderr, "bench_calls: only %d of %d rounds reached the stubs: another "
			"jitrace recording calls system-wide kept this process's calls region\n", r,
			ROUNDS);
		return 1;
	}
	/* one more round of each uprobe condition, their programs timed */
	bare_st = bare_round(agent, &bare_pt);
	up_st = jitrace_round(agent, true, false, &upt, &up_pt);
	load_end = load1();
	bench_sort(up_ratio, ROUNDS);	/* the verdicts below read the medians */
	bench_sort(buf, ROUNDS);
	bench_sort(buf_ratio, ROUNDS);
	bench_sort(clk, ROUNDS);
	bench_sort(tsc, ROUNDS);
	bench_sort(none, ROUNDS);
	printf("## Call tracing: an enter+leave pair through the agent API\n\n");
	printf("One thread calls `jitrace_method_enter(1)` and `jitrace_method_leave(1)` of "
	       "libjitrace-agent.so %d times, in batches of %d, %d ms apart (a thread's buffer "
	       "holds 65,536 calls), pinned to CPU %d at nice -20, in interleaved "
	       "conditions, %d rounds: untraced; under the *floor*, uprobes on the agent's two "
	       "stubs whose BPF programs do nothing (bench/bare.bpf.c); under jitrace's real "
	       "programs through the stubs' uprobes (`--calls-via uprobe`); the same with the "
	       "collector held while a batch runs (it reads the ring only between batches); "
	       "and through the agent's per-thread buffers (`--calls`). jitrace's collector "
	       "drains into a log from a thread pinned to CPU %d, also at nice -20. A batch is "
	       "timed by the thread's CPU time (CLOCK_THREAD_CPUTIME_ID, which holds the "
	       "uprobes' kernel time and leaves out the time the thread waited for its CPU); "
	       "the wall time (CLOCK_MONOTONIC) is beside it, labelled. The agent times a call "
	       "with %s (JITRACE_CALLS_CLOCK=monotonic: clock_gettime). Nanoseconds per pair. "
	       "Load average (1 min) %.2f at the start, %.2f at the end.\n\n",
	       PAIRS, BATCH, PAUSE_NS / 1000000, WORK_CPU, ROUNDS, TRACER_CPU,
	       getenv("JITRACE_CALLS_CLOCK") ? "clock_gettime" :
	       "rdtsc where the kernel's clocksource is the TSC", load0, load_end);
	bench_table_head();
	bench_row("untraced", "", "%.1f", " ns", none, ROUNDS, "");
	bench_row("clock_gettime(CLOCK_MONOTONIC), one (wall)", "", "%.1f", " ns", clk, ROUNDS,
		  "");
	bench_row("rdtsc, one (wall)", "", "%.1f", " ns", tsc, ROUNDS, "");
	bench_row("bare uprobes (the floor)", "", "%.1f", " ns", bare, ROUNDS, "");
	bench_row("jitrace --calls-via uprobe", "", "%.1f", " ns", up, ROUNDS, "");
	bench_row("uprobe path / floor", "<= 1.20x", "%.2f", "x", up_ratio, ROUNDS,
		  up_ratio[ROUNDS / 2] <= 1.2 ? "met" : "MISSED");
	bench_row("uprobe path, collector held during batches / floor", "", "%.2f", "x",
		  held_ratio, ROUNDS, "");
	bench_row("bare uprobes (the floor), wall", "", "%.1f", " ns", bare_w, ROUNDS, "");
	bench_row("jitrace --calls-via uprobe, wall", "", "%.1f", " ns", up_w, ROUNDS, "");
	bench_row("uprobe path / floor, wall", "", "%.2f", "x", up_ratio_w, ROUNDS, "");
	bench_row("jitrace --calls (buffers)", "< 50 ns", "%.1f", " ns", buf, ROUNDS,
		  buf[ROUNDS / 2] < 50 ? "met" : "MISSED");
	bench_row("jitrace --calls (buffers), wall", "", "%.1f", " ns", buf_w, ROUNDS, "");
	bench_row("buffers / floor", "<= 0.05x", "%.3f", "x", buf_ratio, ROUNDS,
		  buf_ratio[ROUNDS / 2] <= 0.05 ? "met" : "MISSED");
	printf("\nEvents delivered to the log, lost (rounds that lost any, of %d): through "
	       "uprobes %llu, %llu (%d); the same, held, %llu, %llu (%d); through the buffers "
	       "%llu, %llu (%d; %llu of them to a full buffer). A round that lost calls times "
	       "some calls lost, not logged, which cost the loop less.\n\n", ROUNDS,
	       (unsigned long long)upt.events, (unsigned long long)upt.lost, upt.lossy,
	       (unsigned long long)heldt.events, (unsigned long long)heldt.lost, heldt.lossy,
	       (unsigned long long)buft.events, (unsigned long long)buft.lost, buft.lossy,
	       (unsigned long long)buft.full);
	printf("The BPF programs, timed in one more round of each with kernel.bpf_stats_enabled "
	       "on (run_time_ns over run_cnt of the enter and the leave program, summed for a "
	       "pair): the floor's %.1f ns a pair (%.0f runs), jitrace's (emit_call: the pid "
	       "filter, a ring reserve and submit) %.1f ns a pair (%.0f runs); the same rounds' "
	       "pairs cost %.1f and %.1f ns of CPU (stats on).\n\n", bare_pt.pair_ns,
	       bare_pt.runs, up_pt.pair_ns, up_pt.runs, bare_st.cpu, up_st.cpu);
	if (up_ratio[ROUNDS / 2] > 1.2)
		printf("MISSED: call tracing through the uprobes (`--calls-via uprobe`): %.2fx the "
		       "floor (target <= 1.20x), of which jitrace's BPF programs, timed, are "
		       "%.1f ns a pair over the floor's.\n\n", up_ratio[ROUNDS / 2],
		       up_pt.pair_ns - bare_pt.pair_ns);
	if (buf[ROUNDS / 2] >= 50)
		printf("MISSED: a recorded pair through the buffers costs %.1f ns (goal < 50 ns): "
		       "two clock reads (CLOCK_MONOTONIC %.1f ns here, rdtsc %.1f ns) are much "
		       "of it.\n\n", buf[ROUNDS / 2], clk[ROUNDS / 2], tsc[ROUNDS / 2]);
	if (taken)
		printf("%d round%s did not reach the stubs (another jitrace recording calls "
		       "system-wide had taken this process's calls region, so the calls went into "
		       "its buffers) and %s made again; the figures are from the %d that did.\n\n",
		       taken, taken == 1 ? "" : "s", taken == 1 ? "was" : "were", ROUNDS);
	if (none[ROUNDS - 1] > 50)	/* a bare call of the stubs is a few ns */
		printf("**Warning:** an untraced round took %.0f ns per pair: something else had "
		       "uprobes on the stubs then (another jitrace recording with --calls?), so "
		       "these figures are not clean.\n\n", none[ROUNDS - 1]);
	return 0;
}
