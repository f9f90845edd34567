// SPDX-License-Identifier: GPL-2.0
/*
 * Load: 64 toy JIT processes with 10,000 methods each, every call traced, sampled at
 * 999 Hz, until they end (about 60 s). jitrace must not crash, its memory must stay within
 * a bound that holds by design, and whatever it cannot keep up with must be counted.
 */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "jt_events.h"
#include "lib.h"
#include "log/log.h"
#include "join/pipeline.h"

#define PROCS 64
#define METHODS 10000
#define RING_MB 64		/* record's default --ringbuf */

/*
 * What the recorder may hold, by design, in MB:
 * - the ring buffer, mapped once into its address space (user/session/ringbuf.c): RING_MB, all
 *   resident from the start;
 * - every method live on the host: a method object per code range (a 64-byte malloc
 *   chunk for names like "many_1234") with a slot in its process's code map and one in
 *   its id array (at most 16 bytes each), and, when the ring buffer lost its code record,
 *   an 80-byte stand-in for its id as well (calls still name it): 176 bytes a method;
 * - the reorder buffer, bounded at JT_PIPELINE_PENDING_BYTES, at most twice that with
 *   its slot arrays and pool (user/join/reorder.h), however far behind the collector falls;
 * - 48 MB for the rest: the program and its libraries, libbpf's parse of the kernel's
 *   BTF while loading, zlib and log blocks, perf map read buffers, ELF symbol tables.
 * Anything that grows with the load and is not in this list is a leak or a lost bound.
 */
#define RSS_LIMIT_MB (RING_MB + (PROCS * METHODS * 176ULL >> 20) + \
		      2 * (JT_PIPELINE_PENDING_BYTES >> 20) + 48)

struct tally {
	uint64_t by_type[JT_REC_MAX];
	uint64_t calls_ours;	/* enter + leave records of our processes */
	uint64_t others;	/* enter, leave, method or exec records of any other process */
	uint64_t lost[JT_DROP_MAX];
};

static bool is_ours(const pid_t *toys, uint32_t pid)
{
	int i;

	for (i = 0; i < PROCS; i++)
		if ((uint32_t)toys[i] == pid)
			return true;
	return false;
}

/* Streamed, not loaded: the log holds tens of millions of records. */
static void read_log(const char *path, const pid_t *toys, struct tally *t)
{
	struct jt_log_reader *r = jt_logr__open(path);
	const struct jt_rec_hdr *h;
	uint64_t last = 0;

	assert_non_null(r);
	while ((h = jt_logr__next(r))) {
		assert_true(h->ts >= last);
		last = h->ts;
		if (h->type < JT_REC_MAX)
			t->by_type[h->type]++;
		switch (h->type) {
		case JT_REC_ENTER:
		case JT_REC_LEAVE: {
			const struct jt_rec_call *c = (const void *)h;

			if (is_ours(toys, c->pid))
				t->calls_ours++;
			else
				t->others++;
			break;
		}
		case JT_REC_METHOD:
			t->others += !is_ours(toys, ((const struct jt_rec_method *)h)->pid);
			break;
		case JT_REC_EXEC:
			t->others += !is_ours(toys, ((const struct jt_rec_exec *)h)->pid);
			break;
		case JT_REC_DROP: {
			const struct jt_rec_drop *d = (const void *)h;

			if (d->what < JT_DROP_MAX)
				t->lost[d->what] += d->count;
			break;
		}
		}
	}
	assert_int_equal(jt_logr__state(r), JT_LOGR_END);
	jt_logr__close(r);
}

/* The calls a toy JIT made, as it counted them itself ("calls NAME=COUNT" lines). */
static uint64_t toy_calls(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[256];
	uint64_t n = 0;
	const char *eq;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "calls ", 6) && (eq = strchr(line, '=')))
			n += strtoull(eq + 1, NULL, 10);
	fclose(f);
	return n;
}

