// SPDX-License-Identifier: GPL-2.0
/*
 * Output files from the outside: each command that writes one, failing (missing, corrupt or
 * empty input, a command that cannot run) or killed part way, leaves its target absent or
 * as it was; another user swapping a directory on the way cannot make root remove a file.
 * Needs root (it records, and it runs a process as nobody).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib.h"
#include "../unit/scratch.h"
#include "../unit/viewlog.h"

#define NOBODY 65534
#define BIG_SAMPLES 1000000	/* a log whose speedscope export takes a while */
#define BIG_LEAVES 64
#define RACE_RUNS 300

struct fixture {
	char *nocalls;		/* a good log recorded without --calls: nothing for chrome */
	char *corrupt;		/* a log with a byte of its block flipped */
	char *missing;		/* no file */
	char *big;		/* BIG_SAMPLES samples */
};

/* A command writing OUT from IN, NULL-terminated; "IN" and "OUT" are replaced. */
struct cmd {
	const char *what;
	const char *argv[8];
};

static const struct cmd cmds[] = {
	{ "export pprof", { "export", "--format", "pprof", "IN", "-o", "OUT" } },
	{ "export speedscope", { "export", "--format", "speedscope", "IN", "-o", "OUT" } },
	{ "export chrome", { "export", "--format", "chrome", "IN", "-o", "OUT" } },
	{ "flamegraph", { "flamegraph", "IN", "-o", "OUT" } },
	{ "flamegraph --folded", { "flamegraph", "--folded", "IN", "-o", "OUT" } },
};

#define NR_CMDS (sizeof(cmds) / sizeof(cmds[0]))

/* BIG_SAMPLES samples, their leaves cycling through BIG_LEAVES methods (none merge). */
static void write_big(const char *path)
{
	struct jt_frame stack[] = { M(1, 0x10), M(BIG_LEAVES + 1, 0x20), M(BIG_LEAVES + 2, 0x30) };
	struct jt_log_header h = { .start_ns = VL_T0, .ncpus = 2, .sample_hz = 1000 };
	struct jt_log_writer *w = jt_logw__create(path, &h, true);
	char name[32];
	uint64_t ts = VL_MS;
	unsigned i;

	assert_non_null(w);
	vl_proc(w, 0, VL_JVM, "java", "java -jar big.jar");
	for (i = 1; i <= BIG_LEAVES + 2; i++) {
		snprintf(name, sizeof(name), "Big.m%u()", i);
		vl_method(w, 0, i, VL_JVM, name);
	}
	for (i = 0; i < BIG_SAMPLES; i++) {
		stack[0].ref = JT_FRAME_REF(JT_FRAME_METHOD, 1 + i % BIG_LEAVES);
		vl_samples(w, &ts, VL_JVM, 1, stack, 3);
	}
	assert_int_equal(jt_logw__close(w), 0);
}

static void flip_byte(const char *path, off_t at)
{
	int fd = open(path, O_RDWR);
	unsigned char c;

	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &c, 1, at), 1);
	c ^= 0x40;
	assert_int_equal(pwrite(fd, &c, 1, at), 1);
	close(fd);
}

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	struct stat st;

	if (!fx)
		return -1;
	fx->nocalls = it_path_dup("nocalls.jtl");
	fx->corrupt = it_path_dup("corrupt.jtl");
	fx->missing = it_path_dup("missing.jtl");
	fx->big = it_path_dup("big.jtl");
	vl_write_deep(fx->nocalls);
	vl_write(fx->corrupt);		/* with calls: only its damage makes chrome fail */
	if (stat(fx->corrupt, &st))
		return -1;
	flip_byte(fx->corrupt, st.st_size / 2);	/* inside its compressed block */
	write_big(fx->big);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;

	unlink(fx->big);	/* megabytes */
	free(fx->nocalls);
	free(fx->corrupt);
	free(fx->missing);
	free(fx->big);
	free(fx);
	return 0;
}

