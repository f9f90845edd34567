// SPDX-License-Identifier: GPL-2.0
/* The options record and top share: one table, one parser, the agent they probe. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jt_events.h"
#include "cmd/liveopts.h"
#include "join/pipeline.h"
#include "host/procfs.h"
#include "base/util.h"

/* getopt_long codes of the shared long-only options; a command's own start at 0x400 */
enum {
	OPT_AGENT = 0x300,
	OPT_NO_AGENT,
	OPT_RINGBUF,
	OPT_WINDOW,
	OPT_NO_PERFMAP,
	OPT_NO_JITDUMP,
	OPT_NO_USDT,
	OPT_DOTNET_MODULE,
	OPT_OFFCPU,
	OPT_OFFCPU_MIN,
	OPT_MAX_MEMORY,
	OPT_NO_ATTACH,
	OPT_JVM_AGENT,
	OPT_CALLS_VIA,
	OPT_UNWIND,
	OPT_STACK_COPY,
	OPT_CALLS_SUMMARY,
	OPT_CALLS_MIN,
};

#define MAX_OPTS 48

static const struct shared_opt {
	unsigned int mask;	/* the JT_LIVE_OPT_* that brings it; 0: every command's */
	struct option opt;
} shared_opts[] = {
	{ JT_LIVE_OPT_PID, { "pid", required_argument, NULL, 'p' } },
	{ JT_LIVE_OPT_FREQ, { "freq", required_argument, NULL, 'F' } },
	{ JT_LIVE_OPT_DURATION, { "duration", required_argument, NULL, 'd' } },
	{ JT_LIVE_OPT_CALLS, { "calls", no_argument, NULL, 'c' } },
	{ JT_LIVE_OPT_CALLS, { "calls-via", required_argument, NULL, OPT_CALLS_VIA } },
	{ JT_LIVE_OPT_CALLS, { "calls-summary", no_argument, NULL, OPT_CALLS_SUMMARY } },
	{ JT_LIVE_OPT_CALLS, { "calls-min", required_argument, NULL, OPT_CALLS_MIN } },
	{ JT_LIVE_OPT_KSTACK, { "kernel-stack", no_argument, NULL, 'g' } },
	{ JT_LIVE_OPT_AGENT, { "agent", required_argument, NULL, OPT_AGENT } },
	{ JT_LIVE_OPT_AGENT, { "no-agent", no_argument, NULL, OPT_NO_AGENT } },
	{ JT_LIVE_OPT_RINGBUF, { "ringbuf", required_argument, NULL, OPT_RINGBUF } },
	{ JT_LIVE_OPT_RINGBUF, { "max-memory", required_argument, NULL, OPT_MAX_MEMORY } },
	{ JT_LIVE_OPT_WINDOW, { "window", required_argument, NULL, OPT_WINDOW } },
	{ JT_LIVE_OPT_NO_PERFMAP, { "no-perfmap", no_argument, NULL, OPT_NO_PERFMAP } },
	{ JT_LIVE_OPT_NO_PERFMAP, { "no-jitdump", no_argument, NULL, OPT_NO_JITDUMP } },
	{ JT_LIVE_OPT_NO_PERFMAP, { "dotnet-module", no_argument, NULL, OPT_DOTNET_MODULE } },
	{ JT_LIVE_OPT_NO_USDT, { "no-usdt", no_argument, NULL, OPT_NO_USDT } },
	{ JT_LIVE_OPT_NO_PERFMAP, { "no-attach", no_argument, NULL, OPT_NO_ATTACH } },
	{ JT_LIVE_OPT_NO_PERFMAP, { "jvm-agent", no_argument, NULL, OPT_JVM_AGENT } },
	{ JT_LIVE_OPT_OFFCPU, { "off-cpu", no_argument, NULL, OPT_OFFCPU } },
	{ JT_LIVE_OPT_OFFCPU, { "off-cpu-min", required_argument, NULL, OPT_OFFCPU_MIN } },
	{ JT_LIVE_OPT_UNWIND, { "unwind", required_argument, NULL, OPT_UNWIND } },
	{ JT_LIVE_OPT_UNWIND, { "stack-copy", required_argument, NULL, OPT_STACK_COPY } },
	{ 0, { "verbose", no_argument, NULL, 'v' } },
	{ 0, { "help", no_argument, NULL, 'h' } },
};