static void test_64_jits_10k_methods_each_for_60s(void **state)
{
	char *log_path = it_path_dup("load.jtl"), *err = it_path_dup("load.err");
	/* stopped once every toy has ended: -d holds under any load, and a toy still calling
	 * after it would make calls that are neither written nor lost */
	char *argv[] = { IT_JITRACE, "record", "-f", "-a", "--calls", "-F", "999", "-o", log_path,
			 NULL };
	/* about 60 s of wall time each: 64 processes share 2 cores */
	char *toy[] = { IT_TOYJIT, "many", "--methods", "10000", "-i", "--ms", "1500", NULL };
	char *outs[PROCS];
	struct tally t = { 0 };
	uint64_t produced = 0, lost_calls;
	pid_t rec, toys[PROCS];
	struct rusage ru;
	int i, status, ok = 0;

	(void)state;
	rec = it_spawn(argv, NULL, err);
	assert_true(it_wait_for_text(err, "jitrace: recording", 20000));
	for (i = 0; i < PROCS; i++) {
		char name[32];

		snprintf(name, sizeof(name), "toy%d.out", i);
		outs[i] = it_path_dup(name);
		toys[i] = it_spawn(toy, outs[i], "/dev/null");
	}
	for (i = 0; i < PROCS; i++)	/* each checks its own call counts */
		ok += it_wait(toys[i]) == 0;
	kill(rec, SIGINT);
	assert_int_equal(wait4(rec, &status, 0, &ru), rec);
	print_message("jitrace: exit %d, peak RSS %ld MB (bound %llu MB); %d of %d toy JITs ran "
		      "clean\n", WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status),
		      ru.ru_maxrss / 1024, (unsigned long long)RSS_LIMIT_MB, ok, PROCS);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	assert_int_equal(ok, PROCS);
	assert_true((uint64_t)ru.ru_maxrss < RSS_LIMIT_MB * 1024);

	read_log(log_path, toys, &t);
	for (i = 0; i < PROCS; i++) {
		produced += 2 * toy_calls(outs[i]);	/* an enter and a leave each */
		unlink(outs[i]);
		free(outs[i]);
	}
	/* an enter or leave lost anywhere: ring buffer full, a thread's calls buffer full or
	 * forged, too late to order, malformed */
	lost_calls = t.lost[JT_DROP_RB_CALL] + t.lost[JT_DROP_REORDER] + t.lost[JT_DROP_DECODE] +
		     t.lost[JT_DROP_CALLS_FULL] + t.lost[JT_DROP_CALLS_BAD];
	print_message("log: %llu methods, %llu enters, %llu samples, %llu procs; toys made "
		      "%llu enters and leaves, %llu written, %llu counted lost (ring %llu, buffers "
		      "%llu, reorder %llu); %llu records of other processes\n",
		      (unsigned long long)t.by_type[JT_REC_METHOD],
		      (unsigned long long)t.by_type[JT_REC_ENTER],
		      (unsigned long long)t.by_type[JT_REC_SAMPLE],
		      (unsigned long long)t.by_type[JT_REC_PROC], (unsigned long long)produced,
		      (unsigned long long)t.calls_ours, (unsigned long long)lost_calls,
		      (unsigned long long)t.lost[JT_DROP_RB_CALL],
		      (unsigned long long)t.lost[JT_DROP_CALLS_FULL],
		      (unsigned long long)t.lost[JT_DROP_REORDER], (unsigned long long)t.others);
	/*
	 * How much gets through depends on how much CPU the 64 spinning processes leave the
	 * collector (from nearly nothing to millions of calls here); what must hold is that
	 * every event was either written or counted lost. The drop counts are for the whole
	 * host: when no other process shows in the log, they are ours alone and the sum is
	 * exact, but for the reorder stage's count, which is of events of every kind (a sample
	 * or a mapping too late to order counts there as well): the sum may pass what the toys
	 * made by at most that many.
	 */
	assert_true(produced > 10000000);
	assert_true(t.calls_ours <= produced);
	assert_true(t.calls_ours + lost_calls >= produced);
	if (!t.others)
		assert_true(t.calls_ours + lost_calls - produced <= t.lost[JT_DROP_REORDER]);
	assert_true(t.by_type[JT_REC_PROC] >= PROCS);
	assert_true(t.by_type[JT_REC_SAMPLE] > 0);
	assert_true(t.by_type[JT_REC_DROP] >= JT_DROP_MAX);	/* every kind reported */
	unlink(log_path);	/* large; nothing more to learn from it */
	free(log_path);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_64_jits_10k_methods_each_for_60s),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
