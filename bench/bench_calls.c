// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of a traced enter+leave pair through the agent API, against the floor of this
 * kernel: the same loop under uprobes on the agent's stubs that do nothing. jitrace's side
 * runs its real programs with its real collector draining into a log on the other CPU,
 * once through the agent's per-thread buffers (--calls) and once through the stubs'
 * uprobes (--calls-via uprobe). Rounds are interleaved and medians reported.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
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

struct drain {
	struct jt_live *live;
	atomic_bool stop;
	int err;
};

/*
 * PAIRS pairs in batches of BATCH, only the batches timed, with a pause between them: a
 * thread's buffer holds 65,536 calls and jitrace drains it every 10 ms, so a loop of
 * millions at full speed would measure the cost of a call lost to a full buffer, not of one
 * in the log.
 */
static double loop_ns_per_pair(void)
{
	struct timespec pause = { 0, PAUSE_NS };
	uint64_t spent = 0, t0;
	int i, b;

	for (b = 0; b < PAIRS / BATCH; b++) {
		t0 = jt_now_ns();
		for (i = 0; i < BATCH; i++) {
			jitrace_method_enter(1);
			jitrace_method_leave(1);
		}
		spent += jt_now_ns() - t0;
		nanosleep(&pause, NULL);
	}
	return (double)spent / (PAIRS / BATCH * BATCH);
}

static int drain_tick(void *ctx, uint64_t now)
{
	struct drain *d = ctx;

	(void)now;
	return atomic_load(&d->stop) ? JT_LIVE_STOP : 0;
}

static void *drain_thread(void *arg)
{
	struct drain *d = arg;

	bench_pin(1);		/* the collector on its own CPU, as `jitrace record` would be */
	d->err = jt_live__run(d->live, drain_tick, d);
	return NULL;
}

