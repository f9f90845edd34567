// SPDX-License-Identifier: GPL-2.0
/*
 * A .NET call under the CLR profiler module (libjitrace-coreclr.so) with calls recorded,
 * against the same agent stubs called from C and against Mono's profiler module, recorded
 * the same way: ns per call of an empty method (the Hot programs' `bench N`, timed inside
 * the runtime with Stopwatch over a fixed count, or CLOCK_MONOTONIC in C). .NET also runs
 * without the module, with it and no calls, and with calls not recorded. Rounds are
 * interleaved; medians with min and max reported.
 * Usage: bench_dotnet AGENT CORECLR_MODULE MONO_MODULE DOTNET_SRC MONO_HOT_CS (run.sh
 * passes build/libjitrace-agent.so, build/libjitrace-coreclr.so,
 * build/libmono-profiler-jitrace.so, tests/runtimes/dotnet, tests/runtimes/mono/Hot.cs).
 * Internally, `bench_dotnet --stub-loop N` is the C side.
 */
#include <errno.h>
#include <ftw.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "base/util.h"

#define ROUNDS 7
#define N_FAST 100000000	/* untraced, module without calls: ~2 ns a call, ~0.2 s */
#define N_MID 10000000		/* calls on, not recorded: ~20-30 ns a call */
#define N_SLOW 300000		/* recorded: two uprobe hits a call, ~0.5-6 us */
#define DN_WARM 1000000		/* calls Hot.cs (.NET) makes before its clock starts */
#define MONO_WARM 100000	/* the same in Hot.cs (Mono), and in the C loop */
#define NOT_RECORDED_MAX 200	/* ns: above it, uprobes must be on the stubs */
#define DN_GUID "{8E2B7A41-5C3D-4F1E-9A6B-2D7C0E4F8A13}"
#define DN_CALLS_OPT "calls=JitraceTest.Hot."
#define DN_EMPTY "JitraceTest.Hot.Empty(int)"
#define MONO_EMPTY "Hot:Empty (int)"
#define STUB_NAME "bench_dotnet:stub_loop"

enum cond { D_NONE, D_MODULE, D_CALLS, D_REC, M_REC, C_REC, K_MAX };

static const char *const cond_name[K_MAX] = {
	[D_NONE] = ".NET, untraced (no module)",
	[D_MODULE] = ".NET, module loaded (no calls)",
	[D_CALLS] = ".NET, module with `" DN_CALLS_OPT "`, not recorded",
	[D_REC] = ".NET, module with `" DN_CALLS_OPT "`, recorded (--calls-summary)",
	[M_REC] = "Mono, `--profile=jitrace:calls`, recorded (--calls-summary)",
	[C_REC] = "C loop on the agent API, recorded (--calls-summary)",
};

struct ctx {
	char agent[PATH_MAX], coreclr[PATH_MAX], mono_dir[PATH_MAX], self[PATH_MAX];
	char dotnet[PATH_MAX], version[64];
	char dir[64], hot[128], exe[128], out[128], err[128], log[128];
	bool mono;
};

/* The dotnet host on PATH (its real path, for DOTNET_ROOT), into buf; false if none. */
static bool find_dotnet(char *buf, size_t size)
{
	const char *path = getenv("PATH");
	char *copy = strdup(path ? path : "/usr/bin:/bin"), *dir, *save = NULL, cand[PATH_MAX];
	bool found = false;

	for (dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && !found;
	     dir = strtok_r(NULL, ":", &save)) {
		snprintf(cand, sizeof(cand), "%s/dotnet", dir);
		found = !access(cand, X_OK) && realpath(cand, buf) && strlen(buf) < size;
	}
	free(copy);
	return found;
}

static void show_failure(struct ctx *c, const char *what)
{
	fprintf(stderr, "bench_dotnet: %s failed; its output:\n", what);
	bench_cat_stderr(c->out);
	bench_cat_stderr(c->err);
}

/* The variables of the CLR profiler: set for the module (opts: JITRACE_CORECLR, or NULL),
 * or all cleared (module false). */
static void dn_env(struct ctx *c, bool module, const char *opts)
{
	unsetenv("CORECLR_ENABLE_PROFILING");
	unsetenv("CORECLR_PROFILER");
	unsetenv("CORECLR_PROFILER_PATH");
	unsetenv("JITRACE_CORECLR");
	if (!module)
		return;
	setenv("CORECLR_ENABLE_PROFILING", "1", 1);
	setenv("CORECLR_PROFILER", DN_GUID, 1);
	setenv("CORECLR_PROFILER_PATH", c->coreclr, 1);
	if (opts)
		setenv("JITRACE_CORECLR", opts, 1);
}

