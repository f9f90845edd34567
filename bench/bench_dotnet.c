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
 * Internally, `bench_dotnet --stub-batches N` is the C side.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "base/util.h"

#define ROUNDS 7
#define N_BATCHES 320000	/* `batches N`: every condition, 40 batches */
#define DN_BATCH_WARM 200000	/* calls Hot.cs (.NET) `batches N` makes before the timed ones */
#define MONO_WARM 100000	/* the same in Hot.cs (Mono), and in the C loop */
#define WORK_CPU "1"		/* the runtimes, at nice -20 */
#define TRACER_CPU 0		/* this process: the collector of the recorded runs */
#define MAX_RETRIES 10		/* runs lost calls and run again, in all */
#define LOSSY -2.0		/* measure(): the run lost calls, or met others' uprobes */
#define NOT_RECORDED_MAX 200	/* ns: above it, uprobes must be on the stubs */
#define DN_GUID "{8E2B7A41-5C3D-4F1E-9A6B-2D7C0E4F8A13}"
#define DN_CALLS_OPT "calls=JitraceTest.Hot."
#define DN_EMPTY "JitraceTest.Hot.Empty(int)"
#define MONO_EMPTY "Hot:Empty (int)"
#define STUB_NAME "bench_dotnet:stub_loop"

enum cond { D_NONE, D_MODULE, D_CALLS, D_REC, M_CALLS, M_REC, C_REC, K_MAX };

static const char *const cond_name[K_MAX] = {
	[D_NONE] = ".NET, untraced (no module)",
	[D_MODULE] = ".NET, module loaded (no calls)",
	[D_CALLS] = ".NET, module with `" DN_CALLS_OPT "`, not recorded (batches)",
	[D_REC] = ".NET, module with `" DN_CALLS_OPT "`, recorded (--calls, batches)",
	[M_CALLS] = "Mono, `--profile=jitrace:calls`, not recorded (batches)",
	[M_REC] = "Mono, `--profile=jitrace:calls`, recorded (--calls, batches)",
	[C_REC] = "C loop on the agent API, recorded (--calls, batches)",
};