/* A new empty directory under the test's own, for one case. */
static char *fresh_dir(const char *name)
{
	char *dir = it_path_dup(name);

	assert_int_equal(mkdir(dir, 0700), 0);
	return dir;
}

static char *join(const char *dir, const char *name)
{
	char *p;

	assert_true(asprintf(&p, "%s/%s", dir, name) > 0);
	return p;
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* path holds text, or (text NULL) is absent. */
static void assert_target(const char *path, const char *text, const char *what)
{
	struct stat st;
	char *got;

	if (!text) {
		if (!lstat(path, &st))
			fail_msg("%s: %s was left behind (%lld bytes)", what, path,
				 (long long)st.st_size);
		return;
	}
	got = it_slurp(path);
	if (strcmp(got, text))
		fail_msg("%s: %s holds %.60s, not the old file", what, path, got);
	free(got);
}

/* Start cmd on in, writing out (with -f if force); stderr to err. */
static pid_t start_cmd(const struct cmd *c, const char *in, const char *out, bool force,
		       const char *err)
{
	char *argv[16];
	int n = 0, i;

	argv[n++] = IT_JITRACE;
	for (i = 0; c->argv[i]; i++)
		argv[n++] = (char *)(!strcmp(c->argv[i], "IN") ? in :
				     !strcmp(c->argv[i], "OUT") ? out : c->argv[i]);
	if (force)
		argv[n++] = "-f";
	argv[n] = NULL;
	return it_spawn(argv, "/dev/null", err);
}

/*
 * Each command failing each way, with no target and with -f over an old one: exit 1, the
 * target absent or old, nothing else left in its directory.
 */
static void test_failed_output_leaves_target_as_it_was(void **state)
{
	struct fixture *fx = *state;
	const struct {
		const char *name;
		const char *log;
		bool chrome_only;	/* nothing to export: only chrome needs calls */
	} inputs[] = {
		{ "missing", fx->missing, false },
		{ "corrupt", fx->corrupt, false },
		{ "nothing to export", fx->nocalls, true },
	};
	char *dir = fresh_dir("failing"), *out = join(dir, "out.data");
	char *err = it_path_dup("failing.err"), what[128];
	size_t i, k;
	int force, rc, runs = 0;

	for (i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		for (k = 0; k < NR_CMDS; k++) {
			if (inputs[i].chrome_only && strcmp(cmds[k].what, "export chrome"))
				continue;
			for (force = 0; force <= 1; force++) {
				snprintf(what, sizeof(what), "%s%s, %s input", cmds[k].what,
					 force ? " -f" : "", inputs[i].name);
				if (force)
					put(out, "old\n");
				rc = it_wait(start_cmd(&cmds[k], inputs[i].log, out, force, err));
				if (rc != 1) {
					char *text = it_slurp(err);

					fail_msg("%s: exit %d, not 1; stderr:\n%s", what, rc, text);
				}
				assert_target(out, force ? "old\n" : NULL, what);
				assert_int_equal(scratch_entries(dir), force);
				unlink(out);
				runs++;
			}
		}
	}
	print_message("%d failing runs: every target absent or old, nothing beside it\n", runs);
	free(err);
	free(out);
	free(dir);
}

/* Without -f an existing target is refused before the log is even read; with -f replaced. */
static void test_existing_target_refused_then_replaced_whole(void **state)
{
	struct fixture *fx = *state;
	char *dir = fresh_dir("existing"), *out = join(dir, "out.data");
	char *err = it_path_dup("existing.err"), *text;
	size_t k;

	for (k = 0; k < NR_CMDS; k++) {
		if (!strcmp(cmds[k].what, "export chrome"))
			continue;
		put(out, "old\n");
		/* the missing log would fail too: the refusal comes first */
		assert_int_equal(it_wait(start_cmd(&cmds[k], fx->missing, out, false, err)), 1);
		text = it_slurp(err);
		if (!strstr(text, "already exists (-f, --force replaces it)") ||
		    strstr(text, fx->missing))
			fail_msg("%s: not refused first:\n%s", cmds[k].what, text);
		free(text);
		assert_target(out, "old\n", cmds[k].what);

		assert_int_equal(it_wait(start_cmd(&cmds[k], fx->nocalls, out, true, err)), 0);
		text = it_slurp(out);
		assert_string_not_equal(text, "old\n");
		free(text);
		assert_int_equal(scratch_entries(dir), 1);
		unlink(out);
	}
	free(err);
	free(out);
	free(dir);
}

/*
 * SIGKILL while the export runs (it is still running when killed): the target is the old
 * file, or absent, and no partial file is left beside it. The kill comes at a share of how
 * long a whole run takes here, sooner again if the run was over first (a busy machine).
 */
static void test_killed_output_leaves_target_as_it_was(void **state)
{
	struct fixture *fx = *state;
	const struct cmd *speedscope = &cmds[1];
	char *dir = fresh_dir("killed"), *out = join(dir, "out.json");
	char *err = it_path_dup("killed.err");
	uint64_t t0, whole_us, delay_us;
	int force, rc, tries, kills = 0, here;
	pid_t pid;

	t0 = jt_now_ns();
	assert_int_equal(it_wait(start_cmd(speedscope, fx->big, out, false, err)), 0);
	whole_us = (jt_now_ns() - t0) / 1000;
	unlink(out);
	for (force = 0; force <= 1; force++) {
		/* two kills each way, at half the time, a quarter, ... */
		for (delay_us = whole_us / 2, tries = here = 0; here < 2 && tries < 8;
		     delay_us /= 2, tries++) {
			if (force)
				put(out, "old\n");
			pid = start_cmd(speedscope, fx->big, out, force, err);
			usleep(delay_us);
			kill(pid, SIGKILL);
			rc = it_wait(pid);
			if (rc == 128 + SIGKILL) {
				assert_target(out, force ? "old\n" : NULL,
					      force ? "killed -f" : "killed");
				assert_int_equal(scratch_entries(dir), force);
				here++;
				kills++;
			} else {
				assert_int_equal(rc, 0);	/* over before the kill */
			}
			unlink(out);
		}
	}
	print_message("a whole export: %.2f s; %d runs killed part way\n", whole_us / 1e6, kills);
	assert_int_equal(kills, 4);
	free(err);
	free(out);
	free(dir);
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

/*
 * As nobody, owner of HOME: swap HOME/reports (a directory) with HOME/swap (a symlink to
 * root's 0700 directory) in a tight loop. Writes a byte to ready first.
 */
static void swap_as_nobody(const char *home, int ready)
{
	if (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	    setresuid(NOBODY, NOBODY, NOBODY) || chdir(home))
		_exit(2);
	if (write(ready, "r", 1) != 1)
		_exit(2);
	for (;;)
		renameat2(AT_FDCWD, "reports", AT_FDCWD, "swap", RENAME_EXCHANGE);
}

/*
 * The attack of issue 30: root exports into a directory that another user owns and swaps
 * for a symlink to a root-only directory holding a file of the same name, while the export
 * fails (no calls). Run many times, with and without -f: root's file survives each, and the
 * real directory is left as it was (no file).
 */
static void test_directory_swap_cannot_make_root_remove_a_file(void **state)
{
	struct fixture *fx = *state;
	const struct cmd *chrome = &cmds[2];
	char base[] = "/tmp/jitrace-swap.XXXXXX", *home, *secret, *precious, *out, *reports;
	char *err = it_path_dup("swap.err"), *link_target, c, *text;
	int pipefd[2], i, refused = 0, failed = 0;
	struct stat st;
	pid_t swapper;

	assert_non_null(mkdtemp(base));
	assert_int_equal(chmod(base, 0755), 0);
	home = join(base, "home");
	secret = join(base, "secret");
	precious = join(secret, "k5.json");
	out = join(home, "reports/k5.json");
	reports = join(home, "reports");
	assert_int_equal(mkdir(home, 0755), 0);
	assert_int_equal(chown(home, NOBODY, NOBODY), 0);
	assert_int_equal(mkdir(reports, 0755), 0);
	assert_int_equal(chown(reports, NOBODY, NOBODY), 0);
	assert_int_equal(mkdir(secret, 0700), 0);
	put(precious, "root's own\n");
	link_target = join(home, "swap");
	assert_int_equal(symlink(secret, link_target), 0);
	assert_int_equal(lchown(link_target, NOBODY, NOBODY), 0);

	assert_int_equal(pipe(pipefd), 0);
	swapper = fork();
	assert_true(swapper >= 0);
	if (!swapper)
		swap_as_nobody(home, pipefd[1]);
	close(pipefd[1]);
	assert_int_equal(read(pipefd[0], &c, 1), 1);
	close(pipefd[0]);

	for (i = 0; i < RACE_RUNS; i++) {
		int rc = it_wait(start_cmd(chrome, fx->nocalls, out, i & 1, err));

		text = it_slurp(err);
		refused += strstr(text, "owned by uid 65534") != NULL;
		failed += strstr(text, "no enter/leave") != NULL;
		free(text);
		if (rc != 1 || access(precious, F_OK)) {
			kill(swapper, SIGKILL);
			it_wait(swapper);
			fail_msg("run %d (%s): exit %d, %s", i, i & 1 ? "-f" : "no -f", rc,
				 access(precious, F_OK) ? "root's file was removed" : "");
		}
	}
	kill(swapper, SIGKILL);
	it_wait(swapper);
	print_message("%d runs against the swap: %d refused the symlink, %d wrote and failed; "
		      "root's file intact\n", RACE_RUNS, refused, failed);
	assert_true(failed > 0);	/* the race was run: some reached the real directory */
	text = it_slurp(precious);
	assert_string_equal(text, "root's own\n");
	free(text);
	/* the real directory, under whichever name the swap left it, holds no file either */
	assert_int_equal(lstat(reports, &st), 0);
	assert_int_equal(scratch_entries(S_ISDIR(st.st_mode) ? reports : link_target), 0);
	nftw(base, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	free(link_target);
	free(reports);
	free(out);
	free(precious);
	free(secret);
	free(home);
	free(err);
}

/* ---- record: its log is placed once the recording has begun ---- */

static int record(const char *out, bool force, const char *err, const char *cmd)
{
	char *argv[] = { IT_JITRACE, "record", "-F", "99", "-o", (char *)out, "--", (char *)cmd,
			 NULL };
	char *forced[] = { IT_JITRACE, "record", "-f", "-F", "99", "-o", (char *)out, "--",
			   (char *)cmd, NULL };

	return it_run(force ? forced : argv, "/dev/null", err);
}

/* A command that cannot run: exit 1, no log (not even a header), an old one kept with -f. */
static void test_record_that_never_began_leaves_nothing(void **state)
{
	char *dir = fresh_dir("record-never"), *out = join(dir, "x.jtl");
	char *err = it_path_dup("record-never.err"), *text;

	(void)state;
	assert_int_equal(record(out, false, err, "/nonexistent"), 1);
	assert_target(out, NULL, "record of /nonexistent");
	assert_int_equal(scratch_entries(dir), 0);
	/* so the same command says the same thing again, not "already exists" */
	assert_int_equal(record(out, false, err, "/nonexistent"), 1);
	text = it_slurp(err);
	assert_null(strstr(text, "already exists"));
	free(text);
	assert_target(out, NULL, "record of /nonexistent, again");

	put(out, "old\n");
	assert_int_equal(record(out, true, err, "/nonexistent"), 1);
	assert_target(out, "old\n", "record -f of /nonexistent");
	assert_int_equal(scratch_entries(dir), 1);
	free(err);
	free(out);
	free(dir);
}

/* Without -f an existing log is refused before the command runs. */
static void test_record_refuses_an_existing_log_before_running(void **state)
{
	char *dir = fresh_dir("record-exists"), *out = join(dir, "x.jtl");
	char *err = it_path_dup("record-exists.err"), *marker = join(dir, "ran"), *text;
	char *argv[] = { IT_JITRACE, "record", "-F", "0", "-o", out, "--", "/usr/bin/touch",
			 marker, NULL };

	(void)state;
	put(out, "old\n");
	assert_int_equal(it_run(argv, "/dev/null", err), 1);
	text = it_slurp(err);
	assert_non_null(strstr(text, "already exists (-f, --force replaces it)"));
	free(text);
	assert_int_not_equal(access(marker, F_OK), 0);	/* the command never ran */
	assert_target(out, "old\n", "record over an existing log");
	free(marker);
	free(err);
	free(out);
	free(dir);
}

/*
 * SIGKILL part way through a recording: the log is under its name (-f: the old file
 * replaced) and reads up to its last flushed block, with no file beside it.
 */
static void test_record_killed_part_way_keeps_its_log(void **state)
{
	char *dir = fresh_dir("record-killed"), *out = join(dir, "k.jtl");
	char *err = it_path_dup("record-killed.err");
	char *argv[] = { IT_JITRACE, "record", "-f", "-F", "99", "-o", out, "--", "/bin/sleep",
			 "20", NULL };
	struct it_log log;
	char *text, *p;
	pid_t pid;
	int child;

	(void)state;
	put(out, "old\n");
	pid = it_spawn(argv, "/dev/null", err);
	assert_true(it_wait_for_text(err, "jitrace: recording", 20000));
	sleep(2);		/* a flush a second */
	kill(pid, SIGKILL);
	assert_int_equal(it_wait(pid), 128 + SIGKILL);
	/* its command outlives it: stopped by the pid the recording line gave */
	text = it_slurp(err);
	p = strstr(text, "/bin/sleep (pid ");
	assert_non_null(p);
	child = atoi(p + strlen("/bin/sleep (pid "));
	assert_true(child > 1);
	kill(child, SIGKILL);
	free(text);
	it_log_load(out, &log);
	print_message("killed recording: %zu records, state %d\n", log.n, log.state);
	assert_int_equal(log.hdr.sample_hz, 99);
	it_log_free(&log);
	assert_int_equal(scratch_entries(dir), 1);
	free(err);
	free(out);
	free(dir);
}

/* record's own lines show its argv as the views show names: no raw ESC, BEL or C1 byte. */
static void test_record_line_escapes_its_argv(void **state)
{
	char *dir = fresh_dir("record-esc"), *cmd = join(dir, "tr\x1b]0;pwned\x07ue\xc2\x9b");
	char *out = join(dir, "esc.jtl"), *err = it_path_dup("record-esc.err"), *text, *p;

	(void)state;
	assert_int_equal(symlink("/bin/true", cmd), 0);
	assert_int_equal(record(out, false, err, cmd), 0);
	text = it_slurp(err);
	print_message("%s", text);
	p = strstr(text, "jitrace: recording ");
	assert_non_null(p);
	assert_non_null(strstr(p, "tr\\x1b]0;pwned\\x07ue\\xc2\\x9b (pid "));
	for (; *p; p++)
		if (*p == '\x1b' || *p == '\x07' || (unsigned char)*p == 0x9b)
			fail_msg("a raw control byte 0x%02x on stderr", (unsigned char)*p);
	free(text);
	free(err);
	free(out);
	free(cmd);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_failed_output_leaves_target_as_it_was),
		cmocka_unit_test(test_existing_target_refused_then_replaced_whole),
		cmocka_unit_test(test_killed_output_leaves_target_as_it_was),
		cmocka_unit_test(test_directory_swap_cannot_make_root_remove_a_file),
		cmocka_unit_test(test_record_that_never_began_leaves_nothing),
		cmocka_unit_test(test_record_refuses_an_existing_log_before_running),
		cmocka_unit_test(test_record_killed_part_way_keeps_its_log),
		cmocka_unit_test(test_record_line_escapes_its_argv),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
