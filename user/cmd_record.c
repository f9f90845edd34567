// SPDX-License-Identifier: GPL-2.0
/* `jitrace record`: a live session into a log, with a status line and a summary. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "live.h"
#include "loader.h"
#include "log.h"
#include "names.h"
#include "util.h"

#define SECOND_NS 1000000000ULL

struct record_opts {
	struct jt_live_opts live;
	const char *output;
	bool force;
};

/* The recording as it goes: the log, and what the status line last showed. */
struct recorder {
	const struct record_opts *o;
	struct jt_live *live;
	struct jt_log_writer *log;
	struct jt_sink log_sink;	/* the log's own sink, behind count_calls */
	uint64_t calls;			/* enter records: calls as `report` counts them */
	bool tty;
	uint64_t next_second, last_received, last_ns;
};

static const char usage[] =
"Usage: jitrace record [-a | -p PID[,PID...]] [-F HZ] [-d SECONDS] [--calls] [-o FILE]\n"
"                      [OPTIONS] [-- COMMAND [ARGS...]]\n"
"\n"
"Record JIT code, sampled stacks and (with --calls) method entries and exits into a log.\n"
"System-wide unless -p or a COMMAND is given. Stop with Ctrl-C (a second one kills).\n"
"\n"
"  -a, --all-cpus         trace every process (the default)\n"
"  -p, --pid PID[,PID]    only these processes and their children\n"
"  -F, --freq HZ          sampling frequency per CPU (default 99; 0 turns sampling off)\n"
"  -d, --duration SECS    stop after SECS seconds\n"
"  -c, --calls            record method enter/leave from the agent and HotSpot's USDT\n"
"                         probes (java -XX:+DTraceMethodProbes): exact call counts\n"
"  -g, --kernel-stack     add kernel frames to samples\n"
"  -o, --output FILE      the log to write (default jitrace.jtl)\n"
"  -f, --force            replace FILE if it exists (a regular file only)\n"
"      --agent PATH       the libjitrace-agent.so to probe (default: next to jitrace)\n"
"      --ringbuf MB       ring buffer size, a power of two (default 64)\n"
"      --window MS        how late an event may arrive and still be put in order (100)\n"
"      --no-perfmap       do not read /tmp/perf-PID.map files\n"
"      --no-jitdump       do not read jit-PID.dump files (perf's jitdump format)\n"
"      --no-agent         do not probe libjitrace-agent (names from perf maps only)\n"
"      --no-usdt          do not probe HotSpot's USDT probes in libjvm.so\n"
"  -v, --verbose          show libbpf's messages\n"
"  -h, --help             this help\n"
"\n"
"Examples:\n"
"  jitrace record -d 30                       # the whole host for 30 s, at 99 Hz\n"
"  jitrace record -p 4242 -F 999 -o app.jtl   # one JVM, at 999 Hz\n"
"  jitrace record --calls -- ./myjit args     # run a command, with exact calls\n"
"  jitrace dump jitrace.jtl | less\n";

/* Record's own options: -a (the default anyway), -o, -f. */
static int record_option(void *ctx, int c, const char *arg)
{
	struct record_opts *o = ctx;

	if (c == 'o')
		o->output = arg;
	else if (c == 'f')
		o->force = true;
	return 0;	/* 'a' */
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{},
	};
	const struct jt_live_cli cli = {
		.name = "record", .usage = usage, .command = true,
		.shared = JT_LIVE_OPT_FREQ | JT_LIVE_OPT_PID | JT_LIVE_OPT_DURATION |
			  JT_LIVE_OPT_CALLS | JT_LIVE_OPT_KSTACK | JT_LIVE_OPT_AGENT |
			  JT_LIVE_OPT_RINGBUF | JT_LIVE_OPT_WINDOW | JT_LIVE_OPT_NO_PERFMAP |
			  JT_LIVE_OPT_NO_USDT,
		.shortopts = "ao:f", .longopts = longopts, .option = record_option, .ctx = o,
	};

	jt_liveopts__init(&o->live);
	o->output = "jitrace.jtl";
	o->force = false;
	return jt_liveopts__parse(&o->live, &cli, argc, argv);
}

/* Say what is being recorded, once everything is attached (tests wait for this line). */
static void announce(const struct recorder *r)
{
	const struct jt_live_opts *o = &r->o->live;
	char what[64];

	if (o->command)
		snprintf(what, sizeof(what), "%s (pid %d)", o->command[0],
			 (int)jt_live__child(r->live));
	else if (o->nr_pids)
		snprintf(what, sizeof(what), "%d process%s", o->nr_pids, o->nr_pids > 1 ? "es" : "");
	else
		snprintf(what, sizeof(what), "all processes");
	fprintf(stderr, "jitrace: recording %s: samples at %u Hz on %d CPUs%s%s into %s; "
		"Ctrl-C to stop\n", what, o->hz, jt_bpf__nr_samplers(jt_live__bpf(r->live)),
		o->calls ? ", calls" : "", o->agent_path ? "" : ", no agent", r->o->output);
}

