// SPDX-License-Identifier: GPL-2.0
/*
 * Faults during a recording: signals to jitrace (including SIGKILL), a traced process
 * killed, a full disk, a reused pid, a perf map deleted, truncated or rewritten, and a
 * ring-buffer storm. jitrace must finish (or keep) a readable log and count what it lost.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib.h"
#include "session/loader.h"
#include "log/log.h"
#include "session/ringbuf.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Start `jitrace record ARGS...`; returns once it says it is recording. */
static pid_t start_record(char *const argv[], const char *out, const char *err)
{
	pid_t pid = it_spawn(argv, out, err);

	if (!it_wait_for_text(err, "jitrace: recording", 20000))
		fail_msg("jitrace did not start recording (see %s)", err);
	return pid;
}

/* The pid a toy JIT printed first, waiting for it. */
static pid_t toy_pid(const char *out)
{
	struct it_toy toy;

	if (!it_wait_for_text(out, "pid ", 10000))
		fail_msg("no pid line in %s", out);
	it_toy_parse(out, &toy);
	return toy.pid;
}

static bool has_exit(const struct it_log *log, uint32_t pid)
{
	size_t i;

	for (i = 0; i < log->n; i++)
		if (log->recs[i]->type == JT_REC_EXIT &&
		    ((const struct jt_rec_exit *)log->recs[i])->pid == pid)
			return true;
	return false;
}

/* ---- SIGINT, SIGTERM, SIGPIPE and SIGHUP each finish the log ---- */

static void test_signals_finish_the_log(void **state)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGPIPE, SIGHUP };
	char *log_path = it_path_dup("sig.jtl"), *err = it_path_dup("sig.err");
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		char *argv[] = { IT_JITRACE, "record", "-f", "-F", "199", "-o", log_path, NULL };
		struct it_log log;
		pid_t rec;

		rec = start_record(argv, NULL, err);
		sleep_ms(300);
		assert_int_equal(kill(rec, sigs[i]), 0);
		assert_int_equal(it_wait(rec), 0);
		it_log_load(log_path, &log);
		it_check_promises(&log);	/* a clean end record among them */
		print_message("%s: %zu records, clean end\n", strsignal(sigs[i]), log.n);
		it_log_free(&log);
	}
	free(log_path);
	free(err);
}

/* ---- after SIGKILL the log reads up to its last flushed block ---- */

static void test_sigkill_keeps_flushed_blocks(void **state)
{
	char *log_path = it_path_dup("kill9.jtl"), *err = it_path_dup("kill9.err");
	char *tout = it_path_dup("kill9.toy");
	char *toy_argv[] = { IT_TOYJIT, "split", "--ms", "6000", NULL };
	char pid_s[16];
	char *argv[] = { IT_JITRACE, "record", "-f", "-F", "999", "-p", pid_s, "-o", log_path,
			 NULL };
	uint64_t last = 0, samples = 0;
	struct jt_log_reader *r;
	const struct jt_rec_hdr *h;
	pid_t toy, rec;

	(void)state;
	toy = it_spawn(toy_argv, tout, NULL);
	snprintf(pid_s, sizeof(pid_s), "%d", toy_pid(tout));
	rec = start_record(argv, NULL, err);
	sleep_ms(2500);		/* at least one flush (every second) */
	assert_int_equal(kill(rec, SIGKILL), 0);
	assert_int_equal(it_wait(rec), 128 + SIGKILL);
	kill(toy, SIGKILL);
	it_wait(toy);

	r = jt_logr__open(log_path);
	assert_non_null(r);
	while ((h = jt_logr__next(r))) {
		assert_true(h->ts >= last);
		last = h->ts;
		samples += h->type == JT_REC_SAMPLE;
	}
	/* whole blocks only: truncated (or, between blocks, cut clean), never corrupt */
	assert_int_equal(jt_logr__state(r), JT_LOGR_TRUNCATED);
	print_message("after SIGKILL: %llu samples readable; %s\n", (unsigned long long)samples,
		      jt_logr__why(r));
	assert_true(samples > 500);	/* about 2 s at 999 Hz were flushed */
	jt_logr__close(r);
	free(log_path);
	free(err);
	free(tout);
}

