// SPDX-License-Identifier: GPL-2.0
/* `jitrace record`: a live session into a log, with a status line and a summary. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd/cmds.h"
#include "cmd/liveopts.h"
#include "session/live.h"
#include "session/loader.h"
#include "log/log.h"
#include "base/names.h"
#include "export/push.h"
#include "log/segment.h"
#include "base/text.h"
#include "base/util.h"

#define SECOND_NS 1000000000ULL
#define PUSH_DRAIN_S 15.0	/* at the end, how long pushes may still take */

/* Long-only options, past the shared table's codes */
enum { OPT_ROTATE = 0x400, OPT_MAX_AGE, OPT_MAX_SIZE, OPT_PUSH, OPT_PUSH_FORMAT, OPT_SERVICE,
       OPT_PUSH_AUTH };

struct record_opts {
	struct jt_live_opts live;
	const char *output;
	bool force;
	double rotate, max_age, max_size_mb;	/* flight recorder: 0 unless given */
	const char *push_url, *service, *push_auth;
	enum jt_push_format push_format;
	struct jt_push_auth auth;		/* read from push_auth */
};

/* The recording as it goes: the log, and what the status line last showed. */
struct recorder {
	const struct record_opts *o;
	struct jt_live *live;
	struct jt_log_writer *log;
	struct jt_segment *seg;		/* instead of log: a directory of segments */
	struct jt_push *push;		/* segments pushed as they close */
	int usr2;			/* signalfd of SIGUSR2: close the segment now */
	struct jt_sink log_sink;	/* the log's own sink, behind count_calls */
	uint64_t calls;			/* enter records: calls as `report` counts them */
	bool tty;
	uint64_t next_second, last_received, last_ns;
};