void jt_liveopts__init(struct jt_live_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->hz = 99;
	o->ringbuf_bytes = 64 << 20;
	o->max_memory = (uint64_t)JT_MAX_MEMORY_MB << 20;
	o->window_ns = 100 * 1000000ULL;
	o->offcpu_min_ns = JT_OFFCPU_MIN_US * 1000ULL;
}

/* One pid of a --pid list: a running process, or a thread of one (its process is taken). */
static int add_pid(struct jt_live_opts *o, const char *tok, const char *proc_root)
{
	unsigned long v;
	uint32_t tgid;
	int i;

	if (jt_parse_uint("--pid", tok, 0, INT_MAX, &v))
		return -EINVAL;
	if (!v || (kill(v, 0) && errno == ESRCH)) {
		jt_err("--pid: no process %s", tok);
		return -EINVAL;
	}
	/* samples and maps are the process's: a thread id alone would match nothing */
	if (!jt_procfs__read_tgid(proc_root, v, &tgid) && tgid != v) {
		jt_err("--pid: %lu is a thread of process %u: recording process %u", v, tgid,
		       tgid);
		v = tgid;
	}
	for (i = 0; i < o->nr_pids && o->pids[i] != v; i++)
		;
	if (i < o->nr_pids)
		return 0;	/* named twice, or two threads of one process */
	if (o->nr_pids == JT_LIVE_MAX_PIDS) {
		jt_err("--pid: at most %d processes", JT_LIVE_MAX_PIDS);
		return -EINVAL;
	}
	o->pids[o->nr_pids++] = v;
	return 0;
}

int jt_liveopts__add_pids(struct jt_live_opts *o, const char *list, const char *proc_root)
{
	char *copy = strdup(list), *save = NULL, *tok;
	int err = 0;

	if (!copy) {
		jt_err("--pid: out of memory");
		return -EINVAL;
	}
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save))
		err = add_pid(o, tok, proc_root);
	free(copy);
	return err;
}

