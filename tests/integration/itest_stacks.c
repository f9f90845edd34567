// SPDX-License-Identifier: GPL-2.0
/*
 * Whole stacks without frame pointers (issue 27): record --unwind cfi unwinds each sample's
 * copied stack top by the mapped files' CFI, so that a program built -O2
 * -fomit-frame-pointer and Debian's own python3 sample to their roots, JIT code (Mono's by
 * its bodies' shapes, .NET's by frame pointers) in the same walk; the log keeps frames, a few
 * bytes a sample. Needs root.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "join/ucopy.h"
#include "jt_events.h"
#include "lib.h"

#define NOFP "build/tests/nofp"
#define NOFP_DBGFRAME "build/tests/nofp-dbgframe"
#define PYTHON "/usr/bin/python3.11"
#define PY_LOOP "tests/runtimes/python/loop.py"
#define MONO "/usr/bin/mono"
#define MCS "/usr/bin/mcs"
#define MONO_HOT "tests/runtimes/mono/Hot.cs"
#define MONO_MODULE "build/libmono-profiler-jitrace.so"
#define MONO_DEEP "bench/workloads/Deep.cs"
#define DOTNET "/usr/bin/dotnet"
#define DN_SRC "tests/runtimes/dotnet"

/* The pid whose exec ran a path ending in tail; fails if none did. */
static uint32_t exec_of(const struct it_log *log, const char *tail)
{
	size_t i, n = strlen(tail);

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_exec *e = (const void *)log->recs[i];

		if (e->h.type == JT_REC_EXEC && e->path_len >= n &&
		    !memcmp(e->path + e->path_len - n, tail, n))
			return e->pid;
	}
	fail_msg("no exec of *%s in the log", tail);
	return 0;
}

static off_t file_size(const char *path)
{
	struct stat st;

	assert_int_equal(stat(path, &st), 0);
	return st.st_size;
}

static uint64_t samples_of(const struct it_log *log, uint32_t pid)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < log->n; i++)
		n += log->recs[i]->type == JT_REC_SAMPLE &&
		     ((const struct jt_rec_sample *)log->recs[i])->pid == pid;
	return n;
}

/*
 * Record argv (jitrace record ... -o log_path -- EXE ...) into log (checked), and count the
 * samples of the process that ran exe whose leaf is leaf, and those whole (it_count_chains).
 * What jitrace says goes to log_path.err, shown, and what it said of the stack copies to
 * *said (it_record_copies: none larger than its thread's was cut to). Returns that
 * process's pid.
 */
static uint32_t record_chains(char *const argv[], const char *log_path, struct it_log *log,
			      const char *exe, const char *leaf, const char *const *chain,
			      unsigned int nr, bool adjacent, uint64_t *n, uint64_t *whole,
			      struct it_copies *said)
{
	uint32_t pid;

	it_record_copies(argv, log_path, said);
	it_log_load(log_path, log);
	it_check_promises(log);
	pid = exec_of(log, exe);
	it_count_chains(log, pid, leaf, chain, nr, adjacent, n, whole);
	print_message("%s samples %llu, whole %llu\n", leaf, (unsigned long long)*n,
		      (unsigned long long)*whole);
	assert_true(*n >= IT_MIN_SAMPLES);
	return pid;
}

/*
 * main > level1 > level2 > level3 > leaf_work of prog (tests/native/nofp.c), none with a
 * frame pointer: by CFI at least 95% of leaf_work's samples (as the issue asks) hold the whole
 * chain, and the log spends at most 200 bytes a sample (perf --call-graph dwarf: 8.5 KB).
 * Without its CFI (whole false), fewer than 5% do.
 */