static const char usage[] =
"Usage: jitrace record [-a | -p PID[,PID...]] [-F HZ] [-d SECONDS] [--calls] [-o FILE]\n"
"                      [OPTIONS] [-- COMMAND [ARGS...]]\n"
"\n"
"Record JIT code, sampled stacks and (with --calls) method entries and exits, (with\n"
"--off-cpu) where threads wait, into a log.\n"
"System-wide unless -p or a COMMAND is given. Stop with Ctrl-C (a second one kills).\n"
".NET processes of -p, or running when -a starts, are asked to write their perf maps,\n"
"and to stop once no recording needs them (even if jitrace is killed); a COMMAND gets\n"
"DOTNET_PerfMapEnabled=3 unless its environment sets it.\n"
"\n"
"  -a, --all-cpus         trace every process (the default)\n"
"  -p, --pid PID[,PID]    only these processes and their children\n"
"                         With -p or -a, each JVM already running (a process mapping\n"
"                         libjvm.so) is attached by HotSpot's attach mechanism, as\n"
"                         jcmd does, and asked to write /tmp/perf-PID.map of the code\n"
"                         it compiled before (Compiler.perfmap, JDK 17+); its compilers\n"
"                         wait while it writes; nothing is loaded into it. The map is\n"
"                         removed once no recording needs it (even if jitrace is\n"
"                         killed), unless it was there before. What stays: HotSpot\n"
"                         never stops the Attach Listener thread this starts, nor\n"
"                         removes its /tmp/.java_pidPID socket, until the JVM exits.\n"
"                         A JVM that cannot be attached is named once, with why;\n"
"                         its frames stay [java jit]. --no-attach: none is attached\n"
"  -F, --freq HZ          sampling frequency per CPU (default 99; 0 turns sampling off)\n"
"  -d, --duration SECS    stop after SECS seconds\n"
"  -c, --calls            record method enter/leave from the agent and HotSpot's USDT\n"
"                         probes (java -XX:+DTraceMethodProbes): exact call counts\n"
"      --calls-via HOW    buffers (default): the agent writes calls into per-thread\n"
"                         buffers jitrace drains (tens of ns a call; uprobes serve an\n"
"                         agent without them); uprobe: every call through the agent's\n"
"                         uprobed stubs (a kernel-side view, microseconds a call)\n"
"      --calls-summary    sum calls in the process per method and thread (count,\n"
"                         inclusive, exclusive time): no event a call, none lost\n"
"      --calls-min US     --calls-summary, and each call of US microseconds or more\n"
"                         logged alone with its enter and leave\n"
"  -g, --kernel-stack     add kernel frames to samples (and to off-CPU stacks)\n"
"      --unwind MODE      user stacks by fp (frame pointers, the default) or cfi: each\n"
"                         sample also copies the top of its stack, which jitrace unwinds\n"
"                         by the code's .eh_frame where frame pointers are missing\n"
"                         (Debian's libraries and programs, mono-sgen), and a JVM's\n"
"                         compiled and interpreted frames by HotSpot's own layout\n"
"                         (interpreted methods named); frames are logged, not bytes\n"
"      --stack-copy BYTES the most stack a sample copies with --unwind cfi (512 to\n"
"                         8192, default 8192; each thread's copy is cut to what\n"
"                         its walks need; implies --unwind cfi)\n"
"      --off-cpu          off-CPU time too: each time a thread leaves the CPU, its\n"
"                         stack then and how long it was off (locks, I/O, sleeps,\n"
"                         preemption); see report's off-CPU table, flamegraph --off-cpu\n"
"      --off-cpu-min US   waits shorter than US microseconds are summed per thread\n"
"                         without their stacks (default 1000; implies --off-cpu)\n"
"  -o, --output FILE      the log to write (default jitrace.jtl; with --rotate, a\n"
"                         directory, made 0700 if missing, default jitrace.d)\n"
"  -f, --force            replace FILE if it exists (a regular file only)\n"
"      --rotate SECS      flight recorder: segments of SECS seconds in the directory -o,\n"
"                         each a complete log; SIGUSR2 closes the current one at once\n"
"      --max-age SECS     delete segments that ended SECS or more ago, oldest first\n"
"      --max-size MB      keep the directory's segments within MB megabytes, oldest\n"
"                         deleted first (a segment also closes at a quarter of MB)\n"
"      --push URL         push each closed segment as pprof profiles, one a process,\n"
"                         to a Pyroscope or Parca server at URL (needs --rotate)\n"
"      --push-format F    pyroscope (POST URL/ingest, the default) or parca (POST\n"
"                         URL/profiles/writeraw, its HTTP gateway)\n"
"      --service NAME     the service_name label (default: each process's comm)\n"
"      --push-auth FILE   credentials, never on the command line: lines bearer_token =\n"
"                         T, basic_auth = USER:PASS, org_id = TENANT; mode 0600\n"
"      --agent PATH       the libjitrace-agent.so to probe (default: next to jitrace)\n"
"      --ringbuf MB       ring buffer size, a power of two (default 64)\n"
"      --max-memory MB    the recorder's memory, ring buffer included (default 200);\n"
"                         past it code at new addresses is counted and not kept\n"
"      --window MS        how late an event may arrive and still be put in order (100)\n"
"      --no-perfmap       do not read /tmp/perf-PID.map files\n"
"      --no-jitdump       do not read jit-PID.dump files (perf's jitdump format)\n"
"      --dotnet-module    .NET processes with -p or -a: load libjitrace-coreclr.so into\n"
"                         them (AttachProfiler) instead of asking for their perf maps\n"
"      --no-agent         do not probe libjitrace-agent (names from perf maps only)\n"
"      --no-usdt          do not probe HotSpot's USDT probes in libjvm.so\n"
"      --no-attach        do not attach running JVMs (their code compiled before\n"
"                         recording stays unnamed: [java jit])\n"
"      --jvm-agent        running JVMs: load libjitrace-jvmti.so into them (it stays\n"
"                         loaded; with --calls, its calls option) instead of asking\n"
"                         for their perf maps\n"
"  -v, --verbose          show libbpf's messages\n"
"  -h, --help             this help\n"
"\n"
"Examples:\n"
"  jitrace record -d 30                       # the whole host for 30 s, at 99 Hz\n"
"  jitrace record -p 4242 -F 999 -o app.jtl   # one JVM, at 999 Hz\n"
"  jitrace record --calls -- ./myjit args     # run a command, with exact calls\n"
"  jitrace record --off-cpu -p 4242 -d 30     # where a JVM's threads wait, and burn\n"
"  jitrace record --unwind cfi -F 999 -- python3 app.py   # whole stacks without fp\n"
"  jitrace record -F 49 --rotate 60 --max-age 3600 --max-size 500 -o /var/lib/jitrace\n"
"  kill -USR2 $(pidof jitrace); jitrace report /var/lib/jitrace --last 300\n"
"  jitrace dump jitrace.jtl | less\n";

/* A number of seconds or megabytes above 0. 0 or -EINVAL (reported). */
static int positive(const char *what, const char *arg, double *out)
{
	if (jt_parse_double(arg, out) || *out <= 0 || *out > 1e9) {
		jt_err("%s: '%s' is not a number above 0", what, arg);
		return -EINVAL;
	}
	return 0;
}