/* What a recorded run must show: every timed enter and leave in the log, none lost. */
static bool all_recorded(struct ctx *c, enum cond k, const struct jt_pipeline_stats *st,
			 long warm)
{
	uint64_t want = 2 * (uint64_t)(warm + N_SLOW);
	uint64_t lost = st->lost[JT_DROP_RB_CALL] + st->lost[JT_DROP_REORDER] +
			st->lost[JT_DROP_DECODE];

	if (st->col.calls >= want && !lost)
		return true;
	fprintf(stderr, "bench_dotnet: %s: %llu enters and leaves recorded, expected at least "
		"%llu; %llu lost\n", cond_name[k], (unsigned long long)st->col.calls,
		(unsigned long long)want, (unsigned long long)lost);
	show_failure(c, cond_name[k]);
	return false;
}

/* One run of condition k: ns per call, or -1 after saying why. */
static double measure(struct ctx *c, enum cond k)
{
	char n[16], *argv[8];
	const char *name;
	struct jt_live_opts lo;
	struct jt_pipeline_stats st;
	int a = 0, rc;
	double ns;

	snprintf(n, sizeof(n), "%d", k <= D_MODULE ? N_FAST : k == D_CALLS ? N_MID : N_SLOW);
	dn_env(c, k <= D_REC && k != D_NONE, k >= D_CALLS ? DN_CALLS_OPT : NULL);
	if (k == M_REC) {
		argv[a++] = "mono";
		argv[a++] = "--profile=jitrace:calls";
		argv[a++] = c->exe;
	} else if (k == C_REC) {
		argv[a++] = c->self;
		argv[a++] = "--stub-loop";
	} else {
		argv[a++] = c->hot;
	}
	if (k != C_REC)
		argv[a++] = "bench";
	argv[a++] = n;
	argv[a] = NULL;
	if (k == D_REC || k == M_REC || k == C_REC) {
		jt_liveopts__init(&lo);	/* as `jitrace record --calls-summary -- CMD`: -F 99 */
		lo.calls = true;
		/* every call counted, none lost: at full speed a thread's ring of calls one by
		 * one fills in a few ms, and a call lost costs less than one logged */
		lo.calls_summary = true;
		lo.agent_path = c->agent;
		rc = bench_record(&lo, argv, c->log, c->out, c->err, &st);
	} else {
		rc = bench_run(argv, c->out, c->err);
	}
	dn_env(c, false, NULL);
	ns = bench_find_number(c->out, "ns_per_call=");
	if (rc || ns <= 0) {
		show_failure(c, cond_name[k]);
		return -1;
	}
	name = k == M_REC ? MONO_EMPTY : k == C_REC ? STUB_NAME : DN_EMPTY;
	if (!bench_map_names(c->out, name) && k != D_NONE) {
		fprintf(stderr, "bench_dotnet: %s: no %s in its perf map: the module or the agent "
			"was not loaded\n", cond_name[k], name);
		show_failure(c, cond_name[k]);
		return -1;
	}
	/* the module says nothing when all is well */
	if (k <= D_REC && bench_file_has(c->err, "jitrace-coreclr:")) {
		show_failure(c, cond_name[k]);
		return -1;
	}
	if (k == D_CALLS && ns > NOT_RECORDED_MAX)
		fprintf(stderr, "bench_dotnet: warning: %.0f ns a call not recorded: something "
			"else is probing the agent's stubs (another jitrace record --calls?)\n", ns);
	if (k == D_REC && !all_recorded(c, k, &st, DN_WARM))
		return -1;
	if ((k == M_REC || k == C_REC) && !all_recorded(c, k, &st, MONO_WARM))
		return -1;
	return ns;
}

/* The newest Microsoft.NETCore.App the host knows (what Hot runs on), into c->version. */
static void dotnet_version(struct ctx *c)
{
	char *argv[] = { c->dotnet, "--list-runtimes", NULL }, line[512], *p;
	size_t n;
	FILE *f;

	snprintf(c->version, sizeof(c->version), "?");
	if (bench_run(argv, c->out, c->err) || !(f = fopen(c->out, "r")))
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Microsoft.NETCore.App ", 22)) {
			p = line + 22;
			n = strcspn(p, " \n");
			if (n >= sizeof(c->version))
				n = sizeof(c->version) - 1;
			memcpy(c->version, p, n);
			c->version[n] = '\0';
		}
	fclose(f);
}

/* Hot.csproj and Hot.cs of src built into the scratch directory: no packages, so no
 * network (the SDK's own NuGet copy serves the restore), and no build servers left. */
