// SPDX-License-Identifier: MIT
/* toyjit: a toy JIT that runs scripted workloads with known counts, for testing jitrace. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "toyjit.h"

#define MAX_MS 86400000ULL		/* a day */
#define MAX_COUNT 1000000000ULL
#define MAX_NESTED 1000000ULL
#define MAX_RATIO 1000ULL
#define MAX_METHODS 1000000ULL
#define MAX_CALL_SPECS 256

static const char usage[] =
"Usage: toyjit SCENARIO [NAME=COUNT ...] [OPTIONS]\n"
"\n"
"A toy JIT for testing jitrace. It writes real x86-64 code into anonymous memory (mapped\n"
"RW, written, then made RX; never both), every function with a frame pointer and a\n"
"16-byte aligned stack at each call, and registers each with jitrace_code_load().\n"
"An instrumented function calls jitrace_method_enter(id) and jitrace_method_leave(id)\n"
"from its own generated code. Every function counts its own calls.\n"
"With --jitdump or --perf-map it tells of its code only in the files those write,\n"
"never through the agent.\n"
"\n"
"Scenarios:\n"
"  calls [NAME=COUNT ...]  call each function NAME exactly COUNT times from C (default\n"
"                          toy_a=1000 toy_b=250 toy_c=37), then toy_outer OUTER times;\n"
"                          each toy_outer call calls toy_inner INNER times (JIT to JIT).\n"
"                          Everything is instrumented. Deterministic.\n"
"  split                   toy_dispatch(chunk) calls hot_a then hot_b chunk times; hot_a\n"
"                          spins A units of work a call, hot_b B units (one instruction\n"
"                          loop, one unit ~30 us, calibrated at start by toy_calibrate),\n"
"                          so their CPU time splits A:B. Called until MS ms of CPU passed.\n"
"  recompile               toy_caller calls old_fn (one unit a call) for MS ms of CPU;\n"
"                          then unloads old_fn, writes new_fn (other code, int3-padded to\n"
"                          the same size) at the same address, loads it, and calls it\n"
"                          for MS ms of CPU.\n"
"  many                    N functions many_0 .. many_N-1 in one mapping, called round-robin\n"
"                          from C for MS ms of CPU (about 40 ns of work each).\n"
"  idle                    register idle_fn, call it once, sleep MS ms, exit.\n"
"  threads                 two threads named worker-a and worker-b (pthread_setname_np)\n"
"                          each call work_a / work_b (a unit of spin each) for MS ms of\n"
"                          its own CPU (1000); each prints \"thread NAME tid=TID\".\n"
"  block                   toy_waiter calls wait_a then wait_b, each of which calls a C\n"
"                          sleep (toy_block, through its address) for A*10 and B*10 ms\n"
"                          (--ratio, 3:1): off-CPU time split A:B, for about MS ms (1000)\n"
"\n"
"Options:\n"
"  -i, --instrument        instrument every function (calls: always)\n"
"      --jitdump           tell of code in ./jit-PID.dump (perf's jitdump format), not\n"
"                          through the agent: the header, then per function a debug-info\n"
"                          record (SCENARIO.toy, lines 10k+10 to 10k+12 for the k-th\n"
"                          function made: entry, body, return) and a code load timed\n"
"                          by CLOCK_MONOTONIC when its code is ready; the file is\n"
"                          announced by mapping its first page PROT_READ|PROT_EXEC.\n"
"                          The format has no unload: recompile's new_fn is told by its\n"
"                          load over old_fn's code alone. No -i, and not the calls\n"
"                          scenario (they need the agent)\n"
"      --jitdump-dir DIR   the same, DIR/jit-PID.dump\n"
"      --perf-map          write /tmp/perf-PID.map ourselves, not through the agent\n"
"                          (with --jitdump: both files, for the same code)\n"
"      --perf-map-at-exit  the same, but every line held until the toy ends, as a runtime\n"
"                          that buffers its map writes (mono --jitmap) does\n"
"      --start-delay MS    after printing the pid, sleep MS ms before anything else\n"
"      --ms MS             split: CPU ms (2000); recompile: CPU ms per phase (1000);\n"
"                          many: CPU ms (2000); idle: ms asleep (1000); block: ms of\n"
"                          waiting (1000)\n"
"      --ratio A:B         split: units of work per hot_a and hot_b call (3:1); block:\n"
"                          tens of ms wait_a and wait_b wait a call\n"
"      --rewrite-map HOW   split, with --perf-map: halfway through, write the map anew\n"
"                          with hot_a renamed hot_a_rewritten, its line first; HOW is\n"
"                          inplace (truncated, same file), rename or unlink; prints\n"
"                          \"rewrite ns=T\" (CLOCK_MONOTONIC) once it is written\n"
"      --fp-loop           split: while hot_a spins, its saved frame pointer points at\n"
"                          its own frame, so a frame-pointer walk of it never ends\n"
"      --fp-astray         split: while hot_a spins, its return address points into\n"
"                          its stack, so a frame-pointer walk of it goes astray\n"
"      --nested OUTER[:INNER]\n"
"                          calls: toy_outer calls and toy_inner calls per toy_outer\n"
"                          call (10:5, so toy_inner runs 50 times)\n"
"      --methods N         many: number of functions (10000)\n"
"      --hold MS           many: after the calls, keep the code loaded and sleep MS ms\n"
"                          before printing the counts and exiting (0)\n"
"  -h, --help              this text\n"
"\n"
"Output (stdout, one line each, flushed at once):\n"
"  pid PID                                    always first\n"
"  jitdump path=PATH                          --jitdump: the file, created and mapped\n"
"  perfmap path=PATH                          --perf-map: the file, created\n"
"  unit ns=NS iters=N                         split, recompile: the calibrated unit\n"
"  debug NAME file=F lines=L@0xA,L+1@0xB,L+2@0xC\n"
"                                             --jitdump: the debug info written before\n"
"                                             each load (many: not these)\n"
"  method NAME id=ID start=0xHEX size=0xHEX   each function registered (many: not these)\n"
"  methods N                                  many: all N registered\n"
"  hold                                       many with --hold: calls done, now asleep\n"
"  split ratio=A:B chunk=N                    split: hot_a/hot_b pairs per toy_dispatch call\n"
"  block wait_a=MSms wait_b=MSms rounds=N     block: what each waits, and how many rounds\n"
"  blocked wait_a=NS wait_b=NS                block: the time each spent in the sleep\n"
"  recompile chunk=N                          recompile: old_fn/new_fn calls per toy_caller\n"
"  switch begin_ns=NS                         recompile: CLOCK_MONOTONIC before the unload\n"
"  switch end_ns=NS                           recompile: CLOCK_MONOTONIC after the new load\n"
"  calls NAME=COUNT                           at the end, each instrumented function: the\n"
"                                             calls its own code counted\n"
"  done                                       always last\n"
"Errors go to stderr, naming the call that failed; the exit status is then nonzero (2 for\n"
"a bad command line).\n"
"\n"
"Examples:\n"
"  toyjit calls toy_a=100 toy_b=7 --nested 3:2\n"
"  perf record -F 999 -g toyjit split --ms 2000 --ratio 3:1\n"
"  toyjit recompile -i --ms 500\n"
"  toyjit many --methods 50000 --ms 5000 -i\n"
"  toyjit many --methods 10000 --ms 20 --hold 5000   # code that stays loaded, idle\n"
"  toyjit idle --start-delay 200 --ms 100\n"
"  perf record -k mono -F 999 -g toyjit split --jitdump   # then perf inject --jit\n"
"  toyjit recompile --jitdump-dir /tmp/jd --perf-map\n";

