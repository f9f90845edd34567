// SPDX-License-Identifier: GPL-2.0
/*
 * `jitrace record` on real .NET (CoreCLR): the runtime's own perf map and jitdump
 * (DOTNET_PerfMapEnabled=1, 2, 3), tiers, mixed stacks, a running process asked to start
 * its map through the diagnostics socket (-p), and the CLR profiler module (names, exact
 * calls through exceptions, dynamic methods unloaded). Needs root and the .NET SDK (`dotnet`
 * on PATH); tests/runtimes/dotnet/Hot.cs is built once, offline, into the scratch directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "sources/dotnet_ipc.h"
#include "jt_events.h"
#include "lib.h"

#define DN_SRC "tests/runtimes/dotnet"
#define DN_MODULE "build/libjitrace-coreclr.so"
#define DN_GUID "{8E2B7A41-5C3D-4F1E-9A6B-2D7C0E4F8A13}"
#define DN_CALLS 1000
#define DN_DYNAMIC 20

static struct {
	char *dotnet;	/* the dotnet host, NULL: not installed */
	char *hot;	/* Hot built into the scratch directory */
	bool keep_maps;	/* record() leaves the runtime's maps for the test to read */
} dn;

/* ---- the program and its environment ---- */

static void need_dotnet(void)
{
	if (!dn.dotnet) {
		print_message("skipped: no dotnet on PATH (install the .NET SDK, 8 or later)\n");
		skip();
	}
	assert_non_null(dn.hot);
}

/* The variables a test may set, cleared before each run so that none leaks into the next. */
static const char *const dn_vars[] = {
	"DOTNET_PerfMapEnabled", "DOTNET_PerfMapShowOptimizationTiers",
	"DOTNET_PerfMapStubGranularity", "DOTNET_TC_OnStackReplacement", "DOTNET_TieredPGO",
	"DOTNET_TieredCompilation", "CORECLR_ENABLE_PROFILING", "CORECLR_PROFILER",
	"CORECLR_PROFILER_PATH", "JITRACE_CORECLR", "CORECLR_ENABLE_NOTIFICATION_PROFILERS",
	"CORECLR_NOTIFICATION_PROFILERS", NULL,
};

/* Set NAME=VALUE pairs (NULL-terminated) for the programs started next. */
static void dn_env(const char *const *kv)
{
	int i;

	for (i = 0; dn_vars[i]; i++)
		unsetenv(dn_vars[i]);
	for (i = 0; kv && kv[i]; i += 2)
		assert_int_equal(setenv(kv[i], kv[i + 1], 1), 0);
}

/* What the runtime leaves in /tmp for pid: its maps (a test must leave none behind). */
static void dn_forget(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	unlink(path);
	snprintf(path, sizeof(path), "/tmp/jit-%d.dump", (int)pid);
	unlink(path);
	snprintf(path, sizeof(path), "/tmp/perfinfo-%d.map", (int)pid);
	unlink(path);
}

static pid_t hot_pid(const char *out)
{
	struct it_toy t;

	it_toy_parse(out, &t);
	assert_true(t.pid > 0);
	return t.pid;
}

/* ---- names ---- */

/*
 * The method of Hot a name is ("Big") into fn, and its tier ("OptimizedTier1", "" if none)
 * into tier, from either naming: the runtime's own maps,
 * "int64 [Hot] JitraceTest.Hot::Big(int32)[OptimizedTier1]", or the module's,
 * "JitraceTest.Hot.Big(int)". False for a method of anything else.
 */
static bool dn_fn(const struct jt_rec_method *m, char *fn, size_t size, char *tier,
		  size_t tsize)
{
	static const char *const forms[] = { "JitraceTest.Hot::", "JitraceTest.Hot." };
	const char *name = m ? m->name : NULL, *p = NULL, *open, *end;
	size_t k, n;

	if (!m)
		return false;
	end = name + m->name_len;
	for (k = 0; k < 2 && !p; k++) {
		p = memmem(name, m->name_len, forms[k], strlen(forms[k]));
		if (p)
			p += strlen(forms[k]);
	}
	if (!p)
		return false;
	open = memchr(p, '(', (size_t)(end - p));
	if (!open || (size_t)(open - p) >= size)
		return false;
	memcpy(fn, p, (size_t)(open - p));
	fn[open - p] = 0;
	tier[0] = 0;
	if (end[-1] == ']') {
		const char *b = end - 1;

		while (b > open && *b != '[')
			b--;
		n = (size_t)(end - 1 - b - 1);
		if (*b == '[' && n < tsize) {
			memcpy(tier, b + 1, n);
			tier[n] = 0;
		}
	}
	return true;
}

static bool dn_is(const struct jt_rec_method *m, const char *want, char *tier, size_t tsize)
{
	char fn[64];

	return dn_fn(m, fn, sizeof(fn), tier, tsize) && !strcmp(fn, want);
}

/* ---- what the log says ---- */

/*
 * The leaf split between Big and Small, whatever the tier, every name from a source in
 * srcs (a bit mask of 1 << JT_SRC_*); names never cross processes.
 */
static void assert_split(const struct it_log *log, uint32_t pid, unsigned int srcs)
{
	uint64_t big = 0, small = 0, other = 0, named = 0;
	char fn[64], tier[64];
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];
		const struct jt_rec_method *m;

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid)
			continue;
		m = it_leaf_method(log, s);
		if (m)
			assert_int_equal(m->pid, pid);
		named += m != NULL;
		if (!dn_fn(m, fn, sizeof(fn), tier, sizeof(tier)) ||
		    (strcmp(fn, "Big") && strcmp(fn, "Small"))) {
			other++;
			continue;
		}
		if (!(srcs & (1u << m->src)))
			fail_msg("%.*s named by source %u", m->name_len, m->name, m->src);
		if (fn[0] == 'B')
			big++;
		else
			small++;
	}
	print_message("pid %u: Big %llu, Small %llu, elsewhere %llu (%llu with a JIT leaf)\n",
		      pid, (unsigned long long)big, (unsigned long long)small,
		      (unsigned long long)other, (unsigned long long)named);
	/* the loop around the calls: 74-76% seen */
	it_assert_share_near("leaf samples in Big of Big and Small (written 75%)", big,
			     big + small, 0.75, 0.02);
}

/* The path of the file a frame lies in (a module or a module's symbol), or NULL. */
static const char *frame_module(const struct it_log *log, const struct jt_frame *f)
{
	uint64_t id = 0;
	size_t i;

	if (JT_FRAME_KIND(f->ref) == JT_FRAME_MODULE) {
		id = JT_FRAME_ID(f->ref);
	} else if (JT_FRAME_KIND(f->ref) == JT_FRAME_SYMBOL) {
		const struct jt_rec_symbol *y = it_symbol(log, JT_FRAME_ID(f->ref));

		id = y ? y->module : 0;
	}
	if (!id)
		return NULL;
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_module *mod = (const void *)log->recs[i];

		if (mod->h.type == JT_REC_MODULE && mod->id == id)
			return mod->path;	/* NUL-padded in its copy */
	}
	return NULL;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