struct ctx {
	char agent[PATH_MAX], coreclr[PATH_MAX], mono_dir[PATH_MAX], self[PATH_MAX];
	char dotnet[PATH_MAX], version[64];
	int retries;		/* recorded runs that lost calls, run again */
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

/*
 * What a recorded run must show: every enter and leave the program made (warm-up and timed,
 * as it printed them) in the log, and no call lost, not even to a full ring: else the
 * figure would time calls lost, which cost less than calls logged. The run's ns if so;
 * LOSSY if calls were lost but all are accounted for (the collector starved: a run to
 * make again); -1 otherwise (said why).
 */
static double all_recorded(struct ctx *c, enum cond k, const struct jt_pipeline_stats *st,
			   double ns)
{
	double warm = bench_find_number(c->out, "warm=");
	uint64_t want = 2 * (uint64_t)(warm + N_BATCHES);
	/* what calls can be lost to (samples' stacks left unread, say, are not calls) */
	uint64_t lost = st->lost[JT_DROP_RB_CALL] + st->lost[JT_DROP_REORDER] +
			st->lost[JT_DROP_DECODE] + st->lost[JT_DROP_CALLS_FULL] +
			st->lost[JT_DROP_CALLS_BAD];
	if (warm >= 0 && st->col.calls >= want && !lost)
		return ns;
	if (warm >= 0 && st->col.calls + lost >= want) {
		fprintf(stderr, "bench_dotnet: %s: %llu records lost, %llu to full rings (the "
			"collector was kept from its CPU longer than the pauses): run again\n",
			cond_name[k], (unsigned long long)lost,
			(unsigned long long)st->lost[JT_DROP_CALLS_FULL]);
		return LOSSY;
	}
	fprintf(stderr, "bench_dotnet: %s: %llu enters and leaves recorded, expected at least "
		"%llu; %llu lost (%llu to full rings)\n", cond_name[k],
		(unsigned long long)st->col.calls, (unsigned long long)want,
		(unsigned long long)lost, (unsigned long long)st->lost[JT_DROP_CALLS_FULL]);
	show_failure(c, cond_name[k]);
	return -1;
}

/*
 * One run of condition k: ns per call, LOSSY, or -1 after saying why. The program runs on
 * WORK_CPU at nice -20 (all its threads); the collector, in this process, on the other.
 */
static double measure(struct ctx *c, enum cond k)
{
	bool mono = k == M_CALLS || k == M_REC;
	bool rec = k == D_REC || k == M_REC || k == C_REC;
	char n[16], *argv[16];
	const char *name;
	struct jt_live_opts lo;
	struct jt_pipeline_stats st;
	int a = 0, rc;
	double ns;

	snprintf(n, sizeof(n), "%d", N_BATCHES);
	dn_env(c, k <= D_REC && k != D_NONE, k >= D_CALLS ? DN_CALLS_OPT : NULL);
	argv[a++] = "nice";
	argv[a++] = "-n";
	argv[a++] = "-20";
	argv[a++] = "taskset";
	argv[a++] = "-c";
	argv[a++] = WORK_CPU;
	if (mono) {
		argv[a++] = "mono";
		argv[a++] = "--profile=jitrace:calls";
		argv[a++] = c->exe;
	} else if (k == C_REC) {
		argv[a++] = c->self;
		argv[a++] = "--stub-batches";
	} else {
		argv[a++] = c->hot;
	}
	if (k != C_REC)
		argv[a++] = "batches";
	argv[a++] = n;
	argv[a] = NULL;
	if (rec) {
		jt_liveopts__init(&lo);	/* as `jitrace record --calls -- CMD`: -F 99 */
		lo.calls = true;
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
	name = mono ? MONO_EMPTY : k == C_REC ? STUB_NAME : DN_EMPTY;
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
	if ((k == D_CALLS || k == M_CALLS) && ns > NOT_RECORDED_MAX) {
		fprintf(stderr, "bench_dotnet: %s: %.0f ns a call: something else is probing the "
			"agent's stubs (another jitrace record --calls-via uprobe?): run again\n",
			cond_name[k], ns);
		return LOSSY;
	}
	return rec ? all_recorded(c, k, &st, ns) : ns;
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
	double calls_cost[ROUNDS], to_c[ROUNDS], to_mono[ROUNDS], to_on[ROUNDS];
	double mono_on[ROUNDS];
	int r, k;

	for (r = 0; r < ROUNDS; r++) {	/* per round, so the spread of a ratio is real */
		calls_cost[r] = v[D_CALLS][r] - v[D_NONE][r];
		to_c[r] = v[D_REC][r] / v[C_REC][r];
		to_mono[r] = c->mono ? v[D_REC][r] / v[M_REC][r] : NAN;
		to_on[r] = v[D_REC][r] / v[D_CALLS][r];
		mono_on[r] = c->mono ? v[M_REC][r] / v[M_CALLS][r] : NAN;
	}
	bench_sort(to_on, ROUNDS);
	bench_sort(mono_on, ROUNDS);
	printf("## Call tracing: .NET with the CLR profiler module, against the agent's stubs "
	       "from C and Mono's module\n\n");
	printf("Nanoseconds per call of an empty method, `%s` (tests/runtimes/dotnet/Hot.cs, "
	       "built with `dotnet build -c Release`), .NET %s, and `%s` "
	       "(tests/runtimes/mono/Hot.cs, `mono --profile=jitrace:calls`, the module found "
	       "through LD_LIBRARY_PATH), Mono 6.8, %d interleaved rounds. Each runtime runs "
	       "`batches %d`: warm-up calls (.NET "
	       "%d, Mono %d, rounded up to whole batches) and then the timed ones in batches of "
	       "%d calls (%d enter and leave records, a quarter of a thread's ring of 65,536), "
	       "%ld ms apart, only the batches timed, "
	       "by the thread's CPU time (clock_gettime(CLOCK_THREAD_CPUTIME_ID) through "
	       "P/Invoke): .NET untraced, with the module and no calls, and with calls on; "
	       "with calls on, each runtime once not recorded, and once recorded call by call "
	       "through the agent's "
	       "per-thread buffers by a session of `jitrace record --calls -- CMD` run in the "
	       "bench's process (`-F 99` sampling as by default, the collector writing the log). "
	       "A C loop of `jitrace_method_enter/leave` around one defined method, recorded the "
	       "same way in the same batches, is beside them. Every runtime runs pinned to CPU "
	       "%s at nice -20 (`nice -n -20 taskset -c %s`), the collector on CPU %d, also at "
	       "nice -20. Every recorded run is checked to have all its enters and leaves in "
	       "the log (at least twice the calls it made, warm-up included: the traced prefix "
	       "`%s` also catches "
	       "Main and the loop's method) and no call lost, not even to a full ring; each "
	       "module's perf map proves it was loaded. .NET's module is set by "
	       "`CORECLR_ENABLE_PROFILING=1`, `CORECLR_PROFILER=%s`, "
	       "`CORECLR_PROFILER_PATH=libjitrace-coreclr.so`, and `JITRACE_CORECLR=%s`.\n\n",
	       DN_EMPTY, c->version, MONO_EMPTY, ROUNDS, N_BATCHES, DN_BATCH_WARM, MONO_WARM,
	       BENCH_BATCH_CALLS, 2 * BENCH_BATCH_CALLS, BENCH_BATCH_PAUSE_NS / 1000000,
	       WORK_CPU, WORK_CPU, TRACER_CPU, DN_CALLS_OPT, DN_GUID, DN_CALLS_OPT);
	bench_table_head();
	for (k = 0; k < K_MAX; k++)
		if ((k != M_REC && k != M_CALLS) || c->mono)
			bench_row(cond_name[k], "", "%.1f", " ns", v[k], ROUNDS, "");
	bench_row(".NET calls on, not recorded, minus untraced", "", "%.1f", " ns", calls_cost,
		  ROUNDS, "");
	bench_row("**.NET recorded / calls on, not recorded**", "<= 3x", "%.2f", "x", to_on,
		  ROUNDS, to_on[ROUNDS / 2] <= 3 ? "met" : "MISSED");
	if (c->mono)
		bench_row("**Mono recorded / calls on, not recorded**", "<= 3x", "%.2f", "x",
			  mono_on, ROUNDS, mono_on[ROUNDS / 2] <= 3 ? "met" : "MISSED");
	bench_row(".NET recorded / C stubs recorded", "", "%.2f", "x", to_c, ROUNDS, "");
	if (c->mono)
		bench_row(".NET recorded / Mono recorded", "", "%.2f", "x", to_mono, ROUNDS, "");
	else
		printf("\nMono not measured: `mono` or `mcs` is not installed.\n");
	printf("\nA recorded call in either runtime is one enter and one leave through the same "
	       "agent API as the C loop, each a record in the thread's ring. What .NET adds of "
	       "its own is the \"not recorded\" cost, %.1f ns a call here: the runtime's enter "
	       "and leave hooks (inlining off for the traced methods) and the module's "
	       "per-thread call stack and two agent calls. Ratios are per round, so drift "
	       "between rounds cancels. Took %.0f s. %d run%s lost calls, mostly to full rings "
	       "(the collector kept from its CPU longer than the pauses), or met another session's "
	       "uprobes on the agent's stubs, and %s run again; the figures are those of runs "
	       "that did neither.\n\n", calls_cost[ROUNDS / 2], secs,
	       c->retries, c->retries == 1 ? "" : "s", c->retries == 1 ? "was" : "were");
	if (to_on[ROUNDS / 2] > 3)
		printf("MISSED: .NET, a call recorded one by one: %.2fx the same call not "
		       "recorded (target <= 3x).\n\n", to_on[ROUNDS / 2]);
	if (c->mono && mono_on[ROUNDS / 2] > 3)
		printf("MISSED: Mono, a call recorded one by one: %.2fx the same call not "
		       "recorded (target <= 3x).\n\n", mono_on[ROUNDS / 2]);
}

int main(int argc, char **argv)
{
	double v[K_MAX][ROUNDS];
	uint64_t t0 = jt_now_ns();
	struct ctx c = { 0 };
	int r, k, err = 0;

	if (argc == 3 && !strcmp(argv[1], "--stub-batches"))
		return bench_stub_loop(STUB_NAME, MONO_WARM, atol(argv[2]), true);
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
	bench_pin(TRACER_CPU);	/* the collector's CPU; the runtimes are put on the other */
	/* the collector keeps up with the batches only if other work does not starve it */
	if (setpriority(PRIO_PROCESS, 0, -20))
		fprintf(stderr, "bench_dotnet: nice -20: %s\n", strerror(errno));
	for (r = 0; r < ROUNDS && !err; r++) {	/* interleaved: drift hits every condition */
		for (k = 0; k < K_MAX && !err; k++) {
			if ((k == M_REC || k == M_CALLS) && !c.mono)
				continue;
			v[k][r] = measure(&c, k);
			/* a run that lost calls (the collector starved for longer than the
			 * pauses), or not recorded but through uprobes, is run again, and
			 * counted */
			while (v[k][r] == LOSSY && c.retries < MAX_RETRIES) {
				c.retries++;
				v[k][r] = measure(&c, k);
			}
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