/* ---- a traced process killed mid-run ---- */

static void test_traced_process_killed_mid_run(void **state)
{
	char *log_path = it_path_dup("victim.jtl"), *err = it_path_dup("victim.err");
	char *out = it_path_dup("victim.out");
	char *argv[] = { IT_JITRACE, "record", "-f", "-F", "999", "-o", log_path, "--",
			 IT_TOYJIT, "split", "--ms", "8000", NULL };
	struct it_log log;
	pid_t rec, toy;
	uint64_t a, b;

	(void)state;
	rec = start_record(argv, out, err);
	toy = toy_pid(out);
	sleep_ms(1500);
	assert_int_equal(kill(toy, SIGKILL), 0);
	/* jitrace stops when its command ends, and says how it ended */
	assert_int_not_equal(it_wait(rec), 128 + SIGKILL);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_true(has_exit(&log, toy));
	a = it_count_leaf(&log, toy, 0, "hot_a");
	b = it_count_leaf(&log, toy, 0, "hot_b");
	print_message("killed after 1.5 s: hot_a %llu, hot_b %llu samples\n",
		      (unsigned long long)a, (unsigned long long)b);
	assert_true(a > 300 && b > 100);
	it_log_free(&log);
	free(log_path);
	free(err);
	free(out);
}

/* ---- the output disk fills up ---- */

static void test_disk_full(void **state)
{
	char *dir = it_path_dup("full"), *err = it_path_dup("full.err");
	char log_path[512], *text;
	char *argv[] = { IT_JITRACE, "record", "-f", "-F", "999", "--calls", "-o", log_path,
			 "--", IT_TOYJIT, "many", "--methods", "2000", "-i", "--ms", "4000",
			 NULL };
	uint64_t records = 0;
	struct jt_log_reader *r;
	FILE *f;
	long n;
	int status;

	(void)state;
	snprintf(log_path, sizeof(log_path), "%s/out.jtl", dir);
	mkdir(dir, 0700);
	if (mount("tmpfs", dir, "tmpfs", 0, "size=64k"))
		fail_msg("mounting a 64 KiB tmpfs on %s: %s", dir, strerror(errno));
	status = it_run(argv, "/dev/null", err);
	print_message("jitrace exit status %d on a full disk\n", status);
	assert_int_not_equal(status, 0);

	f = fopen(err, "r");
	assert_non_null(f);
	text = calloc(1, 65536);
	n = fread(text, 1, 65535, f);
	fclose(f);
	assert_true(n > 0);
	/* a clear error, once, naming the file and the cause */
	assert_non_null(strstr(text, "out.jtl: write: No space left on device"));

	r = jt_logr__open(log_path);
	assert_non_null(r);
	while (jt_logr__next(r))
		records++;
	print_message("%llu records readable: %s\n", (unsigned long long)records,
		      jt_logr__why(r));
	assert_int_equal(jt_logr__state(r), JT_LOGR_TRUNCATED);
	assert_true(records > 0);
	jt_logr__close(r);
	assert_int_equal(umount(dir), 0);
	free(text);
	free(dir);
	free(err);
}

/* ---- a pid reused by a new process during the recording ---- */

/* Spawn argv so that it gets pid want (through ns_last_pid); the pid it got. */
static pid_t spawn_as(pid_t want, char *const argv[], const char *out)
{
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
	char buf[16];
	int len;
	pid_t got;

	assert_true(fd >= 0);
	len = snprintf(buf, sizeof(buf), "%d", want - 1);
	assert_int_equal(write(fd, buf, len), len);
	close(fd);
	got = it_spawn(argv, out, NULL);
	return got;
}