/*
 * A mixed stack, leaf first: Big (JIT), a caller of Hot's (JIT), then native frames of
 * libcoreclr.so (the runtime calling Main), and at the root a libc frame that starts the
 * process or a thread (__libc_start_call_main, start_thread). Main is counted in *main.
 */
static bool mixed_stack(const struct it_log *log, const struct jt_rec_sample *s, bool *main)
{
	bool big = false, caller = false, coreclr = false;
	char name[512], fn[64], tier[64];
	const char *path;
	unsigned int i;

	*main = false;
	for (i = 0; i < s->nr_frames; i++) {
		const struct jt_frame *f = &s->frames[i];
		const struct jt_rec_method *m;

		if (it_frame_is_kernel(log, f))
			continue;
		m = JT_FRAME_KIND(f->ref) == JT_FRAME_METHOD ? it_method(log, JT_FRAME_ID(f->ref))
							      : NULL;
		if (!big) {
			if (!dn_is(m, "Big", tier, sizeof(tier)))
				return false;
			big = true;
		} else if (m) {
			if (coreclr || !dn_fn(m, fn, sizeof(fn), tier, sizeof(tier)))
				return false;	/* JIT code below the runtime, or not Hot's */
			caller |= strcmp(fn, "Big") != 0;
			*main |= !strcmp(fn, "Main");
		} else {
			path = frame_module(log, f);
			coreclr |= caller && path && ends_with(path, "/libcoreclr.so");
		}
	}
	if (!coreclr || !i)
		return false;
	it_frame_name(log, &s->frames[i - 1], name, sizeof(name));
	return !strcmp(name, "__libc_start_call_main") || !strcmp(name, "__libc_start_main") ||
	       !strcmp(name, "start_thread") || !strcmp(name, "_start");
}

static void assert_mixed_stacks(const struct it_log *log, uint32_t pid)
{
	uint64_t leaf_big = 0, mixed = 0, with_main = 0;
	char tier[64];
	bool main;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid ||
		    !dn_is(it_leaf_method(log, s), "Big", tier, sizeof(tier)))
			continue;
		leaf_big++;
		if (mixed_stack(log, s, &main)) {
			mixed++;
			with_main += main;
		}
	}
	/* Main itself is missing where on-stack replacement runs Split: the OSR frame hides
	 * the frame below it (a third to two thirds of stacks, whatever DOTNET_JitFramed) */
	print_message("%llu of them through Main\n", (unsigned long long)with_main);
	it_assert_share_at_least("samples in Big whose stack reaches libc through a caller and "
				 "libcoreclr.so", mixed, leaf_big, 0.95,
				 "99-100% seen; a frameless leaf may hide its caller");
}

/* Every method of pid defined from a source outside srcs: none. */
static void assert_sources(const struct it_log *log, uint32_t pid, unsigned int srcs)
{
	size_t i;

	for (i = 1; i < log->nr_methods; i++) {
		const struct jt_rec_method *m = log->methods[i];

		if (m && m->pid == pid && !(srcs & (1u << m->src)))
			fail_msg("%.*s defined by source %u", m->name_len, m->name, m->src);
	}
}

/*
 * Nothing lost on the way, and every map line and jitdump record understood. (A stack cut
 * where it stopped making sense is not a loss: native code without frame pointers, ld.so's
 * at start-up, ends a few.)
 */
static void assert_nothing_lost(const struct it_log *log)
{
	static const unsigned int kinds[] = {
		JT_DROP_RB_CALL, JT_DROP_RB_SAMPLE, JT_DROP_RB_CODE, JT_DROP_RB_PROC,
		JT_DROP_REORDER, JT_DROP_DECODE, JT_DROP_PERFMAP_LINE, JT_DROP_PERFMAP_CAP,
		JT_DROP_JITDUMP,
	};
	size_t k;

	for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (it_drops_of(log, kinds[k]))
			fail_msg("%llu lost of drop kind %u",
				 (unsigned long long)it_drops_of(log, kinds[k]), kinds[k]);
}

/*
 * Record Hot MODE ARG (with --calls if calls) in the environment the caller set, which is
 * cleared after; the log loaded and its promises checked, what Hot printed in *out_path
 * (NULL: not wanted). Returns Hot's pid.
 */
static pid_t record(const char *name, bool calls, const char *mode, const char *arg,
		    struct it_log *log, char **out_path)
{
	char *log_path, *out, *err, *argv[16];
	pid_t pid;
	int k = 0;

	log_path = it_path_ext(name, "jtl");
	out = it_path_ext(name, "out");
	err = it_path_ext(name, "err");
	argv[k++] = IT_JITRACE;
	argv[k++] = "record";
	argv[k++] = "-F";
	argv[k++] = "999";
	argv[k++] = "-o";
	argv[k++] = log_path;
	if (calls)
		argv[k++] = "--calls";
	argv[k++] = "--";
	argv[k++] = dn.hot;
	argv[k++] = (char *)mode;
	argv[k++] = (char *)arg;
	argv[k] = NULL;
	assert_int_equal(it_run(argv, out, err), 0);
	dn_env(NULL);
	pid = hot_pid(out);
	assert_true(it_wait_for_text(out, "done\n", 0));
	/* the module says nothing when all went well */
	if (it_wait_for_text(err, "jitrace-coreclr:", 0))
		fail_msg("the module complained: see %s", err);
	if (!dn.keep_maps)
		dn_forget(pid);
	it_log_load(log_path, log);
	it_check_promises(log);
	free(log_path);
	free(err);
	if (out_path)
		*out_path = out;
	else
		free(out);
	return pid;
}

static pid_t record_hot(const char *name, const char *const *env, const char *mode,
			const char *arg, struct it_log *log)
{
	dn_env(env);
	return record(name, false, mode, arg, log, NULL);
}

/* ---- the runtime's own maps ---- */

/* =1: perf map and jitdump; jitrace names from the map. Names keep .NET's form with tiers;
 * stacks go from the JIT frames through libcoreclr.so down to libc. */