static int build_dotnet(struct ctx *c, const char *src)
{
	char proj[PATH_MAX], outdir[160], root[PATH_MAX], cmd[3 * PATH_MAX];
	char *argv[] = { c->dotnet, "build", proj, "-c", "Release", "-o", outdir, "--nologo",
			 "-v", "q", "--disable-build-servers", NULL };

	snprintf(root, sizeof(root), "%s", c->dotnet);
	setenv("DOTNET_ROOT", dirname(root), 0);	/* the apphost finds the runtime there */
	setenv("DOTNET_CLI_TELEMETRY_OPTOUT", "1", 1);
	setenv("DOTNET_NOLOGO", "1", 1);
	setenv("DOTNET_SKIP_FIRST_TIME_EXPERIENCE", "1", 1);
	setenv("MSBUILDDISABLENODEREUSE", "1", 1);
	setenv("UseSharedCompilation", "false", 1);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/dn' && cp '%s/Hot.cs' '%s/Hot.csproj' '%s/dn/'",
		 c->dir, src, src, c->dir);
	if (system(cmd)) {
		fprintf(stderr, "bench_dotnet: cannot copy %s/Hot.cs and Hot.csproj\n", src);
		return -1;
	}
	snprintf(proj, sizeof(proj), "%s/dn/Hot.csproj", c->dir);
	snprintf(outdir, sizeof(outdir), "%s/dn/out", c->dir);
	snprintf(c->hot, sizeof(c->hot), "%s/dn/out/Hot", c->dir);
	if (bench_run(argv, c->out, c->err) || access(c->hot, X_OK)) {
		show_failure(c, "dotnet build");
		return -1;
	}
	return 0;
}

static int build_mono(struct ctx *c, const char *hot_cs)
{
	char outarg[160], *argv[] = { "mcs", outarg, (char *)hot_cs, NULL };

	snprintf(c->exe, sizeof(c->exe), "%s/Hot.exe", c->dir);
	snprintf(outarg, sizeof(outarg), "-out:%s", c->exe);
	if (bench_run(argv, c->out, c->err)) {
		show_failure(c, "mcs");
		return -1;
	}
	return 0;
}

static int setup(struct ctx *c, char **argv)
{
	char mono_module[PATH_MAX];
	ssize_t len;

	if (!realpath(argv[1], c->agent) || !realpath(argv[2], c->coreclr) ||
	    !realpath(argv[3], mono_module)) {
		fprintf(stderr, "bench_dotnet: %s, %s, %s: %s\n", argv[1], argv[2], argv[3],
			strerror(errno));
		return -1;
	}
	len = readlink("/proc/self/exe", c->self, sizeof(c->self) - 1);
	if (len <= 0) {
		fprintf(stderr, "bench_dotnet: /proc/self/exe: %s\n", strerror(errno));
		return -1;
	}
	c->self[len] = '\0';
	snprintf(c->mono_dir, sizeof(c->mono_dir), "%s", dirname(mono_module));
	/* where a user would put it: Mono finds its module on the loader's path */
	setenv("LD_LIBRARY_PATH", c->mono_dir, 1);
	snprintf(c->dir, sizeof(c->dir), "/tmp/jt_bench_dotnet.XXXXXX");
	if (!mkdtemp(c->dir)) {
		fprintf(stderr, "bench_dotnet: mkdtemp %s: %s\n", c->dir, strerror(errno));
		c->dir[0] = '\0';
		return -1;
	}
	snprintf(c->out, sizeof(c->out), "%s/out", c->dir);
	snprintf(c->err, sizeof(c->err), "%s/err", c->dir);
	snprintf(c->log, sizeof(c->log), "%s/calls.jtl", c->dir);
	dotnet_version(c);
	if (build_dotnet(c, argv[4]))
		return -1;
	c->mono = !system("mono --version >/dev/null 2>&1 && mcs --version >/dev/null 2>&1");
	if (c->mono && build_mono(c, argv[5]))
		return -1;
	return 0;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);	/* best effort: whatever can go */
	return 0;
}

