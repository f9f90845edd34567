// SPDX-License-Identifier: GPL-2.0
/*
 * The Mono profiler module with calls, against Mono untraced: ns per call of an empty method
 * (Hot.cs `bench N`, timed inside Mono with Stopwatch, a monotonic clock, over a fixed count)
 * in four conditions, and, for comparison, the same agent stubs called from C and recorded
 * by the same `jitrace record` command. Rounds are interleaved; medians reported.
 * Usage: bench_mono JITRACE MONO_MODULE HOT_CS (run.sh passes build/jitrace,
 * build/libmono-profiler-jitrace.so, tests/runtimes/mono/Hot.cs). Internally,
 * `bench_mono --stub-loop N` is the C side.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jitrace/agent.h"
#include "bench.h"
#include "base/util.h"

#define ROUNDS 7
#define N_FAST 100000000	/* untraced: ~0.8 ns a call, ~80 ms */
#define N_MID 10000000		/* calls on, not recorded: 10-30 ns a call */
#define N_SLOW 500000		/* recorded: two uprobe hits a call, ~0.5-2 us */
#define NOT_RECORDED_MAX 200	/* ns: above it, uprobes must be on the stubs */
#define MONO "mono"
#define MCS "mcs"

enum cond { C_NONE, C_MODULE, C_CALLS, C_REC, C_STUBS, C_MAX };

static const char *const cond_name[C_MAX] = {
	[C_NONE] = "mono, untraced (no module)",
	[C_MODULE] = "mono --profile=jitrace (no calls)",
	[C_CALLS] = "mono --profile=jitrace:calls, not recorded",
	[C_REC] = "mono --profile=jitrace:calls, recorded (--calls-summary)",
	[C_STUBS] = "C loop on the same agent API, recorded (--calls-summary)",
};

struct ctx {
	char jitrace[PATH_MAX], module_dir[PATH_MAX], self[PATH_MAX];
	char dir[64], exe[128], out[128], err[128], log[128];
};

static void show_failure(struct ctx *c, const char *what)
{
	fprintf(stderr, "bench_mono: %s failed; its output:\n", what);
	bench_cat_stderr(c->out);
	bench_cat_stderr(c->err);
}

/* One run of condition k: ns per call, or -1 after saying why. */
static double measure(struct ctx *c, enum cond k)
{
	char nfast[16], nmid[16], nslow[16], *argv[16];
	const char *name, *profile = k == C_MODULE ? "--profile=jitrace" : "--profile=jitrace:calls";
	int a = 0;
	double ns, calls, want;

	snprintf(nfast, sizeof(nfast), "%d", N_FAST);
	snprintf(nmid, sizeof(nmid), "%d", N_MID);
	snprintf(nslow, sizeof(nslow), "%d", N_SLOW);
	if (k == C_REC || k == C_STUBS) {
		argv[a++] = c->jitrace;
		argv[a++] = "record";
		/* every call counted, none lost: a loop at full speed would fill a thread's
		 * ring in a few ms, and a call lost costs less than one logged */
		argv[a++] = "--calls-summary";
		argv[a++] = "-f";
		argv[a++] = "-o";
		argv[a++] = c->log;
		argv[a++] = "--";
	}
	if (k == C_STUBS) {
		argv[a++] = c->self;
		argv[a++] = "--stub-loop";
	} else {
		argv[a++] = MONO;
		if (k != C_NONE)
			argv[a++] = (char *)profile;
		argv[a++] = c->exe;
		argv[a++] = "bench";
	}
	argv[a++] = k == C_NONE || k == C_MODULE ? nfast : k == C_CALLS ? nmid : nslow;
	argv[a] = NULL;
	if (bench_run(argv, c->out, c->err)) {
		show_failure(c, cond_name[k]);
		return -1;
	}
	ns = bench_find_number(c->out, "ns_per_call=");
	if (ns <= 0) {
		show_failure(c, cond_name[k]);
		return -1;
	}
	name = k == C_STUBS ? "bench_mono:stub_loop" : "Hot:Empty";
	if (!bench_map_names(c->out, name) && k != C_NONE) {
		fprintf(stderr, "bench_mono: %s: no %s in its perf map: the agent or the module "
			"(looked for in %s) was not loaded\n", cond_name[k], name, c->module_dir);
		return -1;
	}
	if (k == C_CALLS && ns > NOT_RECORDED_MAX)
		fprintf(stderr, "bench_mono: warning: %.0f ns a call not recorded: something else "
			"is probing the agent's stubs (another jitrace record --calls?)\n", ns);
	if (k == C_NONE || k == C_MODULE || k == C_CALLS)
		return ns;
	/* every timed call must be in the log, none lost: else the figure lies (record's
	 * closing line counts calls, each an enter with its leave) */
	calls = bench_find_number(c->err, " samples, ");
	want = N_SLOW;
	if (calls < want || bench_file_has(c->err, "lost:")) {
		fprintf(stderr, "bench_mono: %s: jitrace recorded %.0f calls, expected at least "
			"%.0f and none lost\n", cond_name[k], calls, want);
		show_failure(c, cond_name[k]);
		return -1;
	}
	return ns;
}