static void fill_header(struct jt_log_header *h, const struct jt_live_opts *o, uint64_t start)
{
	struct timespec rt, mono;
	struct utsname u;

	memset(h, 0, sizeof(*h));
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	h->start_ns = start;
	h->realtime_offset_ns = ((int64_t)rt.tv_sec - mono.tv_sec) * 1000000000LL +
				(rt.tv_nsec - mono.tv_nsec);
	h->ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	h->sample_hz = o->hz;
	h->flags = (o->calls ? JT_LOG_F_CALLS : 0) | (o->kstack ? JT_LOG_F_KSTACK : 0) |
		   (!o->nr_pids && !o->command ? JT_LOG_F_SYSTEM_WIDE : 0);
	gethostname(h->hostname, sizeof(h->hostname) - 1);
	if (!uname(&u))
		memcpy(h->kernel, u.release, strnlen(u.release, sizeof(h->kernel) - 1));
}

/* Every record goes to the log; enters are counted on the way (a leave is not a call). */
static int count_calls(void *ctx, const struct jt_rec_hdr *rec)
{
	struct recorder *r = ctx;

	r->calls += rec->type == JT_REC_ENTER;
	return jt_sink__emit(&r->log_sink, rec);
}

static void status_line(struct recorder *r, uint64_t now)
{
	struct jt_pipeline_stats st;
	uint64_t lost = 0;
	double secs = (now - r->last_ns) / 1e9;
	unsigned int i;

	jt_live__stats(r->live, &st);
	for (i = 0; i < JT_DROP_MAX; i++)
		lost += st.lost[i];
	fprintf(stderr, "\r\033[Kjitrace: %.0f events/s, %llu process%s, %llu methods, "
		"%llu maps, %llu lost", secs > 0 ? (st.received - r->last_received) / secs : 0,
		(unsigned long long)st.col.procs, st.col.procs == 1 ? "" : "es",
		(unsigned long long)st.col.methods,
		(unsigned long long)st.maps, (unsigned long long)lost);
	r->last_received = st.received;
	r->last_ns = now;
}

/* Every second: what is recorded goes to the file, and on a terminal, the status line. */
static int on_tick(void *ctx, uint64_t now)
{
	struct recorder *r = ctx;
	int err;

	if (now < r->next_second)
		return 0;
	err = jt_logw__flush(r->log);
	if (!err && r->tty)
		status_line(r, now);
	r->next_second = now + SECOND_NS;
	return err;
}

static void summary(struct recorder *r, double secs)
{
	struct jt_pipeline_stats st;
	unsigned int i;
	bool lost = false;

	jt_live__stats(r->live, &st);
	fprintf(stderr, "jitrace: %.1f s: %llu samples, %llu calls, %llu methods defined, "
		"%llu records (%.1f MB) in %s\n", secs, (unsigned long long)st.col.samples,
		(unsigned long long)r->calls, (unsigned long long)st.col.methods,
		(unsigned long long)jt_logw__records(r->log),
		jt_logw__bytes(r->log) / 1e6, r->o->output);
	for (i = 0; i < JT_DROP_MAX; i++) {
		if (!st.lost[i])
			continue;
		fprintf(stderr, "%s%s %llu", lost ? ", " : "jitrace: lost: ", jt_drop__name(i),
			(unsigned long long)st.lost[i]);
		lost = true;
	}
	if (lost)
		fputs(" (see the drop records in the log)\n", stderr);
}

int jt_cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct recorder r = { .o = &o };
	struct jt_log_header hdr;
	struct jt_sink sink;
	int status, err = parse_args(argc, argv, &o);
	uint64_t start;

	if (err)
		return err > 0 ? 0 : 2;
	if (!o.live.agent_path && !o.live.no_agent)
		jt_err("warning: libjitrace-agent.so not found; recording samples and perf maps "
		       "only");
	r.tty = isatty(STDERR_FILENO);
	/* BPF first: without the privileges it needs, no empty log is left behind */
	r.live = jt_live__open(&o.live);
	if (!r.live)
		return 1;
	start = jt_live__start_ns(r.live);
	fill_header(&hdr, &o.live, start);
	r.log = jt_logw__create(o.output, &hdr, o.force);
	if (!r.log)
		goto fail;
	r.log_sink = jt_logw__sink(r.log);
	sink = (struct jt_sink){ count_calls, &r };
	if (jt_live__start(r.live, &sink))
		goto fail;
	if (jt_live__exec(r.live))	/* a command that cannot run is not being recorded */
		goto fail;
	announce(&r);
	r.next_second = start + SECOND_NS;
	r.last_ns = start;
	err = jt_live__run(r.live, on_tick, &r);
	if (r.tty)
		fputs("\r\033[K", stderr);
	if (err)
		goto fail;
	if (o.live.command && jt_live__timed_out(r.live) && !jt_live__child_ended(r.live, &status))
		jt_err("%g s are up: stopping %s (pid %d) with SIGTERM", o.live.duration,
		       o.live.command[0], (int)jt_live__child(r.live));
	summary(&r, (jt_now_ns() - start) / 1e9);
	err = jt_logw__close(r.log);
	r.log = NULL;
	if (err)
		goto fail;
	if (jt_live__child_ended(r.live, &status) && WIFEXITED(status) && WEXITSTATUS(status))
		jt_err("%s exited with status %d", o.live.command[0], WEXITSTATUS(status));
	jt_live__close(r.live);	/* stops the command if it still runs */
	return 0;
fail:
	if (r.log)	/* keep what was recorded readable */
		jt_logw__flush(r.log);
	jt_logw__abort(r.log);
	jt_live__close(r.live);
	return 1;
}