static void cleanup(struct ctx *c)
{
	if (c->dir[0])
		nftw(c->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void print_section(struct ctx *c, double v[K_MAX][ROUNDS], double secs)
{
	double calls_cost[ROUNDS], over[ROUNDS], to_c[ROUNDS], to_mono[ROUNDS], to_on[ROUNDS];
	int r, k;

	for (r = 0; r < ROUNDS; r++) {	/* per round, so the spread of a difference is real */
		calls_cost[r] = v[D_CALLS][r] - v[D_NONE][r];
		over[r] = v[D_REC][r] - v[D_NONE][r];
		to_c[r] = v[D_REC][r] / v[C_REC][r];
		to_mono[r] = c->mono ? v[D_REC][r] / v[M_REC][r] : NAN;
		to_on[r] = v[D_REC][r] / v[D_CALLS][r];
	}
	bench_sort(to_on, ROUNDS);
	printf("## Call tracing: .NET with the CLR profiler module, against the agent's stubs "
	       "from C and Mono's module\n\n");
	printf("Nanoseconds per call of an empty method, `%s` (tests/runtimes/dotnet/Hot.cs "
	       "`bench N`, built with `dotnet build -c Release`: %d warm-up calls, then N calls "
	       "timed inside the runtime with Stopwatch), .NET %s, %d interleaved rounds of: "
	       "`Hot bench %d`; the same with the module loaded (`CORECLR_ENABLE_PROFILING=1`, "
	       "`CORECLR_PROFILER=%s`, `CORECLR_PROFILER_PATH=libjitrace-coreclr.so`) and no "
	       "calls; with `JITRACE_CORECLR=%s` too, `Hot bench %d`, not recorded; and that "
	       "recorded, `Hot bench %d` run by a session of `jitrace record --calls-summary -- "
	       "CMD` (every call counted in the process through the agent's buffers) "
	       "(in the bench's process, `-F 99` sampling as by default, the collector writing "
	       "the log). Beside it, recorded the same way with %d timed calls: Mono 6.8, "
	       "`mono --profile=jitrace:calls Hot.exe bench %d` (tests/runtimes/mono/Hot.cs, "
	       "%d warm-up calls of `%s`; the module found through LD_LIBRARY_PATH), and a C "
	       "loop of `jitrace_method_enter/leave` around one defined method (%d warm-up "
	       "pairs). Every recorded run is checked to have all its enters and leaves in the "
	       "log, none lost; each module's perf map proves it was loaded.\n\n",
	       DN_EMPTY, DN_WARM, c->version, ROUNDS, N_FAST, DN_GUID, DN_CALLS_OPT, N_MID,
	       N_SLOW, N_SLOW, N_SLOW, MONO_WARM, MONO_EMPTY, MONO_WARM);
	bench_table_head();
	for (k = 0; k < K_MAX; k++)
		if (k != M_REC || c->mono)
			bench_row(cond_name[k], "", k >= D_REC ? "%.0f" : "%.1f", " ns", v[k],
				  ROUNDS, "");
	bench_row(".NET calls on, not recorded, minus untraced", "", "%.1f", " ns", calls_cost,
		  ROUNDS, "");
	bench_row(".NET recorded, minus untraced", "", "%.0f", " ns", over, ROUNDS, "");
	bench_row("**.NET recorded / C stubs recorded**", "", "%.2f", "x", to_c, ROUNDS, "");
	bench_row("**.NET recorded / calls on, not recorded**", "<= 3x", "%.2f", "x", to_on,
		  ROUNDS, to_on[ROUNDS / 2] <= 3 ? "met" : "MISSED");
	if (c->mono)
		bench_row("**.NET recorded / Mono recorded**", "", "%.2f", "x", to_mono, ROUNDS,
			  "");
	else
		printf("\nMono not measured: `mono` or `mcs` is not installed.\n");
	printf("\nA recorded call in either runtime is one enter and one leave through the same "
	       "agent API as the C loop, summed in the thread's slot (bench_calls gives the cost "
	       "of a pair logged one by one). What .NET adds of its own is the "
	       "\"not recorded\" cost, %.1f ns a call here: the runtime's enter and leave hooks "
	       "(inlining off for the traced methods) and the module's per-thread call stack and "
	       "two agent calls. Ratios are per round, so drift between rounds cancels. Took %.0f s.\n\n", calls_cost[ROUNDS / 2], secs);
}

int main(int argc, char **argv)
{
	double v[K_MAX][ROUNDS];
	uint64_t t0 = jt_now_ns();
	struct ctx c = { 0 };
	int r, k, err = 0;

	if (argc == 3 && !strcmp(argv[1], "--stub-loop"))
		return bench_stub_loop(STUB_NAME, MONO_WARM, atol(argv[2]));
	if (argc != 6) {
		fprintf(stderr, "usage: bench_dotnet AGENT CORECLR_MODULE MONO_MODULE DOTNET_SRC "
			"MONO_HOT_CS\n");
		return 2;
	}
	if (!find_dotnet(c.dotnet, sizeof(c.dotnet))) {
		printf("## Call tracing: .NET with the CLR profiler module\n\nNot measured: no "
		       "`dotnet` on PATH (install the .NET SDK, 8 or later).\n\n");
		return 0;
	}
	if (setup(&c, argv)) {
		cleanup(&c);
		return 1;
	}
	for (r = 0; r < ROUNDS && !err; r++) {	/* interleaved: drift hits every condition */
		for (k = 0; k < K_MAX && !err; k++) {
			if (k == M_REC && !c.mono)
				continue;
			v[k][r] = measure(&c, k);
			err = v[k][r] < 0;
			if (!err)
				fprintf(stderr, "bench_dotnet: round %d: %s: %.2f ns\n", r + 1,
					cond_name[k], v[k][r]);
		}
	}
	cleanup(&c);
	if (err)
		return 1;
	print_section(&c, v, (jt_now_ns() - t0) / 1e9);
	return 0;
}