static int setup(struct ctx *c, char **argv)
{
	char module[PATH_MAX], *mcs[] = { MCS, NULL, argv[3], NULL };
	char outarg[160];
	ssize_t len;

	if (!realpath(argv[1], c->jitrace)) {
		fprintf(stderr, "bench_mono: %s: %s\n", argv[1], strerror(errno));
		return -1;
	}
	if (!realpath(argv[2], module)) {
		fprintf(stderr, "bench_mono: %s: %s\n", argv[2], strerror(errno));
		return -1;
	}
	len = readlink("/proc/self/exe", c->self, sizeof(c->self) - 1);
	if (len <= 0) {
		fprintf(stderr, "bench_mono: /proc/self/exe: %s\n", strerror(errno));
		return -1;
	}
	c->self[len] = '\0';
	snprintf(c->module_dir, sizeof(c->module_dir), "%s", dirname(module));
	/* where a user would put it: Mono finds the module on the loader's path */
	setenv("LD_LIBRARY_PATH", c->module_dir, 1);
	snprintf(c->dir, sizeof(c->dir), "/tmp/jt_bench_mono.XXXXXX");
	if (!mkdtemp(c->dir)) {
		fprintf(stderr, "bench_mono: mkdtemp %s: %s\n", c->dir, strerror(errno));
		return -1;
	}
	snprintf(c->exe, sizeof(c->exe), "%s/Hot.exe", c->dir);
	snprintf(c->out, sizeof(c->out), "%s/out", c->dir);
	snprintf(c->err, sizeof(c->err), "%s/err", c->dir);
	snprintf(c->log, sizeof(c->log), "%s/calls.jtl", c->dir);
	snprintf(outarg, sizeof(outarg), "-out:%s", c->exe);
	mcs[1] = outarg;
	if (bench_run(mcs, c->out, c->err)) {
		show_failure(c, MCS);
		return -1;
	}
	return 0;
}

static void cleanup(struct ctx *c)
{
	unlink(c->exe);
	unlink(c->out);
	unlink(c->err);
	unlink(c->log);
	rmdir(c->dir);
}