static void c_program_chains(const char *prog, const char *log_name, bool whole_expected)
{
	static const char *const chain[] = { "level3", "level2", "level1", "main" };
	char *log_path = it_path_dup(log_name), secs[16];
	char *argv[] = { IT_JITRACE, "record", "--unwind", "cfi", "-F", "999", "-f", "-o",
			 log_path, "--", (char *)prog, it_scaled(secs, sizeof(secs), 3), NULL };
	uint64_t n, whole, all;
	struct it_copies said;
	struct it_log log;
	uint32_t pid;

	pid = record_chains(argv, log_path, &log, prog, "leaf_work", chain, 4, true, &n, &whole,
			    &said);
	all = samples_of(&log, pid);
	/*
	 * each sample's copy is walked; the one thread's first UCOPY_QUICK walks that reach its
	 * stack's end (a whole sample's does) cut its copy; without CFI none is cut
	 */
	assert_true(said.walked >= n);
	if (!whole_expected)
		assert_int_equal(said.cuts, 0);
	else if (whole >= UCOPY_QUICK)
		assert_true(said.cuts >= 1);
	if (whole_expected)
		it_assert_fp_walk_dropped(&said, whole);
	print_message("log %lld bytes, %llu samples\n", (long long)file_size(log_path),
		      (unsigned long long)all);
	if (whole_expected)
		it_assert_share_at_least("leaf_work samples with main > level1 > level2 > level3",
					 whole, n, 0.95, "the issue's target");
	else if (whole * 20 >= n)
		fail_msg("%llu of %llu leaf_work samples whole without the program's CFI",
			 (unsigned long long)whole, (unsigned long long)n);
	assert_true(file_size(log_path) <= 200 * (off_t)all);
	it_log_free(&log);
	free(log_path);
}

/* Built -O2 -fomit-frame-pointer: by frame pointers each sample is leaf_work alone. */
static void test_c_program_without_frame_pointers(void **state)
{
	(void)state;
	c_program_chains(NOFP, "nofp.jtl", true);
}

/*
 * Built -fno-asynchronous-unwind-tables -g besides: its functions' CFI is in .debug_frame
 * only (its .eh_frame has _start's and the PLT's), read where .eh_frame has no row.
 */
static void test_c_program_with_debug_frame_only(void **state)
{
	(void)state;
	c_program_chains(NOFP_DBGFRAME, "nofp-dbgframe.jtl", true);
}

/* Run the shell command cmd (built from fmt), which must succeed. */
static void shell(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd))
		fail_msg("failed: %s", cmd);
}

#define DEBUG_PATH_MAX 160

/*
 * The same program without its .debug_frame, which its separate debug file holds where
 * Debian's -dbgsym packages put one (/usr/lib/debug/.build-id/xx/rest.debug, installed here
 * for the test and removed after): whole stacks, found by the program's build id; with the
 * debug file owned by another user than root, not read: no whole stack.
 */
static void test_c_program_with_a_separate_debug_file(void **state)
{
	char *prog = it_path_dup("nofp-stripped"), id[64] = "", dir[48], *debug = *state;
	FILE *p;

	if (system("objcopy --version >/dev/null 2>&1 && readelf --version >/dev/null 2>&1"))
		skip();
	p = popen("readelf -n " NOFP_DBGFRAME " | sed -n 's/.*Build ID: //p'", "r");
	assert_non_null(p);
	assert_non_null(fgets(id, sizeof(id), p));
	pclose(p);
	id[strcspn(id, "\n")] = '\0';
	assert_true(strlen(id) > 2);
	snprintf(dir, sizeof(dir), "/usr/lib/debug/.build-id/%.2s", id);
	snprintf(debug, DEBUG_PATH_MAX, "%s/%s.debug", dir, id + 2);
	shell("objcopy --remove-section .debug_frame %s %s", NOFP_DBGFRAME, prog);
	shell("mkdir -p %s && objcopy --only-keep-debug %s %s && chmod 0644 %s", dir,
	      NOFP_DBGFRAME, debug, debug);
	c_program_chains(prog, "nofp-debugfile.jtl", true);
	shell("chown 65534 %s", debug);
	c_program_chains(prog, "nofp-debugfile-notroot.jtl", false);
	free(prog);
}