static void test_perfmap_enabled_split_names_stacks(void **state)
{
	const char *const env[] = { "DOTNET_PerfMapEnabled", "1",
				    "DOTNET_PerfMapShowOptimizationTiers", "1", NULL };
	uint64_t tiers = 0;
	char tier[64];
	struct it_log log;
	pid_t pid;
	size_t i;

	(void)state;
	need_dotnet();
	pid = record_hot("map1", env, "split", "3000", &log);
	assert_split(&log, pid, 1u << JT_SRC_PERFMAP);
	assert_sources(&log, pid, 1u << JT_SRC_PERFMAP);
	for (i = 1; i < log.nr_methods; i++) {
		const struct jt_rec_method *m = log.methods[i];

		if (!m || m->pid != (uint32_t)pid)
			continue;
		if (dn_is(m, "Big", tier, sizeof(tier))) {
			/* the runtime's form: return type, [assembly], Ns.Class::Method(args) */
			if (m->name_len < 12 || memcmp(m->name, "int64 [Hot] ", 12))
				fail_msg("Big named %.*s", m->name_len, m->name);
			tiers += tier[0] != 0;
		}
	}
	print_message("%llu definitions of Big with a tier\n", (unsigned long long)tiers);
	assert_true(tiers >= 2);	/* QuickJitted, then OptimizedTier1 (and OSR) */
	assert_mixed_stacks(&log, pid);
	assert_nothing_lost(&log);
	it_log_free(&log);
}

/* =3: the perf map alone. */
static void test_perfmap_only(void **state)
{
	const char *const env[] = { "DOTNET_PerfMapEnabled", "3", NULL };
	struct it_log log;
	pid_t pid;

	(void)state;
	need_dotnet();
	pid = record_hot("map3", env, "split", "2000", &log);
	assert_split(&log, pid, 1u << JT_SRC_PERFMAP);
	assert_sources(&log, pid, 1u << JT_SRC_PERFMAP);
	assert_nothing_lost(&log);
	it_log_free(&log);
}

/*
 * =2: the jitdump alone, read as it grows. .NET 10 stops its jitdump at the first stub
 * block it cannot read whole (writev fails with EFAULT on a guard page, and the runtime
 * closes the file after two records): stubs reported one by one
 * (DOTNET_PerfMapStubGranularity=2) keep it going.
 */
static void test_jitdump_only(void **state)
{
	const char *const env[] = { "DOTNET_PerfMapEnabled", "2",
				    "DOTNET_PerfMapStubGranularity", "2", NULL };
	struct it_log log;
	pid_t pid;

	(void)state;
	need_dotnet();
	pid = record_hot("map2", env, "split", "2000", &log);
	assert_split(&log, pid, 1u << JT_SRC_JITDUMP);
	assert_sources(&log, pid, 1u << JT_SRC_JITDUMP);
	assert_nothing_lost(&log);
	it_log_free(&log);
}

/*
 * A method re-JITted at a higher tier, on one thread with on-stack replacement and PGO
 * off: QuickJitted code, then OptimizedTier1 code at other addresses. Every call runs
 * whole in one of them, so every sample named by the first comes before every sample named
 * by the second.
 */
static void test_tier_up_named_by_the_code_live(void **state)
{
	const char *const env[] = { "DOTNET_PerfMapEnabled", "3",
				    "DOTNET_PerfMapShowOptimizationTiers", "1",
				    "DOTNET_TC_OnStackReplacement", "0", "DOTNET_TieredPGO", "0",
				    NULL };
	uint64_t n0 = 0, n1 = 0, last0 = 0, first1 = UINT64_MAX;
	const struct jt_rec_method *t0 = NULL, *t1 = NULL;
	char tier[64];
	struct it_log log;
	pid_t pid;
	size_t i;

	(void)state;
	need_dotnet();
	pid = record_hot("tier", env, "tier", "2500", &log);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_sample *s = (const void *)log.recs[i];
		const struct jt_rec_method *m;

		if (s->h.type != JT_REC_SAMPLE || s->pid != (uint32_t)pid)
			continue;
		m = it_leaf_method(&log, s);
		if (!dn_is(m, "Tiered", tier, sizeof(tier)))
			continue;
		if (!strcmp(tier, "QuickJitted")) {
			n0++;
			last0 = s->h.ts;
			if (t0 && t0 != m)
				fail_msg("two QuickJitted methods of Tiered");
			t0 = m;
		} else if (!strcmp(tier, "OptimizedTier1")) {
			n1++;
			first1 = first1 < s->h.ts ? first1 : s->h.ts;
			t1 = m;
		} else {
			fail_msg("Tiered at tier %s", tier);
		}
	}
	print_message("Tiered: %llu samples QuickJitted (last at %llu), %llu OptimizedTier1 "
		      "(first at %llu)\n", (unsigned long long)n0, (unsigned long long)last0,
		      (unsigned long long)n1, (unsigned long long)first1);
	assert_non_null(t0);
	assert_non_null(t1);
	assert_true(t0->start != t1->start);
	assert_true(n0 >= 50 && n1 >= 500);
	assert_true(last0 < first1);
	assert_true(t1->load_ts <= first1);
	assert_nothing_lost(&log);
	it_log_free(&log);
}

/* ---- a running process, nothing set at its start ---- */

/*
 * Hot runs with no DOTNET_ variable; 3 s in, `record -p` asks its runtime through the
 * diagnostics socket to write its perf map, which names the code compiled before (Big and
 * Small tiered up in the first second); at the end the runtime is asked to stop again.
 */
static void test_running_process_asked_for_its_perf_map(void **state)
{
	char *log_path = it_path_dup("attach.jtl"), *out = it_path_dup("attach.out");
	char *err = it_path_dup("attach.err"), pid_s[16];
	char *prog[] = { dn.hot, "split", "9000", NULL };
	char *rec[] = { IT_JITRACE, "record", "-p", pid_s, "-d", "3", "-F", "999", "-o", log_path,
			NULL };
	char fn[64], tier[64];
	struct it_log log;
	pid_t pid;
	size_t i;
	int named = 0;

	(void)state;
	need_dotnet();
	dn_env(NULL);
	pid = it_spawn(prog, out, NULL);
	assert_true(it_wait_for_text(out, "split ratio", 10000));
	sleep(3);
	assert_int_equal(jt_dotnet_ipc__maps_open("/proc", (uint32_t)pid), 0);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
	assert_int_equal(it_run(rec, NULL, err), 0);
	assert_true(it_wait_for_text(err, "1 .NET process asked to write its perf map", 0));
	/* turned off again: the runtime closed its map */
	assert_int_equal(jt_dotnet_ipc__maps_open("/proc", (uint32_t)pid), 0);
	assert_int_equal(it_wait(pid), 0);
	dn_forget(pid);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_split(&log, (uint32_t)pid, 1u << JT_SRC_PERFMAP);
	for (i = 1; i < log.nr_methods; i++) {
		const struct jt_rec_method *m = log.methods[i];

		if (!m || !dn_fn(m, fn, sizeof(fn), tier, sizeof(tier)) ||
		    (strcmp(fn, "Big") && strcmp(fn, "Small")))
			continue;
		/* written by the runtime's replay before recording began: timed at its start */
		print_message("%.*s loaded at +%lld ns\n", m->name_len, m->name,
			      (long long)(m->load_ts - log.hdr.start_ns));
		assert_true(m->load_ts <= log.hdr.start_ns);
		named++;
	}
	assert_true(named >= 2);
	assert_nothing_lost(&log);
	it_log_free(&log);
	free(log_path);
	free(out);
	free(err);
}