/* Record's own options: -a (the default anyway), -o, -f, the flight recorder's. */
static int record_option(void *ctx, int c, const char *arg)
{
	struct record_opts *o = ctx;

	switch (c) {
	case 'o':
		o->output = arg;
		return 0;
	case 'f':
		o->force = true;
		return 0;
	case OPT_ROTATE:
		return positive("--rotate", arg, &o->rotate);
	case OPT_MAX_AGE:
		return positive("--max-age", arg, &o->max_age);
	case OPT_MAX_SIZE:
		return positive("--max-size", arg, &o->max_size_mb);
	case OPT_PUSH:
		o->push_url = arg;
		return 0;
	case OPT_PUSH_FORMAT:
		return jt_push__parse_format(arg, &o->push_format);
	case OPT_SERVICE:
		o->service = arg;
		return 0;
	case OPT_PUSH_AUTH:
		o->push_auth = arg;
		return 0;
	default:
		return 0;	/* 'a' */
	}
}

/* The flight recorder's options together; the credentials read now, before anything runs. */
static int check_segments(struct record_opts *o, bool output_given)
{
	const char *need = o->max_age ? "--max-age" : o->max_size_mb ? "--max-size" :
			   o->push_url ? "--push" : NULL;

	if (!o->rotate && need) {
		jt_err("%s is for a flight recorder: give --rotate SECS too", need);
		return -EINVAL;
	}
	if (!o->push_url && (o->service || o->push_auth)) {
		jt_err("%s goes with --push URL", o->service ? "--service" : "--push-auth");
		return -EINVAL;
	}
	if (o->push_url && jt_push__check_url(o->push_url))
		return -EINVAL;
	if (o->max_size_mb && o->max_size_mb < 1) {	/* a segment closes at a quarter */
		jt_err("--max-size: %g MB is less than 1 MB", o->max_size_mb);
		return -EINVAL;
	}
	if (o->rotate && o->force) {
		jt_err("-f replaces a file; --rotate keeps segments in a directory");
		return -EINVAL;
	}
	if (o->rotate && !output_given)
		o->output = "jitrace.d";
	return o->push_auth ? jt_push_auth__load(&o->auth, o->push_auth) : 0;
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	static const struct option longopts[] = {
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "rotate", required_argument, NULL, OPT_ROTATE },
		{ "max-age", required_argument, NULL, OPT_MAX_AGE },
		{ "max-size", required_argument, NULL, OPT_MAX_SIZE },
		{ "push", required_argument, NULL, OPT_PUSH },
		{ "push-format", required_argument, NULL, OPT_PUSH_FORMAT },
		{ "service", required_argument, NULL, OPT_SERVICE },
		{ "push-auth", required_argument, NULL, OPT_PUSH_AUTH },
		{},
	};
	const struct jt_live_cli cli = {
		.name = "record", .usage = usage, .command = true,
		.shared = JT_LIVE_OPT_FREQ | JT_LIVE_OPT_PID | JT_LIVE_OPT_DURATION |
			  JT_LIVE_OPT_CALLS | JT_LIVE_OPT_KSTACK | JT_LIVE_OPT_AGENT |
			  JT_LIVE_OPT_RINGBUF | JT_LIVE_OPT_WINDOW | JT_LIVE_OPT_NO_PERFMAP |
			  JT_LIVE_OPT_NO_USDT | JT_LIVE_OPT_OFFCPU | JT_LIVE_OPT_UNWIND,
		.shortopts = "ao:f", .longopts = longopts, .option = record_option, .ctx = o,
	};

	int err;

	memset(o, 0, sizeof(*o));
	jt_liveopts__init(&o->live);
	o->output = NULL;
	err = jt_liveopts__parse(&o->live, &cli, argc, argv);
	if (!err)
		err = check_segments(o, o->output);
	if (!o->output)
		o->output = "jitrace.jtl";
	return err;
}

/* s as the views show names: argv may hold any bytes, a terminal's controls among them. */
static const char *escaped(char *buf, size_t cap, const char *s)
{
	jt_text__escape(buf, cap, s, strlen(s));
	return buf;
}