/* Where the test above installs its debug file, removed after it whether it passed or not. */
static int debug_file_setup(void **state)
{
	*state = calloc(1, DEBUG_PATH_MAX);
	return *state ? 0 : -1;
}

static int debug_file_teardown(void **state)
{
	char *debug = *state, *slash = strrchr(debug, '/');

	if (*debug && unlink(debug) && errno != ENOENT)
		fprintf(stderr, "cannot remove %s: %s\n", debug, strerror(errno));
	if (slash) {
		*slash = '\0';
		rmdir(debug);	/* if the test made it and nothing else is in it */
	}
	free(*state);
	return 0;
}

/*
 * Debian's python3 (no frame pointers) in a pure-Python loop: its interpreter's samples
 * reach the program's entry. Its main() is a jump to Py_BytesMain (no frame of its own), so
 * the root reached is __libc_start_call_main > Py_BytesMain.
 */
static void test_debian_python_reaches_main(void **state)
{
	static const char *const chain[] = { "Py_BytesMain", "__libc_start_call_main" };
	char *log_path = it_path_dup("python.jtl"), secs[16];
	char *argv[] = { IT_JITRACE, "record", "--unwind", "cfi", "-F", "999", "-f", "-o",
			 log_path, "--", PYTHON, PY_LOOP, it_scaled(secs, sizeof(secs), 3),
			 NULL };
	uint64_t n, whole;
	struct it_copies said;
	struct it_log log;

	(void)state;
	if (access(PYTHON, X_OK))
		skip();
	record_chains(argv, log_path, &log, PYTHON, "_PyEval_EvalFrameDefault", chain, 2, false,
		      &n, &whole, &said);
	it_assert_share_at_least("interpreter samples reaching Py_BytesMain", whole, n, 0.95,
				 "the issue's target");
	it_assert_fp_walk_dropped(&said, whole);
	it_log_free(&log);
	free(log_path);
}

/*
 * How many samples of pid whose leaf is leaf have a frame other than chain[k] at k + 1 for
 * some k < nr before the stack's cut ([truncated]), or end before chain[nr - 1] uncut: a
 * frame skipped, a wrong one, or a stack that claims to be whole and is not.
 */
static uint64_t skipped_frames(const struct it_log *log, uint32_t pid, const char *leaf,
			       const char *const *chain, unsigned int nr)
{
	uint64_t bad = 0;
	unsigned int k;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];

		if (log->recs[i]->type != JT_REC_SAMPLE || s->pid != pid ||
		    !it_frame_is(log, s, 0, leaf))
			continue;
		for (k = 0; k < nr; k++) {
			if (k + 1 < s->nr_frames &&
			    JT_FRAME_KIND(s->frames[k + 1].ref) == JT_FRAME_TRUNCATED)
				break;
			if (!it_frame_is(log, s, k + 1, chain[k])) {
				bad++;
				break;
			}
		}
	}
	return bad;
}

/* A C# program for Mono, and the frames above its leaf. */
struct mono_prog {
	const char *src;	/* compiled with mcs -optimize+ */
	const char *exe;	/* into the test's directory, as this */
	const char *mode;	/* its first argument, NULL: none */
	unsigned int run;	/* then how long it runs (scaled), in its unit */
	const char *leaf;
	const char *chain[4];	/* above the leaf, in order, down to the C library's start */
	const char *exact[5];	/* directly above the leaf, each the next's callee (NULL-ended) */
};

/* Hot.exe split: Big's callers are Split, Main and the runtime-invoke wrapper. */
static const struct mono_prog mono_hot = {
	MONO_HOT, "Hot.exe", "split", 3000, "Hot:Big (int)",
	{ "Hot:Split (int)", "Hot:Main (string[])", "mono_jit_exec", "__libc_start_call_main" },
	{ "Hot:Split (int)", "Hot:Main (string[])", "*runtime_invoke" },
};