enum {
	OPT_START_DELAY = 256, OPT_MS, OPT_RATIO, OPT_NESTED, OPT_METHODS, OPT_HOLD, OPT_JITDUMP,
	OPT_JITDUMP_DIR, OPT_PERF_MAP, OPT_PERF_MAP_AT_EXIT, OPT_FP_LOOP, OPT_FP_ASTRAY, OPT_REWRITE_MAP,
};

static const struct option long_opts[] = {
	{ "instrument", no_argument, NULL, 'i' },
	{ "start-delay", required_argument, NULL, OPT_START_DELAY },
	{ "ms", required_argument, NULL, OPT_MS },
	{ "ratio", required_argument, NULL, OPT_RATIO },
	{ "nested", required_argument, NULL, OPT_NESTED },
	{ "methods", required_argument, NULL, OPT_METHODS },
	{ "hold", required_argument, NULL, OPT_HOLD },
	{ "jitdump", no_argument, NULL, OPT_JITDUMP },
	{ "jitdump-dir", required_argument, NULL, OPT_JITDUMP_DIR },
	{ "perf-map", no_argument, NULL, OPT_PERF_MAP },
	{ "perf-map-at-exit", no_argument, NULL, OPT_PERF_MAP_AT_EXIT },
	{ "fp-loop", no_argument, NULL, OPT_FP_LOOP },
	{ "fp-astray", no_argument, NULL, OPT_FP_ASTRAY },
	{ "rewrite-map", required_argument, NULL, OPT_REWRITE_MAP },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const struct toy_call_spec default_calls[] = {
	{ "toy_a", 1000 },
	{ "toy_b", 250 },
	{ "toy_c", 37 },
};

void toy_out(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

void toy_err(const char *fmt, ...)
{
	va_list ap;

	fputs("toyjit: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

uint64_t toy_now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t toy_cpu_ns(void)
{
	return clock_ns(CLOCK_PROCESS_CPUTIME_ID);
}

void toy_sleep_ms(uint64_t ms)
{
	uint64_t end = toy_now_ns() + ms * 1000000;
	struct timespec ts = { .tv_sec = end / 1000000000, .tv_nsec = end % 1000000000 };

	/* An absolute deadline: a signal that interrupts us does not stretch the sleep. */
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* A decimal number in [0, max]; just digits, the whole string. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

/* "A:B" (or just "A" when b_opt is set) with each part in [min, max]. */
static int parse_pair(const char *s, uint64_t min, uint64_t max, bool b_opt, uint32_t *a,
		      uint32_t *b)
{
	char buf[64];
	char *colon;
	uint64_t x, y;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (colon)
		*colon = 0;
	else if (!b_opt)
		return -1;
	if (parse_u64(buf, max, &x) || x < min)
		return -1;
	*a = (uint32_t)x;
	if (!colon)
		return 0;
	if (parse_u64(colon + 1, max, &y) || y < min)
		return -1;
	*b = (uint32_t)y;
	return 0;
}

static bool valid_name(const char *s, size_t len)
{
	size_t i;

	if (!len || len >= TOY_NAME_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_' || s[i] == '.'))
			return false;
	return true;
}

/* NAME=COUNT arguments of `calls`. */
static int parse_call_specs(struct toy_opts *o, char **args, int nargs,
			    struct toy_call_spec *specs)
{
	int i;
	size_t k;

	if (nargs > MAX_CALL_SPECS) {
		toy_err("more than %d NAME=COUNT arguments", MAX_CALL_SPECS);
		return -1;
	}
	for (i = 0; i < nargs; i++) {
		const char *eq = strchr(args[i], '=');
		size_t len = eq ? (size_t)(eq - args[i]) : 0;
		struct toy_call_spec *c = &specs[i];

		if (!eq || !valid_name(args[i], len) || parse_u64(eq + 1, MAX_COUNT, &c->count)) {
			toy_err("bad argument '%s': want NAME=COUNT, NAME of letters, digits, _ "
				"and . (at most %d), COUNT at most %llu", args[i],
				TOY_NAME_MAX - 1, MAX_COUNT);
			return -1;
		}
		memcpy(c->name, args[i], len);
		c->name[len] = 0;
		if (!strcmp(c->name, "toy_outer") || !strcmp(c->name, "toy_inner")) {
			toy_err("bad argument '%s': %s is the nested pair's name (see --nested)",
				args[i], c->name);
			return -1;
		}
		for (k = 0; k < (size_t)i; k++)
			if (!strcmp(specs[k].name, c->name)) {
				toy_err("bad argument '%s': %s named twice", args[i], c->name);
				return -1;
			}
	}
	o->calls = specs;
	o->ncalls = (size_t)nargs;
	return 0;
}

struct scenario {
	const char *name;
	int (*run)(const struct toy_opts *o);
	uint64_t default_ms;	/* 0: --ms does not apply */
};

static const struct scenario scenarios[] = {
	{ "calls", scenario_calls, 0 },
	{ "split", scenario_split, 2000 },
	{ "recompile", scenario_recompile, 1000 },
	{ "many", scenario_many, 2000 },
	{ "idle", scenario_idle, 1000 },
	{ "threads", scenario_threads, 1000 },
	{ "block", scenario_block, 1000 },
};

/* An option given to a scenario it does not apply to is a mistake worth hearing about. */
static int check_applies(const char *opt, bool given, const char *scenario, const char *want)
{
	if (!given || !strcmp(scenario, want))
		return 0;
	toy_err("%s applies to the %s scenario only (see --help)", opt, want);
	return -1;
}

int main(int argc, char **argv)
{
	static struct toy_call_spec specs[MAX_CALL_SPECS];
	struct toy_opts o = {
		.ratio_a = 3, .ratio_b = 1, .outer = 10, .inner = 5, .methods = 10000,
		.calls = default_calls,
		.ncalls = sizeof(default_calls) / sizeof(default_calls[0]),
	};
	bool ms_set = false, ratio_set = false, nested_set = false, methods_set = false;
	bool hold_set = false, perf_map = false, map_at_exit = false;
	const char *jitdump_dir = NULL;
	const struct scenario *sc = NULL;
	struct toy_sink sink;
	int opt, nargs, err;
	size_t i;

	while ((opt = getopt_long(argc, argv, "ih", long_opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			o.instrument = true;
			break;
		case OPT_START_DELAY:
			if (parse_u64(optarg, MAX_MS, &o.start_delay_ms)) {
				toy_err("bad --start-delay '%s': want ms, 0 to %llu", optarg,
					MAX_MS);
				return 2;
			}
			break;
		case OPT_MS:
			if (parse_u64(optarg, MAX_MS, &o.ms)) {
				toy_err("bad --ms '%s': want ms, 0 to %llu", optarg, MAX_MS);
				return 2;
			}
			ms_set = true;
			break;
		case OPT_RATIO:
			if (parse_pair(optarg, 1, MAX_RATIO, false, &o.ratio_a, &o.ratio_b)) {
				toy_err("bad --ratio '%s': want A:B, each 1 to %llu", optarg,
					MAX_RATIO);
				return 2;
			}
			ratio_set = true;
			break;
		case OPT_NESTED:
			if (parse_pair(optarg, 0, MAX_NESTED, true, &o.outer, &o.inner)) {
				toy_err("bad --nested '%s': want OUTER[:INNER], each 0 to %llu",
					optarg, MAX_NESTED);
				return 2;
			}
			nested_set = true;
			break;
		case OPT_METHODS:
			if (parse_u64(optarg, MAX_METHODS, &o.methods) || !o.methods) {
				toy_err("bad --methods '%s': want 1 to %llu", optarg, MAX_METHODS);
				return 2;
			}
			methods_set = true;
			break;
		case OPT_HOLD:
			if (parse_u64(optarg, MAX_MS, &o.hold_ms)) {
				toy_err("bad --hold '%s': want ms, 0 to %llu", optarg, MAX_MS);
				return 2;
			}
			hold_set = true;
			break;
		case OPT_JITDUMP:
			jitdump_dir = ".";
			break;
		case OPT_JITDUMP_DIR:
			if (!*optarg) {
				toy_err("bad --jitdump-dir '': want a directory");
				return 2;
			}
			jitdump_dir = optarg;
			break;
		case OPT_PERF_MAP:
			perf_map = true;
			break;
		case OPT_PERF_MAP_AT_EXIT:
			perf_map = map_at_exit = true;
			break;
		case OPT_FP_LOOP:
			o.fp_loop = true;
			break;
		case OPT_FP_ASTRAY:
			o.fp_astray = true;
			break;
		case OPT_REWRITE_MAP:
			if (!strcmp(optarg, "inplace"))
				o.rewrite_map = TOY_REWRITE_INPLACE;
			else if (!strcmp(optarg, "rename"))
				o.rewrite_map = TOY_REWRITE_RENAME;
			else if (!strcmp(optarg, "unlink"))
				o.rewrite_map = TOY_REWRITE_UNLINK;
			else {
				toy_err("bad --rewrite-map '%s': want inplace, rename or unlink",
					optarg);
				return 2;
			}
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs("(see toyjit --help)\n", stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		toy_err("no scenario given (see --help)");
		return 2;
	}
	o.scenario = argv[optind];
	for (i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		if (!strcmp(scenarios[i].name, o.scenario))
			sc = &scenarios[i];
	if (!sc) {
		toy_err("unknown scenario '%s': calls, split, recompile, many or idle", o.scenario);
		return 2;
	}
	nargs = argc - optind - 1;
	if (nargs && strcmp(sc->name, "calls")) {
		toy_err("unexpected argument '%s': only calls takes NAME=COUNT arguments",
			argv[optind + 1]);
		return 2;
	}
	if (nargs && parse_call_specs(&o, argv + optind + 1, nargs, specs))
		return 2;
	if ((strcmp(sc->name, "block") &&
	     check_applies("--ratio", ratio_set, sc->name, "split")) ||
	    check_applies("--nested", nested_set, sc->name, "calls") ||
	    check_applies("--methods", methods_set, sc->name, "many") ||
	    check_applies("--hold", hold_set, sc->name, "many"))
		return 2;
	if (ms_set && !sc->default_ms) {
		toy_err("--ms does not apply to the %s scenario (see --help)", sc->name);
		return 2;
	}
	if (!ms_set)
		o.ms = sc->default_ms;
	if (o.rewrite_map && (!perf_map || map_at_exit || strcmp(sc->name, "split"))) {
		toy_err("--rewrite-map is for the split scenario with --perf-map");
		return 2;
	}
	if ((jitdump_dir || perf_map) && (o.instrument || !strcmp(sc->name, "calls"))) {
		toy_err("%s tells of code without the agent; %s needs the agent's calls",
			jitdump_dir ? "--jitdump" : "--perf-map",
			o.instrument ? "-i" : "the calls scenario");
		return 2;
	}

	toy_out("pid %d", (int)getpid());
	toy_sleep_ms(o.start_delay_ms);
	sink__init(&sink, sc->name);
	o.sink = &sink;
	err = (jitdump_dir && sink__open_jitdump(&sink, jitdump_dir)) ||
	      (perf_map && sink__open_perfmap(&sink, map_at_exit)) || sc->run(&o);
	sink__close(&sink);
	if (err)
		return 1;
	toy_out("done");
	return 0;
}