/* 0, 1 for --help (printed), or -EINVAL (reported). */
static int shared_option(struct jt_live_opts *o, const struct jt_live_cli *cli, int c,
			 const char *arg)
{
	unsigned long v;

	switch (c) {
	case 'p':
		return jt_liveopts__add_pids(o, arg, "/proc");
	case 'F':
		if (jt_parse_uint("-F", arg, cli->min_hz, 100000, &v))
			return -EINVAL;
		o->hz = v;
		return 0;
	case 'd':
		if (jt_parse_double(arg, &o->duration) || o->duration <= 0) {
			jt_err("-d: '%s' is not a positive number of seconds", arg);
			return -EINVAL;
		}
		return 0;
	case 'c':
		o->calls = true;
		return 0;
	case OPT_CALLS_VIA:
		/* buffers: the agents' calls regions, uprobes where an agent has none */
		if (strcmp(arg, "buffers") && strcmp(arg, "uprobe")) {
			jt_err("--calls-via: '%s' is neither buffers nor uprobe", arg);
			return -EINVAL;
		}
		o->calls_via_uprobe = !strcmp(arg, "uprobe");
		o->calls = true;
		return 0;
	case OPT_CALLS_SUMMARY:
		/* summed in the process; where calls go through uprobes, one by one still */
		o->calls_summary = true;
		o->calls = true;
		return 0;
	case OPT_CALLS_MIN:
		/* 1 us to 1000 s: the calls that took that long one by one, the rest summed */
		if (jt_parse_uint("--calls-min", arg, 1, 1000000000, &v))
			return -EINVAL;
		o->calls_min_ns = v * 1000ULL;
		o->calls_summary = true;
		o->calls = true;
		return 0;
	case 'g':
		o->kstack = true;
		return 0;
	case OPT_AGENT:
		o->agent_path = arg;
		return 0;
	case OPT_NO_AGENT:
		o->no_agent = true;
		return 0;
	case OPT_RINGBUF:
		if (jt_parse_uint("--ringbuf", arg, 0, 4096, &v))
			return -EINVAL;
		if (!v || (v & (v - 1))) {
			jt_err("--ringbuf: %lu MB is not a power of two", v);
			return -EINVAL;
		}
		o->ringbuf_bytes = v << 20;
		return 0;
	case OPT_MAX_MEMORY:
		if (jt_parse_uint("--max-memory", arg, 1, 1 << 20, &v))
			return -EINVAL;
		o->max_memory = (uint64_t)v << 20;
		return 0;
	case OPT_WINDOW:
		if (jt_parse_uint("--window", arg, 0, 60000, &v) || !v) {
			jt_err("--window: give 1 to 60000 ms");
			return -EINVAL;
		}
		o->window_ns = v * 1000000ULL;
		return 0;
	case OPT_NO_PERFMAP:
		o->no_perfmap = true;
		return 0;
	case OPT_NO_JITDUMP:
		o->no_jitdump = true;
		return 0;
	case OPT_NO_USDT:
		o->no_usdt = true;
		return 0;
	case OPT_DOTNET_MODULE:
		o->dotnet_module = true;
		return 0;
	case OPT_NO_ATTACH:
		o->no_attach = true;
		return 0;
	case OPT_JVM_AGENT:
		o->jvm_agent = true;
		return 0;
	case OPT_OFFCPU:
		o->offcpu = true;
		return 0;
	case OPT_OFFCPU_MIN:
		/* 1 us to 10 s; --off-cpu-min alone means --off-cpu */
		if (jt_parse_uint("--off-cpu-min", arg, 1, 10000000, &v))
			return -EINVAL;
		o->offcpu_min_ns = v * 1000ULL;
		o->offcpu = true;
		return 0;
	case OPT_UNWIND:
		if (!strcmp(arg, "fp")) {
			o->ustack_bytes = 0;
		} else if (!strcmp(arg, "cfi")) {
			if (!o->ustack_bytes)
				o->ustack_bytes = JT_USTACK_DEFAULT;
		} else {
			jt_err("--unwind: '%s' is neither fp nor cfi", arg);
			return -EINVAL;
		}
		return 0;
	case OPT_STACK_COPY:
		/* --stack-copy alone means --unwind cfi */
		if (jt_parse_uint("--stack-copy", arg, JT_USTACK_MIN, JT_USTACK_MAX, &v))
			return -EINVAL;
		o->ustack_bytes = v & ~7UL;
		return 0;
	case 'v':
		o->verbose = true;
		return 0;
	default:	/* 'h' */
		fputs(cli->usage, stdout);
		return 1;
	}
}

/* The shared option getopt_long returned as c, if the command takes it; NULL if not. */
static const struct shared_opt *find_shared(const struct jt_live_cli *cli, int c)
{
	size_t i;

	for (i = 0; i < JT_ARRAY_SIZE(shared_opts); i++) {
		const struct shared_opt *s = &shared_opts[i];

		if (s->opt.val == c && (!s->mask || (s->mask & cli->shared)))
			return s;
	}
	return NULL;
}

/* The command's getopt tables: its own options, then the shared ones it takes. */
static int build_tables(const struct jt_live_cli *cli, struct option *longs, char *shorts,
			size_t cap)
{
	size_t n = 0, len = 0, i;

	if (cli->command)
		shorts[len++] = '+';	/* options end where the command begins */
	for (i = 0; cli->shortopts[i] && len < cap; i++)
		shorts[len++] = cli->shortopts[i];
	for (i = 0; cli->longopts && cli->longopts[i].name && n < MAX_OPTS; i++)
		longs[n++] = cli->longopts[i];
	for (i = 0; i < JT_ARRAY_SIZE(shared_opts) && n < MAX_OPTS && len + 2 < cap; i++) {
		const struct option *opt = &shared_opts[i].opt;

		if (shared_opts[i].mask && !(shared_opts[i].mask & cli->shared))
			continue;
		longs[n++] = *opt;
		if (opt->val >= 256)
			continue;
		shorts[len++] = opt->val;
		if (opt->has_arg)
			shorts[len++] = ':';
	}
	if (n == MAX_OPTS || len + 2 >= cap) {
		jt_err("%s: too many options", cli->name);	/* a bug, not the user's */
		return -EINVAL;
	}
	shorts[len] = 0;
	longs[n] = (struct option){ 0 };
	return 0;
}