/* bench_stacks' Deep.exe: BurnA under Level3 < Level2 < Level1 (each spills its argument). */
static const struct mono_prog mono_deep = {
	MONO_DEEP, "Deep.exe", NULL, 3, "Deep:BurnA (long)",
	{ "Deep:Level1 (long)", "Deep:Main (string[])", "mono_jit_exec", "__libc_start_call_main" },
	{ "Deep:Level3 (long)", "Deep:Level2 (long)", "Deep:Level1 (long)", "Deep:Main (string[])",
	  "*runtime_invoke" },
};

/*
 * pg under mono with mono_arg (--jitmap, or the jitrace module) and MONO_DEBUG mono_debug
 * (NULL: none, Mono as users run it), recorded with --unwind cfi: mono-sgen (no frame
 * pointers) by its CFI and the JIT code by its bodies' shapes or frame pointers, in one walk.
 * At least 90% of the leaf's samples reach Main, and on through the runtime-invoke wrapper
 * and mono_jit_exec to _start; no sample skips a frame above the leaf or ends uncut short of
 * the wrapper.
 */
static void mono_walk(const struct mono_prog *pg, const char *mono_arg, const char *mono_debug,
		      const char *name)
{
	char *log_path = it_path_dup(name), *exe = it_path_dup(pg->exe), *out, run[16];
	char *argv[] = { IT_JITRACE, "record", "--unwind", "cfi", "-F", "999", "-f", "-o",
			 log_path, "--", MONO, (char *)mono_arg, exe, NULL, NULL, NULL };
	char *mcs[] = { MCS, "-optimize+", NULL, (char *)pg->src, NULL };
	uint64_t n, whole, skipped;
	unsigned int nr_exact = 0;
	struct it_copies said;
	struct it_log log;
	uint32_t pid;

	if (access(MONO, X_OK) || access(MCS, X_OK))
		skip();
	it_scaled(run, sizeof(run), pg->run);
	argv[13] = pg->mode ? (char *)pg->mode : run;
	argv[14] = pg->mode ? run : NULL;
	assert_true(asprintf(&out, "-out:%s", exe) > 0);
	mcs[2] = out;
	assert_int_equal(it_run(mcs, "/dev/null", NULL), 0);
	if (mono_debug)
		setenv("MONO_DEBUG", mono_debug, 1);
	pid = record_chains(argv, log_path, &log, MONO, pg->leaf, pg->chain, 4, false, &n,
			    &whole, &said);
	unsetenv("MONO_DEBUG");
	while (nr_exact < 5 && pg->exact[nr_exact])
		nr_exact++;
	skipped = skipped_frames(&log, pid, pg->leaf, pg->exact, nr_exact);
	print_message("%s samples with a frame skipped: %llu\n", pg->leaf,
		      (unsigned long long)skipped);
	it_assert_share_at_least("leaf samples reaching Main and _start", whole, n, 0.90,
				 "the issue's target");
	assert_int_equal(skipped, 0);
	it_log_free(&log);
	free(out);
	free(exe);
	free(log_path);
}

/*
 * mono --jitmap as users run it: Mono leaves the frame pointer out of simple methods (amd64
 * omit_fp), Big, Split and Main among them, so a frame-pointer walk loses their callers;
 * their bodies' shapes step them.
 */
static void test_mono_jitmap_frames_without_frame_pointers(void **state)
{
	(void)state;
	mono_walk(&mono_hot, "--jitmap", NULL, "mono.jtl");
}

/* The same, the code named by the jitrace profiler module (found beside jitrace). */
static void test_mono_module_frames_without_frame_pointers(void **state)
{
	char build[PATH_MAX];

	(void)state;
	if (access(MONO_MODULE, R_OK) || !realpath("build", build))
		fail_msg("%s missing: run make first", MONO_MODULE);
	setenv("LD_LIBRARY_PATH", build, 1);
	mono_walk(&mono_hot, "--profile=jitrace", NULL, "mono-module.jtl");
	unsetenv("LD_LIBRARY_PATH");
}