/* Say what is being recorded, once everything is attached (tests wait for this line). */
static void announce(const struct recorder *r)
{
	const struct jt_live_opts *o = &r->o->live;
	char what[160], off[64] = "", cmd[128], out[PATH_MAX], url[512];

	if (o->command)
		snprintf(what, sizeof(what), "%s (pid %d)",
			 escaped(cmd, sizeof(cmd), o->command[0]), (int)jt_live__child(r->live));
	else if (o->nr_pids)
		snprintf(what, sizeof(what), "%d process%s", o->nr_pids, o->nr_pids > 1 ? "es" : "");
	else
		snprintf(what, sizeof(what), "all processes");
	if (o->offcpu)
		snprintf(off, sizeof(off), ", off-CPU waits of %llu us or more",
			 (unsigned long long)(o->offcpu_min_ns / 1000));
	fprintf(stderr, "jitrace: recording %s: samples at %u Hz on %d CPUs%s%s%s into %s%s; "
		"Ctrl-C to stop\n", what, o->hz, jt_bpf__nr_samplers(jt_live__bpf(r->live)),
		o->calls ? ", calls" : "", off, o->agent_path ? "" : ", no agent",
		escaped(out, sizeof(out), r->o->output), r->seg ? " (segments)" : "");
	if (r->seg)
		fprintf(stderr, "jitrace: a segment every %g s, SIGUSR2 (kill -USR2 %d) closes "
			"one now%s%s\n", r->o->rotate, (int)getpid(), r->push ? "; pushed to " : "",
			r->push ? escaped(url, sizeof(url), r->o->push_url) : "");
}

