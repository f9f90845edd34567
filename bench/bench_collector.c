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
#include "loader.h"
#include "log.h"
#include "pipeline.h"
#include "ringbuf.h"
#include "util.h"

#define ROUNDS 5

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

/* Returns events/s written; *lost gets the events counted lost. */
static double run(uint64_t total, uint64_t rate, size_t ring, uint64_t *lost, double *mb)
{
	struct jt_bpf_opts bo = { .ringbuf_bytes = ring, .attach = false };
	struct jt_pipeline_opts po = { .window_ns = 100000000, .max_pending = 1 << 20,
				       .proc_root = "/proc" };
	struct jt_log_header hdr = { .start_ns = jt_now_ns() };
	struct jt_log_writer *w = jt_logw__create("/tmp/jitrace-bench-collector.jtl", &hdr, true);
	struct jt_sink sink = jt_logw__sink(w);
	struct producer p = { .total = total, .rate = rate };
	struct jt_pipeline_stats st;
	struct jt_pipeline *pl;
	struct jt_rb *rb;
	pthread_t th;
	uint64_t t0, t1;
	int i;

	p.b = jt_bpf__open(&bo);
	if (!w || !p.b)
		exit(1);
	pl = jt_pipeline__new(&po, &sink);
	rb = jt_rb__new(jt_bpf__ringbuf_fd(p.b), jt_pipeline__on_ring, pl);
	if (!pl || !rb)
		exit(1);
	bench_pin(0);
	t0 = jt_now_ns();
	pthread_create(&th, NULL, produce, &p);
	while (!atomic_load(&p.done)) {
		jt_rb__consume(rb);
		jt_pipeline__tick(pl, jt_now_ns());
		usleep(1000);
	}
	pthread_join(th, NULL);
	jt_rb__consume(rb);
	jt_pipeline__finish(pl);
	jt_logw__flush(w);
	t1 = jt_now_ns();
	jt_pipeline__stats(pl, &st);
	*lost = p.dropped;
	for (i = 0; i < JT_DROP_MAX; i++)
		*lost += i < JT_DROP_BPF_MAX ? 0 : st.lost[i];
	*mb = jt_logw__bytes(w) / 1e6;
	jt_logw__close(w);
	jt_rb__free(rb);
	jt_pipeline__free(pl);
	jt_bpf__close(p.b);
	return st.received / ((t1 - t0) / 1e9);
}

int main(void)
{
	double drain[ROUNDS], paced[ROUNDS], mb;
	uint64_t lost_drain = 0, lost_paced = 0, lost;
	int r;

	for (r = 0; r < ROUNDS; r++) {
		drain[r] = run(20000000, 0, 1U << 30, &lost, &mb);
		lost_drain += lost;
		paced[r] = run(9000000, 3000000, 64 << 20, &lost, &mb);
		lost_paced += lost;
	}
	bench_sort(drain, ROUNDS);
	bench_sort(paced, ROUNDS);
	printf("collector: ring buffer -> reorder -> join -> zlib log, one core, %d rounds\n",
	       ROUNDS);
	printf("  drain 20M events     %6.2f M events/s [%.2f, %.2f]   target >= 3  %s; lost %llu\n",
	       drain[ROUNDS / 2] / 1e6, drain[0] / 1e6, drain[ROUNDS - 1] / 1e6,
	       drain[ROUNDS / 2] >= 3e6 ? "met" : "MISSED", (unsigned long long)lost_drain);
	printf("  paced 3M/s for 3 s   %6.2f M events/s [%.2f, %.2f]   lost %llu (target 0)  %s\n",
	       paced[ROUNDS / 2] / 1e6, paced[0] / 1e6, paced[ROUNDS - 1] / 1e6,
	       (unsigned long long)lost_paced, lost_paced ? "MISSED" : "met");
	printf("  log size for 9M paced events: %.1f MB\n", mb);
	return 0;
}