/* The size of pid's perf map, -1 if there is none. */
static long map_size(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	return stat(path, &st) ? -1 : (long)st.st_size;
}

/*
 * `record -- dotnet app.dll` with nothing set: the command jitrace starts writes its perf
 * map from its first method (DOTNET_PerfMapEnabled=3 in its environment), and the split is
 * named.
 */
static void test_command_with_nothing_set_is_named(void **state)
{
	char *log_path = it_path_dup("cmd.jtl"), *out = it_path_dup("cmd.out");
	char *err = it_path_dup("cmd.err"), *dll = it_path_dup("dotnet/out/Hot.dll");
	char *rec[] = { IT_JITRACE, "record", "-F", "999", "-o", log_path, "--", dn.dotnet, dll,
			"split", "3000", NULL };
	struct it_log log;
	pid_t pid;

	(void)state;
	need_dotnet();
	dn_env(NULL);
	assert_int_equal(it_run(rec, out, err), 0);
	pid = hot_pid(out);
	dn_forget(pid);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_split(&log, (uint32_t)pid, 1u << JT_SRC_PERFMAP);
	assert_nothing_lost(&log);
	it_log_free(&log);
	free(log_path);
	free(out);
	free(err);
	free(dll);
}

/*
 * `record -p` killed with SIGKILL: its guard turns the map it asked for off at once (the
 * map stops growing while the program goes on compiling), and leaves no share behind.
 */
static void test_sigkill_leaves_the_perf_map_off(void **state)
{
	char *log_path = it_path_dup("kill.jtl"), *out = it_path_dup("kill.out");
	char *err = it_path_dup("kill.err"), pid_s[16];
	char *prog[] = { dn.hot, "compile", "12000", NULL };
	char *rec[] = { IT_JITRACE, "record", "-p", pid_s, "-F", "99", "-o", log_path, NULL };
	long on0, on1, off0, off1;
	pid_t pid, rpid;

	(void)state;
	need_dotnet();
	dn_env(NULL);
	pid = it_spawn(prog, out, NULL);
	assert_true(it_wait_for_text(out, "compiling", 10000));
	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
	rpid = it_spawn(rec, NULL, err);
	assert_true(it_wait_for_text(err, "asked to write its perf map", 15000));
	sleep(1);
	on0 = map_size(pid);
	sleep(2);
	on1 = map_size(pid);
	assert_int_equal(kill(rpid, SIGKILL), 0);
	assert_int_equal(it_wait(rpid), 128 + SIGKILL);
	sleep(1);
	off0 = map_size(pid);
	assert_int_equal(jt_dotnet_ipc__maps_open("/proc", (uint32_t)pid), 0);
	sleep(3);
	off1 = map_size(pid);
	print_message("perf map: %ld then %ld bytes while on; %ld a second after SIGKILL, %ld "
		      "3 s later\n", on0, on1, off0, off1);
	assert_true(on0 > 0 && on1 > on0);	/* it grows while on */
	assert_int_equal(off1, off0);		/* and not once off */
	assert_int_equal(it_shares_left("dotnet", pid), 0);
	assert_int_equal(it_wait(pid), 0);
	assert_true(it_wait_for_text(out, "compiled ", 0));
	dn_forget(pid);
	free(log_path);
	free(out);
	free(err);
}

/* Samples of pid after ts whose leaf is a method made at run time (Dyn<k>), and their methods
 * loaded after ts. */
static void dyn_after(const struct it_log *log, uint32_t pid, uint64_t ts, uint64_t *samples,
		      uint64_t *methods)
{
	size_t i;

	*samples = *methods = 0;
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];
		const struct jt_rec_method *m;

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid || s->h.ts <= ts)
			continue;
		m = it_leaf_method(log, s);
		*samples += m && memmem(m->name, m->name_len, "Dyn", 3);
	}
	for (i = 1; i < log->nr_methods; i++) {
		const struct jt_rec_method *m = log->methods[i];

		*methods += m && m->pid == pid && m->load_ts > ts &&
			    memmem(m->name, m->name_len, "Dyn", 3);
	}
}

/*
 * Two sessions on one process, overlapping: the first to end leaves the map on for the
 * other, whose code compiled after that is named to its end; the last turns it off.
 */
static void test_overlapping_sessions_both_keep_names(void **state)
{
	char *a_log = it_path_dup("share_a.jtl"), *b_log = it_path_dup("share_b.jtl");
	char *out = it_path_dup("share.out"), *a_err = it_path_dup("share_a.err");
	char *b_err = it_path_dup("share_b.err"), pid_s[16];
	char *prog[] = { dn.hot, "compile", "14000", NULL };
	char *ra[] = { IT_JITRACE, "record", "-p", pid_s, "-d", "4", "-F", "999", "-o", a_log,
		       NULL };
	char *rb[] = { IT_JITRACE, "record", "-p", pid_s, "-d", "9", "-F", "999", "-o", b_log,
		       NULL };
	uint64_t a_end, samples, methods;
	struct it_log a, b;
	pid_t pid, apid, bpid;

	(void)state;
	need_dotnet();
	dn_env(NULL);
	pid = it_spawn(prog, out, NULL);
	assert_true(it_wait_for_text(out, "compiling", 10000));
	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
	apid = it_spawn(ra, NULL, a_err);
	assert_true(it_wait_for_text(a_err, "asked to write its perf map", 15000));
	sleep(1);
	bpid = it_spawn(rb, NULL, b_err);
	assert_int_equal(it_wait(apid), 0);
	/* the first is gone, the second still needs the map: on */
	assert_int_equal(jt_dotnet_ipc__maps_open("/proc", (uint32_t)pid), 1);
	assert_int_equal(it_wait(bpid), 0);
	assert_int_equal(jt_dotnet_ipc__maps_open("/proc", (uint32_t)pid), 0);
	assert_int_equal(it_shares_left("dotnet", pid), 0);
	assert_int_equal(it_wait(pid), 0);
	dn_forget(pid);
	it_log_load(a_log, &a);
	it_log_load(b_log, &b);
	it_check_promises(&b);
	a_end = a.recs[a.n - 1]->ts;
	dyn_after(&b, (uint32_t)pid, a_end, &samples, &methods);
	print_message("after the first session ended: %llu methods made at run time named in "
		      "the second, %llu samples in them\n", (unsigned long long)methods,
		      (unsigned long long)samples);
	assert_true(methods >= 10);
	assert_true(samples >= 10);
	it_log_free(&a);
	it_log_free(&b);
	free(a_log);
	free(b_log);
	free(out);
	free(a_err);
	free(b_err);
}

/*
 * DOTNET_PerfMapEnabled=2 alone: .NET 10 stops its jitdump inside a stub block's record and
 * unmaps it; jitrace finds it all the same and says where it ends, counted.
 */