static double bare_round(const char *agent)
{
	struct bare_bpf *skel = bare_bpf__open_and_load();
	/* the stubs the agent calls while no collector drains its buffers */
	LIBBPF_OPTS(bpf_uprobe_opts, oe, .func_name = "jitrace_stub_method_enter");
	LIBBPF_OPTS(bpf_uprobe_opts, ol, .func_name = "jitrace_stub_method_leave");
	struct bpf_link *le, *ll;
	double ns;

	if (!skel) {
		fprintf(stderr, "bench_calls: loading the bare probes failed\n");
		exit(1);
	}
	le = bpf_program__attach_uprobe_opts(skel->progs.bare_enter, -1, agent, 0, &oe);
	ll = bpf_program__attach_uprobe_opts(skel->progs.bare_leave, -1, agent, 0, &ol);
	if (!le || !ll) {
		fprintf(stderr, "bench_calls: attaching the bare probes: %s\n", strerror(errno));
		exit(1);
	}
	ns = loop_ns_per_pair();
	bpf_link__destroy(le);
	bpf_link__destroy(ll);
	bare_bpf__destroy(skel);
	return ns;
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

static double jitrace_round(const char *agent, bool via_uprobe, uint64_t *events, uint64_t *lost,
			    uint64_t *full)
{
	struct jt_live_opts lo;
	struct jt_log_writer *w;
	struct drain d = { 0 };
	struct jt_pipeline_stats st;
	pthread_t th;
	double ns;
	int i;

	jt_liveopts__init(&lo);
	lo.hz = 0;
	lo.calls = true;
	lo.calls_via_uprobe = via_uprobe;
	lo.no_usdt = true;
	lo.agent_path = agent;
	lo.pids[lo.nr_pids++] = getpid();
	d.live = bench_live(&lo, "/tmp/jitrace-bench-calls.jtl", &w);
	pthread_create(&th, NULL, drain_thread, &d);
	ns = loop_ns_per_pair();
	atomic_store(&d.stop, true);
	pthread_join(th, NULL);
	if (d.err)
		exit(1);
	jt_live__stats(d.live, &st);
	*events = st.received;
	*lost = 0;
	for (i = 0; i < JT_DROP_MAX; i++)
		*lost += st.lost[i];
	*full = st.lost[JT_DROP_CALLS_FULL];
	jt_logw__close(w);
	jt_live__close(d.live);
	return ns;
}

int main(int argc, char **argv)
{
	double none[ROUNDS], bare[ROUNDS], up[ROUNDS], buf[ROUNDS], up_ratio[ROUNDS];
	double buf_ratio[ROUNDS], clk[ROUNDS], tsc[ROUNDS];
	char agent[PATH_MAX];
	uint64_t up_events = 0, up_lost = 0, buf_events = 0, buf_lost = 0, buf_full = 0, ev, lo;
	uint64_t full;
	int r;

	if (argc != 2 || !realpath(argv[1], agent)) {
		fprintf(stderr, "usage: bench_calls PATH/libjitrace-agent.so\n");
		return 2;
	}
	libbpf_set_print(NULL);
	bench_pin(0);
	/* the agent makes its calls region with its first code: a method for the calls */
	if (jitrace_code_load(NULL, 0, "bench_calls") != 1) {
		fprintf(stderr, "bench_calls: the agent's first method id is not 1\n");
		return 1;
	}
	for (r = 0; r < ROUNDS; r++) {	/* interleaved, so drift hits all four alike */
		none[r] = loop_ns_per_pair();
		clk[r] = clock_ns();
		tsc[r] = tsc_ns();
		bare[r] = bare_round(agent);
		up[r] = jitrace_round(agent, true, &ev, &lo, &full);
		up_events += ev;
		up_lost += lo;
		buf[r] = jitrace_round(agent, false, &ev, &lo, &full);
		buf_events += ev;
		buf_lost += lo;
		buf_full += full;
		up_ratio[r] = up[r] / bare[r];
		buf_ratio[r] = buf[r] / bare[r];
	}
	bench_sort(up_ratio, ROUNDS);	/* the verdicts below read the medians */
	bench_sort(buf, ROUNDS);
	bench_sort(buf_ratio, ROUNDS);
	bench_sort(clk, ROUNDS);
	bench_sort(tsc, ROUNDS);
	printf("## Call tracing: an enter+leave pair through the agent API\n\n");
	printf("One thread calls `jitrace_method_enter(1)` and `jitrace_method_leave(1)` of "
	       "libjitrace-agent.so %d times, in batches of %d timed with CLOCK_MONOTONIC and "
	       "%d ms apart (a thread's buffer holds 65,536 calls), in four interleaved "
	       "conditions, %d rounds: untraced; under the *floor*, uprobes on the agent's two "
	       "stubs whose BPF programs do nothing (bench/bare.bpf.c); under jitrace's real "
	       "programs through the stubs' uprobes (`--calls-via uprobe`); and through the "
	       "agent's per-thread buffers (`--calls`), each with jitrace's collector draining "
	       "into a log on the other CPU. The agent times a call with %s "
	       "(JITRACE_CALLS_CLOCK=monotonic: clock_gettime). Nanoseconds per pair.\n\n",
	       PAIRS, BATCH, PAUSE_NS / 1000000, ROUNDS,
	       getenv("JITRACE_CALLS_CLOCK") ? "clock_gettime" :
	       "rdtsc where the kernel's clocksource is the TSC");
	bench_table_head();
	bench_row("untraced", "", "%.1f", " ns", none, ROUNDS, "");
	bench_row("clock_gettime(CLOCK_MONOTONIC), one", "", "%.1f", " ns", clk, ROUNDS, "");
	bench_row("rdtsc, one", "", "%.1f", " ns", tsc, ROUNDS, "");
	bench_row("bare uprobes (the floor)", "", "%.1f", " ns", bare, ROUNDS, "");
	bench_row("jitrace --calls-via uprobe", "", "%.1f", " ns", up, ROUNDS, "");
	bench_row("uprobe path / floor", "<= 1.20x", "%.2f", "x", up_ratio, ROUNDS,
		  up_ratio[ROUNDS / 2] <= 1.2 ? "met" : "MISSED");
	bench_row("jitrace --calls (buffers)", "< 50 ns", "%.1f", " ns", buf, ROUNDS,
		  buf[ROUNDS / 2] < 50 ? "met" : "MISSED");
	bench_row("buffers / floor", "<= 0.05x", "%.3f", "x", buf_ratio, ROUNDS,
		  buf_ratio[ROUNDS / 2] <= 0.05 ? "met" : "MISSED");
	printf("\nEvents delivered to the log, lost: through uprobes %llu, %llu; through the "
	       "buffers %llu, %llu (%llu of them to a full buffer).\n\n",
	       (unsigned long long)up_events, (unsigned long long)up_lost,
	       (unsigned long long)buf_events, (unsigned long long)buf_lost,
	       (unsigned long long)buf_full);
	if (buf[ROUNDS / 2] >= 50)
		printf("MISSED: a recorded pair through the buffers costs %.1f ns (goal < 50 ns): "
		       "two clock reads (CLOCK_MONOTONIC %.1f ns here, rdtsc %.1f ns) are much "
		       "of it.\n\n", buf[ROUNDS / 2], clk[ROUNDS / 2], tsc[ROUNDS / 2]);
	if (none[ROUNDS - 1] > 50)	/* a bare call of the stubs is a few ns */
		printf("**Warning:** an untraced round took %.0f ns per pair: something else had "
		       "uprobes on the stubs then (another jitrace recording with --calls?), so "
		       "these figures are not clean.\n\n", none[ROUNDS - 1]);
	return 0;
}