/* The agent installed with this jitrace: beside the program or in ../lib; NULL: none. */
static const char *find_agent(char *buf, size_t len)
{
	static const char *const rel[] = { "libjitrace-agent.so", "../lib/libjitrace-agent.so" };
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;
	size_t i;

	if (n <= 0)
		return NULL;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return NULL;
	*slash = 0;
	for (i = 0; i < JT_ARRAY_SIZE(rel); i++) {
		if ((size_t)snprintf(buf, len, "%s/%s", exe, rel[i]) < len && !access(buf, R_OK))
			return buf;
	}
	return NULL;
}

/* Once every option is in: what they mean together, and where the agent is. */
static int check(struct jt_live_opts *o)
{
	const char *given = o->agent_path;
	uint64_t fixed = jt_live__fixed_bytes(o);

	if (jt_live__mem_limit(o) < JT_LIVE_GROW_MIN_BYTES) {
		jt_err("--max-memory: %llu MB leaves less than %llu MB for methods and maps beside "
		       "the ring buffer (--ringbuf %zu MB), the reorder buffer (%u MB) and the "
		       "program (%llu MB): give at least %llu MB, or a smaller --ringbuf",
		       (unsigned long long)(o->max_memory >> 20), JT_LIVE_GROW_MIN_BYTES >> 20,
		       o->ringbuf_bytes >> 20, 2 * (JT_PIPELINE_PENDING_BYTES >> 20),
		       JT_LIVE_BASE_BYTES >> 20, (fixed + JT_LIVE_GROW_MIN_BYTES) >> 20);
		return -EINVAL;
	}

	if (o->calls_summary && o->calls_via_uprobe) {
		jt_err("--calls-summary and --calls-min need the agents' buffers: uprobes see "
		       "each call, not sums (leave out --calls-via uprobe)");
		return -EINVAL;
	}
	if (o->calls && o->no_agent && o->no_usdt) {
		jt_err("--calls with --no-agent and --no-usdt: calls come only from the agent "
		       "and HotSpot's USDT probes");
		return -EINVAL;
	}
	if (o->dotnet_module && o->no_agent) {
		jt_err("--dotnet-module with --no-agent: the module reports through the agent");
		return -EINVAL;
	}
	if (o->jvm_agent && (o->no_agent || o->no_attach)) {
		jt_err("--jvm-agent with %s: the JVMTI agent is loaded by attaching and reports "
		       "through the agent", o->no_agent ? "--no-agent" : "--no-attach");
		return -EINVAL;
	}
	o->agent_path = NULL;
	if (o->no_agent)
		return 0;
	if (given) {
		if (access(given, R_OK)) {
			jt_err("--agent %s: %s", given, strerror(errno));
			return -EINVAL;
		}
		o->agent_path = given;
		return 0;
	}
	o->agent_path = find_agent(o->agent_buf, sizeof(o->agent_buf));
	if (!o->agent_path && (o->calls || o->dotnet_module || o->jvm_agent)) {
		jt_err("%s needs libjitrace-agent.so: none beside jitrace or in ../lib; "
		       "name it with --agent PATH", o->calls ? "--calls" :
		       o->dotnet_module ? "--dotnet-module" : "--jvm-agent");
		return -EINVAL;
	}
	return 0;
}

int jt_liveopts__parse(struct jt_live_opts *o, const struct jt_live_cli *cli, int argc,
		       char **argv)
{
	struct option longs[MAX_OPTS + 1];
	char shorts[3 * MAX_OPTS];
	int c, err;

	if (build_tables(cli, longs, shorts, sizeof(shorts)))
		return -EINVAL;
	optind = 0;	/* 0, not 1: getopt reads the tables' leading '+' afresh */
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (c == '?') {	/* getopt said what is wrong */
			fprintf(stderr, "Try 'jitrace %s --help'.\n", cli->name);
			return -EINVAL;
		}
		if (find_shared(cli, c))
			err = shared_option(o, cli, c, optarg);
		else
			err = cli->option(cli->ctx, c, optarg);
		if (err)
			return err;
	}
	if (optind < argc) {
		if (!cli->command) {
			jt_err("%s takes no arguments ('%s')", cli->name, argv[optind]);
			return -EINVAL;
		}
		o->command = argv + optind;
	}
	return check(o);
}