static void test_jitdump_cut_short_is_said_and_counted(void **state)
{
	const char *const env[] = { "DOTNET_PerfMapEnabled", "2", NULL };
	char *err = it_path_dup("map2cut.err");
	struct it_log log;
	pid_t pid;

	(void)state;
	need_dotnet();
	pid = record_hot("map2cut", env, "split", "2500", &log);
	if (it_wait_for_text(err, "inside a record that claims", 0)) {
		print_message("said: see %s\n", err);
		assert_int_equal(it_drops_of(&log, JT_DROP_JITDUMP), 1);
	} else {
		/* a runtime that writes its jitdump whole: then it names the split */
		assert_split(&log, (uint32_t)pid, 1u << JT_SRC_JITDUMP);
	}
	it_log_free(&log);
	free(err);
}

/*
 * No names at all (--no-perfmap): .NET's JIT code lives in its memfd double mapping
 * ("/memfd:doublemapper (deleted)"), made executable by mprotect; its frames are the runtime's
 * JIT memory, "[dotnet jit]", whatever the program is called (Hot, not dotnet), never a file
 * and offset.
 */
static void test_doublemapper_is_dotnet_jit_memory(void **state)
{
	char *log_path = it_path_dup("dmap.jtl"), *out = it_path_dup("dmap.out");
	char *rec[] = { IT_JITRACE, "record", "--no-perfmap", "-F", "999", "-o", log_path, "--",
			dn.hot, "split", "2000", NULL };
	uint64_t n = 0, jit = 0;
	struct it_log log;
	pid_t pid;
	size_t i;

	(void)state;
	need_dotnet();
	dn_env(NULL);
	assert_int_equal(it_run(rec, out, NULL), 0);
	pid = hot_pid(out);
	dn_forget(pid);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_sample *s = (const void *)log.recs[i];
		const struct jt_rec_module *m;
		uint64_t id;

		if (s->h.type != JT_REC_SAMPLE || s->pid != (uint32_t)pid || !s->nr_frames ||
		    it_frame_is_kernel(&log, &s->frames[0]))
			continue;
		n++;
		id = JT_FRAME_ID(s->frames[0].ref);
		if (JT_FRAME_KIND(s->frames[0].ref) != JT_FRAME_USER || !id ||
		    id >= log.nr_modules || !(m = log.modules[id]))
			continue;
		jit += m->path_len == 12 && !memcmp(m->path, "[dotnet jit]", 12);
	}
	it_assert_share_at_least("leaf samples in [dotnet jit]", jit, n, 0.9,
				 "the split's loops are JIT code; 95% seen");
	it_log_free(&log);
	free(log_path);
	free(out);
}

/* ---- the CLR profiler module ---- */

static void need_module(void)
{
	need_dotnet();
	if (access(DN_MODULE, R_OK))
		fail_msg("%s missing: run make first", DN_MODULE);
}

/* CORECLR_* for the module beside jitrace, then JITRACE_CORECLR=opts if given. */
static void module_env(const char *opts, const char *const *more)
{
	static char path[PATH_MAX];
	const char *env[16] = { "CORECLR_ENABLE_PROFILING", "1", "CORECLR_PROFILER", DN_GUID,
				"CORECLR_PROFILER_PATH", path };
	int k = 6, i;

	assert_non_null(realpath(DN_MODULE, path));
	if (opts) {
		env[k++] = "JITRACE_CORECLR";
		env[k++] = opts;
	}
	for (i = 0; more && more[i] && k < 14; i++)
		env[k++] = more[i];
	env[k] = NULL;
	dn_env(env);
}

/* Record Hot MODE ARG with the module loaded (JITRACE_CORECLR=opts). Returns pid. */
static pid_t record_module(const char *name, const char *opts, bool calls, const char *mode,
			   const char *arg, struct it_log *log, char **out_path)
{
	module_env(opts, NULL);
	return record(name, calls, mode, arg, log, out_path);
}

/* Names from the metadata, split within 5 points, every name of the module's own. */
static void test_module_names_and_split(void **state)
{
	struct it_log log;
	pid_t pid;
	bool big = false, small = false;
	size_t i;

	(void)state;
	need_module();
	pid = record_module("mod", NULL, false, "split", "3000", &log, NULL);
	/* the module's two channels: its stub calls, and the perf map the agent writes */
	assert_split(&log, pid, 1u << JT_SRC_AGENT | 1u << JT_SRC_PERFMAP);
	assert_sources(&log, pid, 1u << JT_SRC_AGENT | 1u << JT_SRC_PERFMAP);
	for (i = 1; i < log.nr_methods; i++) {
		big |= it_name_is(log.methods[i], "JitraceTest.Hot.Big(int)");
		small |= it_name_is(log.methods[i], "JitraceTest.Hot.Small(int)");
	}
	assert_true(big && small);
	assert_mixed_stacks(&log, pid);
	assert_nothing_lost(&log);
	it_log_free(&log);
}

/* Per thread of pid, every leave closes the innermost open enter, and none stays open. */
static void assert_calls_nest(const struct it_log *log, uint32_t pid)
{
	struct { uint32_t tid; int depth; uint64_t ids[512]; } th[32];
	int nr_th = 0, k;
	size_t i;

	memset(th, 0, sizeof(th));
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_call *c = (const void *)log->recs[i];

		if (c->pid != pid || (c->h.type != JT_REC_ENTER && c->h.type != JT_REC_LEAVE))
			continue;
		for (k = 0; k < nr_th && th[k].tid != c->tid; k++)
			;
		if (k == nr_th) {
			assert_true(nr_th < 32);
			th[nr_th++].tid = c->tid;
		}
		if (c->h.type == JT_REC_ENTER) {
			assert_true(th[k].depth < 512);
			th[k].ids[th[k].depth++] = c->id;
		} else {
			if (!th[k].depth || th[k].ids[th[k].depth - 1] != c->id) {
				const struct jt_rec_method *m = it_method(log, c->id);

				fail_msg("tid %u leaves %.*s, not its innermost open method",
					 c->tid, m ? m->name_len : 1, m ? m->name : "?");
			}
			th[k].depth--;
		}
	}
	for (k = 0; k < nr_th; k++)
		if (th[k].depth)
			fail_msg("tid %u ends with %d methods open", th[k].tid, th[k].depth);
}

/*
 * Work and Leaf never recurse: each call is left before the next one is entered, on time,
 * the ones an exception ended too (not merely closed later, at their caller's leave).
 */
static void assert_left_on_time(const struct it_log *log, uint32_t pid, const char *name)
{
	uint64_t open = 0;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_call *c = (const void *)log->recs[i];

		if (c->pid != pid || (c->h.type != JT_REC_ENTER && c->h.type != JT_REC_LEAVE) ||
		    !it_name_is(it_method(log, c->id), name))
			continue;
		if (c->h.type == JT_REC_LEAVE)
			open--;
		else if (++open > 1)
			fail_msg("%s entered again before its last call was left (record %zu)",
				 name, i);
	}
}