static void test_pid_reused_during_recording(void **state)
{
	char *log_path = it_path_dup("reuse.jtl"), *err = it_path_dup("reuse.err");
	char *out_a = it_path_dup("reuse_a.out"), *out_b = it_path_dup("reuse_b.out");
	char *argv[] = { IT_JITRACE, "record", "-f", "-F", "999", "-o", log_path, NULL };
	char *old_argv[] = { IT_TOYJIT, "recompile", "--ms", "400", NULL };
	char *new_argv[] = { IT_TOYJIT, "split", "--ms", "1500", NULL };
	uint64_t exec_b = 0, named_b, crossed;
	struct it_log log;
	pid_t rec, a, b = 0;
	size_t i;
	int tries;

	(void)state;
	rec = start_record(argv, NULL, err);
	a = it_spawn(old_argv, out_a, NULL);
	assert_int_equal(it_wait(a), 0);
	for (tries = 0; tries < 20 && b != a; tries++) {
		b = spawn_as(a, new_argv, out_b);
		if (b != a) {	/* another process took the pid first: try again */
			kill(b, SIGKILL);
			it_wait(b);
		}
	}
	assert_int_equal(b, a);
	assert_int_equal(it_wait(b), 0);
	sleep_ms(300);
	assert_int_equal(kill(rec, SIGINT), 0);
	assert_int_equal(it_wait(rec), 0);

	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (i = 0; i < log.n; i++)	/* the second program's exec */
		if (log.recs[i]->type == JT_REC_EXEC &&
		    ((const struct jt_rec_exec *)log.recs[i])->pid == (uint32_t)b)
			exec_b = log.recs[i]->ts;
	assert_true(exec_b > 0);
	named_b = it_count_leaf(&log, b, exec_b, "hot_a") + it_count_leaf(&log, b, exec_b, "hot_b");
	crossed = it_count_leaf(&log, b, exec_b, "old_fn") + it_count_leaf(&log, b, exec_b, "new_fn") +
		  it_count_leaf(&log, b, exec_b, "toy_caller");
	print_message("pid %d reused: %llu samples of the new program named, %llu with the "
		      "old program's names\n", b, (unsigned long long)named_b,
		      (unsigned long long)crossed);
	assert_true(it_count_leaf(&log, a, 0, "old_fn") > 50);	/* the first program was seen */
	assert_true(named_b > 500);
	assert_int_equal(crossed, 0);
	it_log_free(&log);
	free(log_path);
	free(err);
	free(out_a);
	free(out_b);
}

/* ---- a perf map deleted, truncated or rewritten mid-run ---- */

enum map_change { MAP_DELETE, MAP_TRUNCATE, MAP_REWRITE };

static void change_map(pid_t pid, enum map_change how)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	switch (how) {
	case MAP_DELETE:
		assert_int_equal(unlink(path), 0);
		break;
	case MAP_TRUNCATE:
		assert_int_equal(truncate(path, 0), 0);
		break;
	case MAP_REWRITE:	/* rewritten in place, as a runtime reopening it with "w" */
		f = fopen(path, "w");
		assert_non_null(f);
		fputs("this is not a map line\nzz 10 bad_hex\n10 \n1000 10 planted_fn\n", f);
		fclose(f);
		break;
	}
}