/* Mono asked to keep frame pointers (its PreserveFramePointer): framed bodies, one walk. */
static void test_mono_jitmap_frames_with_frame_pointers(void **state)
{
	(void)state;
	mono_walk(&mono_hot, "--jitmap", "disable_omit_fp", "mono-fp.jtl");
}

/* Four frameless callers deep, each spilling its argument in its prologue. */
static void test_mono_jitmap_deep_frameless_callers(void **state)
{
	(void)state;
	mono_walk(&mono_deep, "--jitmap", NULL, "mono-deep.jtl");
}

/*
 * .NET: libcoreclr by its CFI (Microsoft builds it with frame pointers too), the JIT code by
 * its frame pointers (RyuJIT keeps them), and glibc's start, which has none, by its CFI: Big's
 * samples reach Split, coreclr_execute_assembly and __libc_start_main, which the
 * frame-pointer walk loses. (Main is not asked for: under Split's on-stack-replacement code,
 * about half the samples, the frame-pointer chain of the JIT code skips it, by either walk.)
 */
static void test_dotnet_runtime_and_jit_frames_in_one_walk(void **state)
{
	static const char *const chain[] = { "*Hot::Split(", "coreclr_execute_assembly",
					      "__libc_start_main" };
	char *dir = it_path_dup("dn"), *proj = it_path_dup("dn/Hot.csproj");
	char *out = it_path_dup("dn/out"), *hot = it_path_dup("dn/out/Hot");
	char *log_path = it_path_dup("dotnet.jtl"), ms[16];
	char *cp[] = { "/bin/cp", DN_SRC "/Hot.cs", DN_SRC "/Hot.csproj", dir, NULL };
	/* no build servers: nothing of the build lingers */
	char *build[] = { DOTNET, "build", proj, "-c", "Release", "-o", out, "--nologo", "-v", "q",
			  "--disable-build-servers", NULL };
	char *argv[] = { IT_JITRACE, "record", "--unwind", "cfi", "-F", "999", "-f", "-o",
			 log_path, "--", hot, "split", it_scaled(ms, sizeof(ms), 3000), NULL };
	uint64_t n, whole;
	struct it_copies said;
	struct it_log log;

	(void)state;
	if (access(DOTNET, X_OK))
		skip();
	assert_int_equal(mkdir(dir, 0755), 0);
	assert_int_equal(it_run(cp, NULL, NULL), 0);
	setenv("DOTNET_CLI_TELEMETRY_OPTOUT", "1", 1);
	assert_int_equal(it_run(build, "/dev/null", NULL), 0);
	setenv("DOTNET_PerfMapEnabled", "1", 1);	/* the JIT code's names */
	record_chains(argv, log_path, &log, hot, "*Hot::Big(", chain, 3, false, &n, &whole,
		      &said);
	unsetenv("DOTNET_PerfMapEnabled");
	it_assert_share_at_least("Big samples reaching Split and __libc_start_main", whole, n,
				 0.90, "as Mono's");
	it_log_free(&log);
	free(log_path);
	free(hot);
	free(out);
	free(proj);
	free(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_c_program_without_frame_pointers),
		cmocka_unit_test(test_c_program_with_debug_frame_only),
		cmocka_unit_test_setup_teardown(test_c_program_with_a_separate_debug_file,
						debug_file_setup, debug_file_teardown),
		cmocka_unit_test(test_debian_python_reaches_main),
		cmocka_unit_test(test_mono_jitmap_frames_without_frame_pointers),
		cmocka_unit_test(test_mono_module_frames_without_frame_pointers),
		cmocka_unit_test(test_mono_jitmap_frames_with_frame_pointers),
		cmocka_unit_test(test_mono_jitmap_deep_frameless_callers),
		cmocka_unit_test(test_dotnet_runtime_and_jit_frames_in_one_walk),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