/* Work and Leaf entered and left exactly as often as the program called them. */
static void assert_calls_exact(const struct it_log *log, const char *out)
{
	struct it_toy t;
	int i;

	it_toy_parse(out, &t);
	assert_true(t.done);
	assert_int_equal(t.nr_calls, 2);
	assert_true(it_wait_for_text(out, "thrown 100\n", 0));
	for (i = 0; i < t.nr_calls; i++) {
		uint64_t in = it_count_calls(log, t.pid, JT_REC_ENTER, t.names[i]);
		uint64_t left = it_count_calls(log, t.pid, JT_REC_LEAVE, t.names[i]);

		print_message("%s: called %llu, entered %llu, left %llu\n", t.names[i],
			      (unsigned long long)t.calls[i], (unsigned long long)in,
			      (unsigned long long)left);
		assert_int_equal(t.calls[i], DN_CALLS);
		assert_int_equal(in, t.calls[i]);
		assert_int_equal(left, t.calls[i]);
		assert_left_on_time(log, t.pid, t.names[i]);
	}
}

/* calls=PREFIX: only Hot's methods; a tenth of the calls throw through Leaf and Work and are
 * caught in their caller, and each frame is still left once. */
/*
 * The module with DOTNET_PerfMapEnabled=1: the runtime's map is the runtime's alone (no NUL
 * byte from a truncation under it, one line for each code address, none in the module's
 * form), and the module still names the split through jitrace's probes.
 */
static void test_module_and_runtime_never_write_one_map(void **state)
{
	const char *const more[] = { "DOTNET_PerfMapEnabled", "1", NULL };
	char path[64], *map, *line, *save = NULL;
	unsigned long long addrs[4096];
	size_t n = 0, i, j, size;
	struct it_log log;
	struct stat st;
	pid_t pid;

	(void)state;
	need_module();
	module_env(NULL, more);
	dn.keep_maps = true;
	pid = record("modmap", false, "split", "2000", &log, NULL);
	dn.keep_maps = false;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	assert_int_equal(stat(path, &st), 0);
	map = it_slurp(path);
	size = strlen(map);
	print_message("%s: %zu bytes, %lld in the file\n", path, size, (long long)st.st_size);
	assert_int_equal(size, (size_t)st.st_size);	/* no NUL byte in it */
	assert_null(strstr(map, "JitraceTest.Hot.Big("));	/* nothing in the module's form */
	for (line = strtok_r(map, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		assert_true(n < sizeof(addrs) / sizeof(addrs[0]));
		assert_int_equal(sscanf(line, "%llx", &addrs[n]), 1);
		n++;
	}
	for (i = 0; i < n; i++)
		for (j = i + 1; j < n; j++)
			if (addrs[i] == addrs[j])
				fail_msg("code at 0x%llx named twice in %s", addrs[i], path);
	free(map);
	dn_forget(pid);
	assert_split(&log, (uint32_t)pid, 1u << JT_SRC_AGENT);
	it_log_free(&log);
}

static void test_module_calls_exact_through_exceptions(void **state)
{
	struct it_log log;
	char *out;
	pid_t pid;
	size_t i;

	(void)state;
	need_module();
	pid = record_module("calls", "calls=JitraceTest.Hot.", true, "calls", "1000", &log, &out);
	assert_calls_exact(&log, out);
	assert_calls_nest(&log, pid);
	for (i = 0; i < log.n; i++) {	/* the filter let nothing else through */
		const struct jt_rec_call *c = (const void *)log.recs[i];
		const struct jt_rec_method *m;

		if (c->h.type != JT_REC_ENTER)
			continue;
		m = it_method(&log, c->id);
		if (!m || m->name_len < 16 || memcmp(m->name, "JitraceTest.Hot.", 16))
			fail_msg("a call of %.*s recorded", m ? m->name_len : 1, m ? m->name : "?");
	}
	assert_nothing_lost(&log);
	it_log_free(&log);
	free(out);
}

/* calls alone: every method, the runtime's own included (inlining off), still nests. */
static void test_module_calls_of_every_method_nest(void **state)
{
	struct it_log log;
	uint64_t enters = 0;
	char *out;
	pid_t pid;
	size_t i;

	(void)state;
	need_module();
	pid = record_module("allcalls", "calls", true, "calls", "1000", &log, &out);
	assert_calls_exact(&log, out);
	assert_calls_nest(&log, pid);
	for (i = 0; i < log.n; i++)
		enters += log.recs[i]->type == JT_REC_ENTER;
	print_message("%llu enters in all\n", (unsigned long long)enters);
	assert_true(enters > 2 * DN_CALLS + 1000);	/* far more than Hot's own */
	assert_nothing_lost(&log);
	it_log_free(&log);
	free(out);
}

/*
 * Dynamic methods (DynamicMethod) are named and, once the GC frees them, unloaded: each is
 * found in samples (it calls Spin) and none after its unload. (The runtime puts no enter and
 * leave hooks in them: their calls are not recorded.)
 */
static void test_module_dynamic_methods_named_and_unloaded(void **state)
{
	uint64_t sampled[DN_DYNAMIC] = { 0 }, gone[DN_DYNAMIC] = { 0 };
	struct it_log log;
	char name[64], *out;
	size_t i;
	unsigned int f;
	int k;

	(void)state;
	need_module();
	record_module("unload", NULL, false, "unload", "20", &log, &out);
	assert_true(it_wait_for_text(out, "dynamic 20\n", 0));
	for (i = 0; i < log.n; i++) {
		const struct jt_rec_sample *s = (const void *)log.recs[i];
		const struct jt_rec_call *c = (const void *)log.recs[i];
		const struct jt_rec_method *m;

		for (k = 0; k < DN_DYNAMIC; k++) {
			snprintf(name, sizeof(name), "dynamicClass.Dyn%d(int)", k);
			if (c->h.type == JT_REC_UNLOAD &&
			    it_name_is(it_method(&log, c->id), name)) {
				assert_false(gone[k]);	/* once */
				gone[k] = c->h.ts;
			}
			for (f = 0; s->h.type == JT_REC_SAMPLE && f < s->nr_frames; f++) {
				if (JT_FRAME_KIND(s->frames[f].ref) != JT_FRAME_METHOD)
					continue;
				m = it_method(&log, JT_FRAME_ID(s->frames[f].ref));
				if (!it_name_is(m, name))
					continue;
				if (gone[k])
					fail_msg("a sample in Dyn%d after its unload", k);
				sampled[k]++;
			}
		}
	}
	for (k = 0; k < DN_DYNAMIC; k++)
		if (!sampled[k] || !gone[k])
			fail_msg("Dyn%d: %s", k, sampled[k] ? "never unloaded" : "never sampled");
	assert_nothing_lost(&log);
	it_log_free(&log);
	free(out);
}

/* Without calls the module loads as a notification profiler too, leaving the main
 * profiler's place to another (.NET 9 and 10 need the list to end in ';'). */
static void test_module_as_notification_profiler(void **state)
{
	char path[PATH_MAX], list[PATH_MAX + 64];
	const char *env[] = { "CORECLR_ENABLE_NOTIFICATION_PROFILERS", "1",
			      "CORECLR_NOTIFICATION_PROFILERS", list, NULL };
	struct it_log log;
	bool big = false;
	pid_t pid;
	size_t i;

	(void)state;
	need_module();
	assert_non_null(realpath(DN_MODULE, path));
	snprintf(list, sizeof(list), "%s=%s;", path, DN_GUID);
	dn_env(env);
	pid = record("notify", false, "split", "2000", &log, NULL);
	assert_split(&log, pid, 1u << JT_SRC_AGENT | 1u << JT_SRC_PERFMAP);
	for (i = 1; i < log.nr_methods; i++)
		big |= it_name_is(log.methods[i], "JitraceTest.Hot.Big(int)");
	assert_true(big);
	assert_nothing_lost(&log);
	it_log_free(&log);
}

/* A mistyped option: the runtime goes on without the module, which says why. */
static void test_module_unknown_option_said(void **state)
{
	char *err = it_path_dup("badopt.err"), *out = it_path_dup("badopt.out");
	char *argv[] = { dn.hot, "calls", "1", NULL };

	(void)state;
	need_module();
	module_env("cals", NULL);
	assert_int_equal(it_run(argv, out, err), 0);
	dn_env(NULL);
	dn_forget(hot_pid(out));
	assert_true(it_wait_for_text(err, "jitrace-coreclr: unknown option 'cals'", 0));
	free(err);
	free(out);
}

/*
 * A process started with nothing set; `record -p PID --dotnet-module` loads the module into
 * it through the diagnostics socket (AttachProfiler), and the module names the code
 * compiled before, in its own form.
 */
static void test_module_attached_to_running_process(void **state)
{
	char *log_path = it_path_dup("modattach.jtl"), *out = it_path_dup("modattach.out");
	char *err = it_path_dup("modattach.err"), pid_s[16];
	char *prog[] = { dn.hot, "split", "8000", NULL };
	char *rec[] = { IT_JITRACE, "record", "-p", pid_s, "--dotnet-module", "-d", "3", "-F",
			"999", "-o", log_path, NULL };
	struct it_log log;
	bool big = false;
	pid_t pid;
	size_t i;

	(void)state;
	need_module();
	dn_env(NULL);
	pid = it_spawn(prog, out, NULL);
	assert_true(it_wait_for_text(out, "split ratio", 10000));
	sleep(2);
	snprintf(pid_s, sizeof(pid_s), "%d", (int)pid);
	assert_int_equal(it_run(rec, NULL, err), 0);
	assert_true(it_wait_for_text(err, "libjitrace-coreclr.so loaded into 1 .NET process", 0));
	assert_int_equal(it_wait(pid), 0);
	dn_forget(pid);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_split(&log, (uint32_t)pid, 1u << JT_SRC_AGENT | 1u << JT_SRC_PERFMAP);
	/* the module's naming, not the runtime's map's; a later code body "...[code N]" */
	for (i = 1; i < log.nr_methods; i++)
		big |= log.methods[i] && log.methods[i]->name_len >= 24 &&
		       !memcmp(log.methods[i]->name, "JitraceTest.Hot.Big(int)", 24);
	assert_true(big);
	assert_nothing_lost(&log);
	it_log_free(&log);
	free(log_path);
	free(out);
	free(err);
}

/* ---- beside other runtimes ---- */

#define DN_JAVA "/usr/lib/jvm/java-17-openjdk-amd64/bin/java"
#define DN_JAVAC "/usr/lib/jvm/java-17-openjdk-amd64/bin/javac"
#define DN_NODE "/usr/bin/node"

/* Every method a sample of pid names is pid's own, and none is named as another runtime
 * names its methods (prefixes), nor as the other programs' functions (infixes). */
static void assert_names_stay(const struct it_log *log, uint32_t pid, const char *const *prefixes,
			      const char *const *infixes)
{
	size_t i;
	unsigned int f;
	int k;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid)
			continue;
		for (f = 0; f < s->nr_frames; f++) {
			const struct jt_rec_method *m;

			if (JT_FRAME_KIND(s->frames[f].ref) != JT_FRAME_METHOD)
				continue;
			m = it_method(log, JT_FRAME_ID(s->frames[f].ref));
			assert_non_null(m);
			if (m->pid != pid)
				fail_msg("a sample of pid %u names method %llu of pid %u", pid,
					 (unsigned long long)m->id, m->pid);
			for (k = 0; prefixes[k]; k++)
				if (m->name_len >= strlen(prefixes[k]) &&
				    !memcmp(m->name, prefixes[k], strlen(prefixes[k])))
					fail_msg("pid %u named %.*s", pid, m->name_len, m->name);
			for (k = 0; infixes[k]; k++)
				if (memmem(m->name, m->name_len, infixes[k], strlen(infixes[k])))
					fail_msg("pid %u named %.*s", pid, m->name_len, m->name);
		}
	}
}