static void perf_map_changed_mid_run(enum map_change how, const char *what)
{
	/* files of their own: start_record waits on err, so it must not be a stale one */
	char log_path[512], err[512], out[512];
	char *argv[] = { IT_JITRACE, "record", "-f", "-F", "999", "--no-agent", "-o", log_path,
			 "--", IT_TOYJIT, "recompile", "--ms", "1500", NULL };
	struct it_log log;
	uint64_t old_n, new_n;
	pid_t rec, toy;

	snprintf(log_path, sizeof(log_path), "%s/map_%s.jtl", it_dir(), what);
	snprintf(err, sizeof(err), "%s/map_%s.err", it_dir(), what);
	snprintf(out, sizeof(out), "%s/map_%s.out", it_dir(), what);
	rec = start_record(argv, out, err);
	toy = toy_pid(out);
	sleep_ms(800);		/* in the first phase: old_fn runs, its map line was read */
	change_map(toy, how);
	assert_int_equal(it_wait(rec), 0);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	old_n = it_count_leaf(&log, toy, 0, "old_fn");
	new_n = it_count_leaf(&log, toy, 0, "new_fn");
	print_message("map %s: old_fn %llu, new_fn %llu samples, %llu bad lines counted\n",
		      what, (unsigned long long)old_n, (unsigned long long)new_n,
		      (unsigned long long)it_drops_of(&log, JT_DROP_PERFMAP_LINE));
	assert_true(old_n > 300);	/* named before the change */
	assert_int_equal(it_count_leaf(&log, toy, 0, "planted_fn"), 0);
	if (how == MAP_TRUNCATE)	/* the agent's next line lands in the emptied file */
		assert_true(new_n > 300);
	if (how == MAP_REWRITE)		/* garbage is counted, not fatal */
		assert_true(it_drops_of(&log, JT_DROP_PERFMAP_LINE) >= 2);
	it_log_free(&log);
}

static void test_perf_map_deleted(void **state)
{
	(void)state;
	perf_map_changed_mid_run(MAP_DELETE, "deleted");
}

static void test_perf_map_truncated(void **state)
{
	(void)state;
	perf_map_changed_mid_run(MAP_TRUNCATE, "truncated");
}

static void test_perf_map_rewritten(void **state)
{
	(void)state;
	perf_map_changed_mid_run(MAP_REWRITE, "rewritten");
}

/* ---- a ring-buffer storm: drops counted exactly ---- */

static int count_record(void *ctx, const void *data, size_t len)
{
	(void)data;
	(void)len;
	++*(uint64_t *)ctx;
	return 0;
}

static void test_ringbuf_storm_drops_counted_exactly(void **state)
{
	struct jt_bpf_opts o = { .ringbuf_bytes = 64 * 1024, .attach = false };
	uint64_t produced = 0, dropped = 0, delivered = 0, d;
	uint64_t counters[JT_DROP_MAX] = { 0 };
	struct jt_bpf *b;
	struct jt_rb *rb;
	int round;

	(void)state;
	b = jt_bpf__open(&o);
	assert_non_null(b);
	rb = jt_rb__new(jt_bpf__ringbuf_fd(b), count_record, &delivered);
	assert_non_null(rb);
	for (round = 0; round < 5; round++) {	/* a storm, a drain, another storm */
		assert_int_equal(jt_bpf__storm(b, getpid(), 100000, &d), 0);
		produced += 100000;
		dropped += d;
		assert_true(jt_rb__consume(rb) >= 0);
	}
	assert_int_equal(jt_bpf__drops(b, counters), 0);
	print_message("storm: %llu produced, %llu delivered, %llu dropped (counter %llu)\n",
		      (unsigned long long)produced, (unsigned long long)delivered,
		      (unsigned long long)dropped, (unsigned long long)counters[JT_DROP_RB_CALL]);
	assert_true(dropped > 0);
	assert_int_equal(delivered + dropped, produced);
	assert_int_equal(counters[JT_DROP_RB_CALL], dropped);
	jt_rb__free(rb);
	jt_bpf__close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_signals_finish_the_log),
		cmocka_unit_test(test_sigkill_keeps_flushed_blocks),
		cmocka_unit_test(test_traced_process_killed_mid_run),
		cmocka_unit_test(test_disk_full),
		cmocka_unit_test(test_pid_reused_during_recording),
		cmocka_unit_test(test_perf_map_deleted),
		cmocka_unit_test(test_perf_map_truncated),
		cmocka_unit_test(test_perf_map_rewritten),
		cmocka_unit_test(test_ringbuf_storm_drops_counted_exactly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
