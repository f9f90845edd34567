// SPDX-License-Identifier: GPL-2.0
/*
 * Collector throughput: events from the BPF ring buffer through decode, reorder, join,
 * method definitions and compression into a log file, on one core. A BPF program
 * (jt_storm) produces enter/leave events on the other core.
 *   drain: the producer runs flat out into a ring large enough to hold everything, and the
 *          collector's rate is events / time to write them all;
 *   paced: the producer holds a fixed rate for a while; every event is either delivered
 *          or counted lost, and at 3 M/s none may be lost.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "cmd/liveopts.h"
#include "session/live.h"
#include "session/loader.h"
#include "log/log.h"
#include "base/util.h"

#define ROUNDS 5
#define SUSTAIN_S 60

struct producer {
	struct jt_bpf *b;
	uint64_t total;		/* events to produce */
	uint64_t rate;		/* per second, 0: flat out */
	uint64_t dropped;
	atomic_bool done;
};

static void *produce(void *arg)
{
	struct producer *p = arg;
	uint64_t made = 0, chunk = p->rate ? p->rate / 1000 : 1 << 20, t0 = jt_now_ns();

	bench_pin(1);
	while (made < p->total) {
		uint64_t n = p->total - made < chunk ? p->total - made : chunk, d = 0;

		if (jt_bpf__storm(p->b, getpid(), n, &d))
			exit(1);
		p->dropped += d;
		made += n;
		if (p->rate) {	/* hold the rate: wait for the next millisecond's share */
			uint64_t due = t0 + made * 1000000000ULL / p->rate;

			while (jt_now_ns() < due)
				usleep(100);
		}
	}
	atomic_store(&p->done, true);
	return NULL;
}

static int producer_done(void *ctx, uint64_t now)
{
	struct producer *p = ctx;

	(void)now;
	return atomic_load(&p->done) ? JT_LIVE_STOP : 0;
}

/* Returns events/s written; *lost gets the events counted lost. */
static double run(uint64_t total, uint64_t rate, size_t ring, uint64_t *lost, double *mb)
{
	struct producer p = { .total = total, .rate = rate };
	struct jt_live_opts lo;
	struct jt_pipeline_stats st;
	struct jt_log_writer *w;
	struct jt_live *live;
	pthread_t th;
	uint64_t t0, t1;
	int i, err;

	jt_liveopts__init(&lo);
	lo.hz = 0;
	lo.ringbuf_bytes = ring;
	lo.no_usdt = true;
	lo.load_only = true;	/* jt_storm is the only producer */
	live = bench_live(&lo, "/tmp/jitrace-bench-collector.jtl", &w);
	p.b = jt_live__bpf(live);
	bench_pin(0);
	t0 = jt_now_ns();
	pthread_create(&th, NULL, produce, &p);
	err = jt_live__run(live, producer_done, &p);	/* polls as `jitrace record` does */
	pthread_join(th, NULL);
	if (err)
		exit(1);
	jt_logw__flush(w);
	t1 = jt_now_ns();
	jt_live__stats(live, &st);
	*lost = p.dropped;
	for (i = 0; i < JT_DROP_MAX; i++)
		*lost += JT_DROP_BY_BPF(i) ? 0 : st.lost[i];
	*mb = jt_logw__bytes(w) / 1e6;
	jt_logw__close(w);
	jt_live__close(live);
	return st.received / ((t1 - t0) / 1e9);
}

int main(void)
{
	double drain[ROUNDS], paced[ROUNDS], sus, mb, lost_sus;
	uint64_t lost_drain = 0, lost_paced = 0, lost, t0 = jt_now_ns();
	int r;

	for (r = 0; r < ROUNDS; r++) {
		fprintf(stderr, "bench_collector: round %d of %d\n", r + 1, ROUNDS);
		drain[r] = run(20000000, 0, 1U << 30, &lost, &mb);
		lost_drain += lost;
		paced[r] = run(9000000, 3000000, 64 << 20, &lost, &mb);
		lost_paced += lost;
	}
	fprintf(stderr, "bench_collector: 1 M events/s for 60 s\n");
	sus = run(SUSTAIN_S * 1000000ULL, 1000000, 64 << 20, &lost, &mb);
	lost_sus = lost;
	printf("## Collector throughput\n\n");
	printf("A BPF program (`jt_storm`, run with BPF_PROG_TEST_RUN from a thread on CPU 1) "
	       "writes enter/leave events of one process into the ring buffer; jitrace's "
	       "collector, pinned to CPU 0, takes them through decode, reorder, join, method "
	       "definitions and zlib compression into a log file, polling as `jitrace record` "
	       "does. *Drain*: 20M events written flat out into a 1 GiB ring; the rate is "
	       "events over the time until all are in the log. *Paced*: 9M events at 3M/s into "
	       "record's default 64 MiB ring; every event is delivered or counted lost. "
	       "%d rounds, interleaved; then one sustained run at 1M events/s for %d s.\n\n",
	       ROUNDS, SUSTAIN_S);
	for (r = 0; r < ROUNDS; r++) {
		drain[r] /= 1e6;
		paced[r] /= 1e6;
	}
	bench_table_head();
	bench_row("drain, 20M events", ">= 3 M/s", "%.2f", " M/s", drain, ROUNDS,
		  drain[ROUNDS / 2] >= 3 ? "met" : "MISSED");
	bench_row("paced 3M/s for 3 s", "", "%.2f", " M/s", paced, ROUNDS, "");
	printf("| events lost, paced 3M/s, all rounds |  | **%llu** | | |  |\n",
	       (unsigned long long)lost_paced);
	printf("| events lost, 1M/s for %d s (%.0f M events) | 0 | **%.0f** | | | %s |\n",
	       SUSTAIN_S, SUSTAIN_S * 1.0, lost_sus, lost_sus ? "MISSED" : "met");
	printf("\nThe sustained run delivered %.2f M events/s; its log is %.1f MB. Lost in the "
	       "drain rounds (a 1 GiB ring holds them all): %llu. Took %.0f s.\n\n", sus / 1e6,
	       mb, (unsigned long long)lost_drain, (jt_now_ns() - t0) / 1e9);
	if (drain[ROUNDS / 2] < 3)
		printf("MISSED: the collector takes %.2f M events/s on one core (target 3).\n",
		       drain[ROUNDS / 2]);
	if (lost_sus)
		printf("MISSED: %.0f events lost at a sustained 1M/s for %d s (target 0).\n",
		       lost_sus, SUSTAIN_S);
	return 0;
}