/*
 * A .NET process beside a JVM and a Node process in one `record -a`: each named from its
 * own channel (the .NET map, HotSpot's USDT probes, V8's map), names never crossing, and
 * the .NET split still within 5 points.
 */
static void test_beside_a_jvm_and_node(void **state)
{
	char *log_path = it_path_dup("beside.jtl"), *err = it_path_dup("beside.err");
	char *dn_out = it_path_dup("beside.out"), *cls = (char *)it_dir();
	char *rec[] = { IT_JITRACE, "record", "-a", "-F", "999", "-o", log_path, NULL };
	char *dotnet[] = { dn.hot, "split", "3000", NULL };
	char *java[] = { DN_JAVA, "-XX:+PreserveFramePointer", "-XX:CompileCommand=quiet",
			 "-XX:CompileCommand=dontinline,Hot::*", "-cp", cls, "Hot", "3", NULL };
	char *node[] = { DN_NODE, "--perf-basic-prof", "--logfile=/dev/null",
			 "tests/runtimes/node/hot.js", "3000", NULL };
	char *javac[] = { DN_JAVAC, "-d", cls, "tests/runtimes/java/Hot.java", NULL };
	static const char *const not_dotnet[] = { "JS:", "$", NULL };
	static const char *const not_dotnet_in[] = { "Hot.a(long)", "Hot.b(long)", "hotA", NULL };
	static const char *const not_other[] = { "stub ", NULL };
	static const char *const not_other_in[] = { "JitraceTest", "[Hot]", NULL };
	const char *const env[] = { "DOTNET_PerfMapEnabled", "1", NULL };
	bool has_java = !access(DN_JAVA, X_OK) && !access(DN_JAVAC, X_OK);
	bool has_node = !access(DN_NODE, X_OK);
	pid_t rec_pid, dn_pid, java_pid = 0, node_pid = 0;
	struct it_log log;

	(void)state;
	need_dotnet();
	if (!has_java || !has_node)
		print_message("%s%s missing: traced beside what there is\n",
			      has_java ? "" : DN_JAVA " ", has_node ? "" : DN_NODE);
	if (has_java && it_run(javac, NULL, NULL))
		fail_msg("%s failed on tests/runtimes/java/Hot.java", DN_JAVAC);
	rec_pid = it_spawn(rec, NULL, err);
	assert_true(it_wait_for_text(err, "jitrace: recording", 20000));
	dn_env(env);
	dn_pid = it_spawn(dotnet, dn_out, NULL);
	dn_env(NULL);
	if (has_java)
		java_pid = it_spawn(java, "/dev/null", NULL);
	if (has_node)
		node_pid = it_spawn(node, "/dev/null", NULL);
	assert_int_equal(it_wait(dn_pid), 0);
	if (java_pid)
		assert_int_equal(it_wait(java_pid), 0);
	if (node_pid)
		assert_int_equal(it_wait(node_pid), 0);
	usleep(300000);		/* past the reorder window: the exits are in */
	kill(rec_pid, SIGINT);
	assert_int_equal(it_wait(rec_pid), 0);
	dn_forget(dn_pid);
	if (node_pid)
		dn_forget(node_pid);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	assert_split(&log, (uint32_t)dn_pid, 1u << JT_SRC_PERFMAP);
	assert_names_stay(&log, (uint32_t)dn_pid, not_dotnet, not_dotnet_in);
	if (java_pid)
		assert_names_stay(&log, (uint32_t)java_pid, not_other, not_other_in);
	if (node_pid)
		assert_names_stay(&log, (uint32_t)node_pid, not_other, not_other_in);
	it_log_free(&log);
	free(log_path);
	free(err);
	free(dn_out);
}