/* SIGUSR2: close the segment now (one log: flush it), not the end: read, not delivered. */
static int take_usr2(struct recorder *r)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	if (sigprocmask(SIG_BLOCK, &set, NULL)) {
		jt_err("sigprocmask: %s", strerror(errno));
		return -errno;
	}
	r->usr2 = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r->usr2 < 0) {
		jt_err("signalfd: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

static bool usr2_came(struct recorder *r)
{
	struct signalfd_siginfo si;
	bool came = false;

	while (r->usr2 >= 0 && read(r->usr2, &si, sizeof(si)) == sizeof(si))
		came = true;
	return came;
}

static void segment_closed(void *ctx, const char *name)
{
	struct recorder *r = ctx;

	if (r->push)
		jt_push__segment(r->push, name);
}

/* The directory of segments, and their pusher. 0 or -errno (reported). */
static int open_segments(struct recorder *r, const struct jt_log_header *hdr)
{
	const struct record_opts *o = r->o;
	struct jt_segment_opts so = {
		.dir = o->output, .rotate_ns = (uint64_t)(o->rotate * 1e9),
		.max_age_ns = (uint64_t)(o->max_age * 1e9),
		.max_bytes = (uint64_t)(o->max_size_mb * 1e6), .hdr = hdr,
		.closed = segment_closed, .ctx = r, .mem = jt_live__mem(r->live),
	};
	struct jt_push_opts po = {
		.url = o->push_url, .format = o->push_format, .service = o->service,
		.dir = o->output, .auth = &o->auth,
	};

	r->seg = jt_segment__open(&so);
	if (!r->seg)
		return -EIO;
	r->log_sink = jt_segment__sink(r->seg);
	/* the thread starts with every signal record reads blocked: they stay the main's */
	if (o->push_url && !(r->push = jt_push__start(&po)))
		return -EIO;
	return 0;
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
	h->ncpus = sysconf(_SC_NPROCESSORS_CONF);	/* not online: ids pass the online count */
	h->sample_hz = o->hz;
	h->flags = (o->calls ? JT_LOG_F_CALLS : 0) | (o->kstack ? JT_LOG_F_KSTACK : 0) |
		   (!o->nr_pids && !o->command ? JT_LOG_F_SYSTEM_WIDE : 0) |
		   (o->offcpu ? JT_LOG_F_OFFCPU : 0);
	gethostname(h->hostname, sizeof(h->hostname) - 1);
	if (!uname(&u))
		memcpy(h->kernel, u.release, strnlen(u.release, sizeof(h->kernel) - 1));
}

/* Every record goes to the log; enters are counted on the way (a leave is not a call). */
static int count_calls(void *ctx, const struct jt_rec_hdr *rec)
{
	struct recorder *r = ctx;

	r->calls += rec->type == JT_REC_ENTER || rec->type == JT_REC_SPAN;
	if (rec->type == JT_REC_CALLSUM)
		r->calls += ((const struct jt_rec_callsum *)rec)->calls;
	return jt_sink__emit(&r->log_sink, rec);
}

static void status_line(struct recorder *r, uint64_t now)
{
	struct jt_pipeline_stats st;
	uint64_t lost;
	double secs = (now - r->last_ns) / 1e9;

	jt_live__stats(r->live, &st);
	lost = jt_drop__lost(st.lost, JT_DROP_MAX);	/* cut stacks were kept, not lost */
	fprintf(stderr, "\r\033[Kjitrace: %.0f events/s, %llu process%s, %llu methods, "
		"%llu maps, %llu lost", secs > 0 ? (st.received - r->last_received) / secs : 0,
		(unsigned long long)st.col.procs, st.col.procs == 1 ? "" : "es",
		(unsigned long long)st.col.methods,
		(unsigned long long)st.maps, (unsigned long long)lost);
	if (r->seg) {
		struct jt_segment_stats ss;

		jt_segment__stats(r->seg, &ss);
		fprintf(stderr, ", %llu segments (%.1f MB)", (unsigned long long)ss.kept,
			ss.bytes / 1e6);
	}
	if (r->push) {
		struct jt_push_stats ps;

		jt_push__stats(r->push, &ps);
		fprintf(stderr, ", pushed %llu, push failures %llu%s",
			(unsigned long long)ps.segments,
			(unsigned long long)(ps.failures + ps.rejected + ps.expired),
			ps.failing ? " (failing)" : "");
	}
	r->last_received = st.received;
	r->last_ns = now;
}

/* Every second: what is recorded goes to the file, and on a terminal, the status line. */
static int on_tick(void *ctx, uint64_t now)
{
	struct recorder *r = ctx;
	int err;

	/* between the pipeline's records: a segment may close here, whole */
	if (r->seg) {
		err = jt_segment__tick(r->seg, now, usr2_came(r));
		if (err)
			return err;
	} else if (usr2_came(r)) {	/* one log: what is held goes to disk now */
		err = jt_logw__flush(r->log);
		if (err)
			return err;
	}
	if (now < r->next_second)
		return 0;
	err = r->seg ? jt_segment__flush(r->seg) : jt_logw__flush(r->log);
	if (!err && r->tty)
		status_line(r, now);
	r->next_second = now + SECOND_NS;
	return err;
}

static void summary(struct recorder *r, double secs)
{
	struct jt_pipeline_stats st;
	char out[PATH_MAX];
	unsigned int i;
	bool lost = false;

	jt_live__stats(r->live, &st);
	if (r->seg) {
		struct jt_segment_stats ss;

		jt_segment__stats(r->seg, &ss);
		fprintf(stderr, "jitrace: %.1f s: %llu samples, %llu calls, %llu methods defined, "
			"%llu records in %llu segments (%llu definitions written again); %llu "
			"segments (%.1f MB) in %s, %llu deleted\n", secs,
			(unsigned long long)st.col.samples, (unsigned long long)r->calls,
			(unsigned long long)st.col.methods, (unsigned long long)ss.records,
			(unsigned long long)ss.closed, (unsigned long long)ss.rewritten,
			(unsigned long long)ss.kept, ss.bytes / 1e6,
			escaped(out, sizeof(out), r->o->output),
			(unsigned long long)ss.deleted);
	} else {
		fprintf(stderr, "jitrace: %.1f s: %llu samples, %llu calls, %llu methods defined, "
			"%llu records (%.1f MB) in %s\n", secs, (unsigned long long)st.col.samples,
			(unsigned long long)r->calls, (unsigned long long)st.col.methods,
			(unsigned long long)jt_logw__records(r->log),
			jt_logw__bytes(r->log) / 1e6, escaped(out, sizeof(out), r->o->output));
	}
	if (r->o->live.offcpu)
		fprintf(stderr, "jitrace: off-CPU: %llu records, %.3f s of waiting\n",
			(unsigned long long)st.col.offcpu, st.col.offcpu_ns / 1e9);
	for (i = 0; i < JT_DROP_MAX; i++) {
		if (!st.lost[i] || jt_drop__kept(i))
			continue;
		fprintf(stderr, "%s%s %llu", lost ? ", " : "jitrace: lost: ", jt_drop__name(i),
			(unsigned long long)st.lost[i]);
		lost = true;
	}
	if (lost)
		fputs(" (see the drop records in the log)\n", stderr);
	lost = false;		/* kept, but with frames unnamed or a stack cut */
	for (i = 0; i < JT_DROP_MAX; i++) {
		if (!st.lost[i] || !jt_drop__kept(i))
			continue;
		fprintf(stderr, "%s%s %llu", lost ? ", " : "jitrace: samples kept with ",
			jt_drop__name(i), (unsigned long long)st.lost[i]);
		lost = true;
	}
	if (lost)
		fputs(" (frames left unnamed, stacks cut where they broke)\n", stderr);
}

/* The end of a flight recording: the last segment closed, pushes given their time. */
static int close_segments(struct recorder *r)
{
	int err = jt_segment__close(r->seg);

	if (r->push) {
		struct jt_push_stats ps;

		jt_push__stats(r->push, &ps);
		if (ps.queued)
			fprintf(stderr, "jitrace: pushing %llu segment%s (up to %.0f s)\n",
				(unsigned long long)ps.queued, ps.queued == 1 ? "" : "s",
				PUSH_DRAIN_S);
		jt_push__stop(r->push, PUSH_DRAIN_S);
	}
	return err;
}

static void push_summary(struct recorder *r)
{
	struct jt_push_stats ps;

	jt_push__stats(r->push, &ps);
	fprintf(stderr, "jitrace: pushed %llu segments (%llu profiles) to %s; %llu failed tries, "
		"%llu profiles refused, %llu segments deleted unpushed",
		(unsigned long long)ps.segments, (unsigned long long)ps.profiles, r->o->push_url,
		(unsigned long long)ps.failures, (unsigned long long)ps.rejected,
		(unsigned long long)ps.expired);
	if (ps.queued)
		fprintf(stderr, "; %llu left in %s for the next run", (unsigned long long)ps.queued,
			r->o->output);
	fputc('\n', stderr);
}

int jt_cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct recorder r = { .o = &o, .usr2 = -1 };
	struct jt_log_header hdr;
	struct jt_sink sink;
	char cmd[128];
	int status, err = parse_args(argc, argv, &o);
	uint64_t start;

	if (err) {
		jt_push_auth__fini(&o.auth);
		return err > 0 ? 0 : 2;
	}
	if (!o.live.agent_path && !o.live.no_agent)
		jt_err("warning: libjitrace-agent.so not found; recording samples and perf maps "
		       "only");
	r.tty = isatty(STDERR_FILENO);
	/* BPF first: without the privileges it needs, no empty log is left behind */
	r.live = jt_live__open(&o.live);
	if (!r.live)
		goto fail;
	start = jt_live__start_ns(r.live);
	fill_header(&hdr, &o.live, start);
	if (take_usr2(&r))
		goto fail;
	if (o.rotate) {
		if (open_segments(&r, &hdr))
			goto fail;
	} else {
		/* refused now if it exists; under its name only once the recording has begun */
		r.log = jt_logw__create_unplaced(o.output, &hdr, o.force);
		if (!r.log)
			goto fail;
		r.log_sink = jt_logw__sink(r.log);
	}
	sink = (struct jt_sink){ count_calls, &r };
	if (jt_live__start(r.live, &sink))
		goto fail;
	if (jt_live__exec(r.live))	/* a command that cannot run is not being recorded */
		goto fail;
	/*
	 * Placed now, not at the end: from here a crash or SIGKILL must leave the log readable
	 * up to its last flushed block (it is the recording); -f replaces the old file here.
	 */
	if (r.log && jt_logw__place(r.log))
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
		       escaped(cmd, sizeof(cmd), o.live.command[0]), (int)jt_live__child(r.live));
	if (r.seg) {
		err = close_segments(&r);
		summary(&r, (jt_now_ns() - start) / 1e9);
		if (r.push)
			push_summary(&r);
	} else {
		summary(&r, (jt_now_ns() - start) / 1e9);
		err = jt_logw__close(r.log);
		r.log = NULL;
	}
	if (err)
		goto fail;
	if (jt_live__child_ended(r.live, &status) && WIFEXITED(status) && WEXITSTATUS(status))
		jt_err("%s exited with status %d", escaped(cmd, sizeof(cmd), o.live.command[0]),
		       WEXITSTATUS(status));
	err = 0;
	goto out;
fail:
	if (r.log)	/* keep what was recorded readable */
		jt_logw__flush(r.log);
	jt_logw__abort(r.log);
	r.log = NULL;
	err = 1;
out:
	jt_push__free(r.push);		/* the thread first: it reads the directory */
	jt_segment__free(r.seg);	/* an open segment is kept as it is */
	if (r.usr2 >= 0)
		close(r.usr2);
	jt_live__close(r.live);	/* stops the command if it still runs */
	jt_push_auth__fini(&o.auth);
	return err;
}