static void print_section(double v[C_MAX][ROUNDS])
{
	double over[ROUNDS], ratio[ROUNDS], calls_cost[ROUNDS], rec_ratio[ROUNDS];
	int r, k;

	for (r = 0; r < ROUNDS; r++) {	/* per round, so the spread of a difference is real */
		over[r] = v[C_REC][r] - v[C_NONE][r];
		ratio[r] = v[C_REC][r] / v[C_STUBS][r];
		calls_cost[r] = v[C_CALLS][r] - v[C_NONE][r];
		rec_ratio[r] = v[C_REC][r] / v[C_CALLS][r];
	}
	bench_sort(rec_ratio, ROUNDS);
	printf("## Call tracing: Mono with the profiler module, against Mono untraced\n\n");
	printf("Nanoseconds per call of an empty method, `Hot:Empty (int)` "
	       "(tests/runtimes/mono/Hot.cs `bench N`: 100,000 warm-up calls, then N calls timed "
	       "inside Mono with Stopwatch, a monotonic clock), Mono %s, %d interleaved rounds of: "
	       "`mono Hot.exe bench %d`; `mono --profile=jitrace Hot.exe bench %d`; "
	       "`mono --profile=jitrace:calls Hot.exe bench %d`; "
	       "`jitrace record --calls-summary -o calls.jtl -- mono --profile=jitrace:calls "
	       "Hot.exe bench %d` (every call counted in the process through the agent's "
	       "buffers; `-F 99` sampling as by default); "
	       "and, for the cost of the same agent stubs without Mono, a C loop of "
	       "`jitrace_method_enter/leave` around one defined method, %d pairs, recorded by the "
	       "same command. Every recorded call is checked to be in the log, none lost. "
	       "The module is found through LD_LIBRARY_PATH.\n\n",
	       "6.8", ROUNDS, N_FAST, N_FAST, N_MID, N_SLOW, N_SLOW);
	bench_table_head();
	for (k = 0; k < C_MAX; k++)
		bench_row(cond_name[k], "", "%.1f", " ns", v[k], ROUNDS, "");
	bench_row("calls on, not recorded, minus untraced", "", "%.1f", " ns", calls_cost, ROUNDS,
		  "");
	bench_row("recorded, minus untraced", "", "%.0f", " ns", over, ROUNDS, "");
	bench_row("recorded Mono call / recorded C stub pair", "", "%.2f", "x", ratio, ROUNDS,
		  "");
	bench_row("recorded / calls on, not recorded", "<= 3x", "%.2f", "x", rec_ratio, ROUNDS,
		  rec_ratio[ROUNDS / 2] <= 3 ? "met" : "MISSED");
	printf("\nA recorded Mono call is one enter and one leave through the same agent API as "
	       "the C loop, summed in the thread's slot (%.0f ns here against %.0f ns for the C "
	       "pair). What Mono adds is the \"not recorded\" cost, %.1f ns a call: Mono's own "
	       "call instrumentation, and the module's method lookup, per-thread call stack and "
	       "two agent calls. bench_calls gives the cost of a pair logged one by one.\n\n",
	       v[C_REC][ROUNDS / 2], v[C_STUBS][ROUNDS / 2], calls_cost[ROUNDS / 2]);
}

int main(int argc, char **argv)
{
	double v[C_MAX][ROUNDS];
	uint64_t t0 = jt_now_ns();
	struct ctx c = { 0 };
	int r, k, err = 0;

	if (argc == 3 && !strcmp(argv[1], "--stub-loop"))
		return bench_stub_loop("bench_mono:stub_loop", 100000, atol(argv[2]), false);
	if (argc != 4) {
		fprintf(stderr, "usage: bench_mono JITRACE MONO_MODULE HOT_CS\n");
		return 2;
	}
	if (system(MONO " --version >/dev/null 2>&1")) {
		printf("## Call tracing: Mono with the profiler module\n\nNot measured: `%s` is not "
		       "installed.\n\n", MONO);
		return 0;
	}
	if (setup(&c, argv)) {
		cleanup(&c);
		return 1;
	}
	for (r = 0; r < ROUNDS && !err; r++) {	/* interleaved: drift hits every condition */
		for (k = 0; k < C_MAX && !err; k++) {
			v[k][r] = measure(&c, k);
			err = v[k][r] < 0;
			if (!err)
				fprintf(stderr, "bench_mono: round %d: %s: %.2f ns\n", r + 1,
					cond_name[k], v[k][r]);
		}
	}
	cleanup(&c);
	if (err)
		return 1;
	print_section(v);
	fprintf(stderr, "bench_mono: %.0f s\n", (jt_now_ns() - t0) / 1e9);
	return 0;
}