/* ---- set up ---- */

/* The dotnet host on PATH (realpath), or NULL. */
static char *find_dotnet(void)
{
	const char *path = getenv("PATH");
	char *copy, *dir, *save = NULL, *found = NULL, buf[PATH_MAX];

	copy = strdup(path ? path : "/usr/bin:/bin");
	if (!copy)
		return NULL;
	for (dir = strtok_r(copy, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/dotnet", dir);
		if (!access(buf, X_OK))
			found = realpath(buf, NULL);
	}
	free(copy);
	return found;
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, err = -1;
	ssize_t n;

	if (in >= 0)
		out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	while (out >= 0 && (n = read(in, buf, sizeof(buf))) >= 0) {
		if (!n) {
			err = 0;
			break;
		}
		if (write(out, buf, (size_t)n) != n)
			break;
	}
	if (err)
		fprintf(stderr, "itest_dotnet: copying %s to %s: %s\n", from, to, strerror(errno));
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return err;
}

/* Build Hot.csproj (no packages: no network) into the scratch directory, once. */
static int setup(void **state)
{
	char *dir, *proj, *cs, *outdir, *log, *root;
	/* no build servers: nothing of the build lingers as a .NET process a test could meet */
	char *argv[] = { NULL, "build", NULL, "-c", "Release", "-o", NULL, "--nologo", "-v", "q",
			 "--disable-build-servers", NULL };
	int err = -1;

	(void)state;
	dn.dotnet = find_dotnet();
	if (!dn.dotnet)
		return 0;	/* each test says why it skips */
	dir = it_path_dup("dotnet");
	proj = it_path_dup("dotnet/Hot.csproj");
	cs = it_path_dup("dotnet/Hot.cs");
	outdir = it_path_dup("dotnet/out");
	log = it_path_dup("dotnet/build.log");
	/* the apphost finds the runtime beside the host that built it */
	root = strdup(dn.dotnet);
	if (root && strrchr(root, '/'))
		*strrchr(root, '/') = 0;
	setenv("DOTNET_ROOT", root ? root : "/usr/share/dotnet", 0);
	setenv("DOTNET_CLI_TELEMETRY_OPTOUT", "1", 1);
	setenv("DOTNET_NOLOGO", "1", 1);
	setenv("DOTNET_SKIP_FIRST_TIME_EXPERIENCE", "1", 1);
	setenv("MSBUILDDISABLENODEREUSE", "1", 1);
	setenv("UseSharedCompilation", "false", 1);
	argv[0] = dn.dotnet;
	argv[2] = proj;
	argv[6] = outdir;
	if (mkdir(dir, 0755) || copy_file(DN_SRC "/Hot.csproj", proj) ||
	    copy_file(DN_SRC "/Hot.cs", cs)) {
		fprintf(stderr, "itest_dotnet: cannot set up %s\n", dir);
	} else if (it_run(argv, log, log) != 0) {
		fprintf(stderr, "itest_dotnet: %s build %s failed: see %s\n", dn.dotnet, proj, log);
	} else {
		dn.hot = it_path_dup("dotnet/out/Hot");
		err = access(dn.hot, X_OK);
		if (err)
			fprintf(stderr, "itest_dotnet: the build made no %s\n", dn.hot);
	}
	free(dir);
	free(proj);
	free(cs);
	free(outdir);
	free(log);
	free(root);
	return err;
}

static int teardown(void **state)
{
	(void)state;
	free(dn.dotnet);
	free(dn.hot);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perfmap_enabled_split_names_stacks),
		cmocka_unit_test(test_perfmap_only),
		cmocka_unit_test(test_jitdump_only),
		cmocka_unit_test(test_tier_up_named_by_the_code_live),
		cmocka_unit_test(test_running_process_asked_for_its_perf_map),
		cmocka_unit_test(test_command_with_nothing_set_is_named),
		cmocka_unit_test(test_sigkill_leaves_the_perf_map_off),
		cmocka_unit_test(test_overlapping_sessions_both_keep_names),
		cmocka_unit_test(test_jitdump_cut_short_is_said_and_counted),
		cmocka_unit_test(test_doublemapper_is_dotnet_jit_memory),
		cmocka_unit_test(test_module_names_and_split),
		cmocka_unit_test(test_module_and_runtime_never_write_one_map),
		cmocka_unit_test(test_module_calls_exact_through_exceptions),
		cmocka_unit_test(test_module_calls_of_every_method_nest),
		cmocka_unit_test(test_module_dynamic_methods_named_and_unloaded),
		cmocka_unit_test(test_module_as_notification_profiler),
		cmocka_unit_test(test_module_unknown_option_said),
		cmocka_unit_test(test_module_attached_to_running_process),
		cmocka_unit_test(test_beside_a_jvm_and_node),
	};

	if (geteuid()) {
		fprintf(stderr, "itest_dotnet: needs root (BPF)\n");
		return 1;
	}
	return cmocka_run_group_tests(tests, setup, teardown);
}
