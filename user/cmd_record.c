// SPDX-License-Identifier: GPL-2.0
/* `jitrace record`: options, the main loop, the status line and the clean stop. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "loader.h"
#include "log.h"
#include "names.h"
#include "pipeline.h"
#include "procfs.h"
#include "ringbuf.h"
#include "util.h"

#define TICK_MS 10
#define SECOND_NS 1000000000ULL
#define MAX_PIDS 1024

struct record_opts {
	const char *output;
	const char *agent_path;
	unsigned int hz;
	double duration;	/* seconds, 0: until stopped */
	size_t ringbuf_bytes;
	uint64_t window_ns;
	bool calls, kstack, force, verbose, no_perfmap, no_agent, no_usdt;
	uint32_t pids[MAX_PIDS];
	int nr_pids;
	char **command;		/* NULL-terminated, or NULL */
};

struct recorder {
	struct record_opts o;
	struct jt_log_writer *log;
	struct jt_bpf *bpf;
	struct jt_pipeline *pl;
	struct jt_rb *rb;
	int sfd;
	pid_t child;		/* the command we run, or 0 */
	int child_go;		/* write end of the pipe that lets it exec */
	int child_status;
	bool child_done;
	bool tty;
	uint64_t start_ns;
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

static int parse_uint(const char *what, const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > max || s[0] == '-') {
		jt_err("%s: '%s' is not a whole number from 0 to %lu", what, s, max);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

static int parse_pids(struct record_opts *o, char *list)
{
	char *save = NULL, *tok;
	unsigned long v;
	uint32_t tgid;
	int i;

	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (parse_uint("--pid", tok, INT_MAX, &v))
			return -EINVAL;
		if (!v || (kill(v, 0) && errno == ESRCH)) {
			jt_err("--pid: no process %s", tok);
			return -EINVAL;
		}
		/* samples and maps are the process's: a thread id alone would match nothing */
		if (!jt_procfs__read_tgid("/proc", v, &tgid) && tgid != v) {
			jt_err("--pid: %lu is a thread of process %u: recording process %u", v,
			       tgid, tgid);
			v = tgid;
		}
		for (i = 0; i < o->nr_pids && o->pids[i] != v; i++)
			;
		if (i < o->nr_pids)
			continue;	/* named twice, or two threads of one process */
		if (o->nr_pids == MAX_PIDS) {
			jt_err("--pid: at most %d processes", MAX_PIDS);
			return -EINVAL;
		}
		o->pids[o->nr_pids++] = v;
	}
	return 0;
}

static int parse_args(int argc, char **argv, struct record_opts *o)
{
	enum { OPT_AGENT = 256, OPT_RINGBUF, OPT_WINDOW, OPT_NO_PERFMAP, OPT_NO_AGENT, OPT_NO_USDT };
	static const struct option longopts[] = {
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "pid", required_argument, NULL, 'p' },
		{ "freq", required_argument, NULL, 'F' },
		{ "duration", required_argument, NULL, 'd' },
		{ "calls", no_argument, NULL, 'c' },
		{ "kernel-stack", no_argument, NULL, 'g' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "agent", required_argument, NULL, OPT_AGENT },
		{ "ringbuf", required_argument, NULL, OPT_RINGBUF },
		{ "window", required_argument, NULL, OPT_WINDOW },
		{ "no-perfmap", no_argument, NULL, OPT_NO_PERFMAP },
		{ "no-agent", no_argument, NULL, OPT_NO_AGENT },
		{ "no-usdt", no_argument, NULL, OPT_NO_USDT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	unsigned long v;
	char *end;
	int c;

	*o = (struct record_opts){
		.output = "jitrace.jtl", .hz = 99, .ringbuf_bytes = 64 << 20,
		.window_ns = 100 * 1000000ULL,
	};
	optind = 1;
	while ((c = getopt_long(argc, argv, "+ap:F:d:cgo:fvh", longopts, NULL)) != -1) {
		switch (c) {
		case 'a':
			break;
		case 'p':
			if (parse_pids(o, optarg))
				return -EINVAL;
			break;
		case 'F':
			if (parse_uint("-F", optarg, 100000, &v))
				return -EINVAL;
			o->hz = v;
			break;
		case 'd':
			o->duration = strtod(optarg, &end);
			if (*end || end == optarg || o->duration <= 0) {
				jt_err("-d: '%s' is not a positive number of seconds", optarg);
				return -EINVAL;
			}
			break;
		case 'c':
			o->calls = true;
			break;
		case 'g':
			o->kstack = true;
			break;
		case 'o':
			o->output = optarg;
			break;
		case 'f':
			o->force = true;
			break;
		case OPT_AGENT:
			o->agent_path = optarg;
			break;
		case OPT_RINGBUF:
			if (parse_uint("--ringbuf", optarg, 4096, &v))
				return -EINVAL;
			if (!v || (v & (v - 1))) {
				jt_err("--ringbuf: %lu MB is not a power of two", v);
				return -EINVAL;
			}
			o->ringbuf_bytes = v << 20;
			break;
		case OPT_WINDOW:
			if (parse_uint("--window", optarg, 60000, &v) || !v) {
				jt_err("--window: give 1 to 60000 ms");
				return -EINVAL;
			}
			o->window_ns = v * 1000000ULL;
			break;
		case OPT_NO_PERFMAP:
			o->no_perfmap = true;
			break;
		case OPT_NO_AGENT:
			o->no_agent = true;
			break;
		case OPT_NO_USDT:
			o->no_usdt = true;
			break;
		case 'v':
			o->verbose = true;
			break;
		case 'h':
			fputs(usage, stdout);
			return 1;
		default:
			fputs("Try 'jitrace record --help'.\n", stderr);
			return -EINVAL;
		}
	}
	if (optind < argc)
		o->command = argv + optind;
	if (o->calls && o->no_agent && o->no_usdt) {
		jt_err("--calls with --no-agent and --no-usdt: calls come only from the agent "
		       "and HotSpot's USDT probes");
		return -EINVAL;
	}
	return 0;
}

/* Say what is being recorded, once everything is attached (tests wait for this line). */
static void announce(const struct recorder *r)
{
	const struct record_opts *o = &r->o;
	char what[64];

	if (o->command)
		snprintf(what, sizeof(what), "%s (pid %d)", o->command[0], (int)r->child);
	else if (o->nr_pids)
		snprintf(what, sizeof(what), "%d process%s", o->nr_pids, o->nr_pids > 1 ? "es" : "");
	else
		snprintf(what, sizeof(what), "all processes");
	fprintf(stderr, "jitrace: recording %s: samples at %u Hz on %d CPUs%s%s into %s; "
		"Ctrl-C to stop\n", what, o->hz, jt_bpf__nr_samplers(r->bpf),
		o->calls ? ", calls" : "", o->agent_path ? "" : ", no agent", o->output);
}

/* Fork the command now; it waits until its pid is in the filter, then execs. */
static int spawn_command(struct recorder *r)
{
	int go[2];
	char c;

	if (pipe2(go, O_CLOEXEC)) {
		jt_err("pipe: %s", strerror(errno));
		return -errno;
	}
	r->child = fork();
	if (r->child < 0) {
		jt_err("fork: %s", strerror(errno));
		close(go[0]);
		close(go[1]);
		return -errno;
	}
	if (r->child == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* jitrace gave up before starting it */
		execvp(r->o.command[0], r->o.command);
		fprintf(stderr, "jitrace: running %s: %s\n", r->o.command[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	r->child_go = go[1];
	return 0;
}

static void release_command(struct recorder *r)
{
	if (r->child_go >= 0) {
		if (write(r->child_go, "g", 1) != 1)
			jt_err("starting %s: %s", r->o.command[0], strerror(errno));
		close(r->child_go);
		r->child_go = -1;
	}
}

static void fill_header(struct jt_log_header *h, const struct record_opts *o, uint64_t start)
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

static void status_line(struct recorder *r, uint64_t *last_received, uint64_t now,
			uint64_t *last_ns)
{
	struct jt_pipeline_stats st;
	uint64_t lost = 0;
	double secs = (now - *last_ns) / 1e9;
	unsigned int i;

	jt_pipeline__stats(r->pl, &st);
	for (i = 0; i < JT_DROP_MAX; i++)
		lost += st.lost[i];
	fprintf(stderr, "\r\033[Kjitrace: %.0f events/s, %llu processes, %llu methods, "
		"%llu maps, %llu lost", secs > 0 ? (st.received - *last_received) / secs : 0,
		(unsigned long long)st.col.procs, (unsigned long long)st.col.methods,
		(unsigned long long)st.maps, (unsigned long long)lost);
	*last_received = st.received;
	*last_ns = now;
}

static int update_drops(struct recorder *r)
{
	uint64_t totals[JT_DROP_BPF_MAX];
	int err = jt_bpf__drops(r->bpf, totals);

	return err ?: jt_pipeline__bpf_drops(r->pl, totals);
}

/* Reap the command if it ended; SIGCHLD only says that some child changed. */
static void check_child(struct recorder *r)
{
	int status;

	if (r->child > 0 && !r->child_done && waitpid(r->child, &status, WNOHANG) == r->child) {
		r->child_done = true;
		r->child_status = status;
	}
}

static void unblock(int sig)
{
	sigset_t set;

	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

static int run_loop(struct recorder *r)
{
	uint64_t deadline = r->o.duration ? r->start_ns + r->o.duration * 1e9 : UINT64_MAX;
	uint64_t next_second = r->start_ns + SECOND_NS, last_received = 0, last_ns = r->start_ns;
	struct pollfd pfd = { .fd = r->sfd, .events = POLLIN };
	bool stop = false;
	int err = 0;

	while (!err) {
		struct signalfd_siginfo si;
		uint64_t now;

		if (poll(&pfd, 1, TICK_MS) > 0 && read(r->sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGCHLD) {
				check_child(r);
			} else {
				stop = true;
				/* a second Ctrl-C is not blocked: it kills */
				unblock(si.ssi_signo);
			}
		}
		if (jt_rb__consume(r->rb) < 0)
			return -EIO;
		now = jt_now_ns();
		err = jt_pipeline__tick(r->pl, now);
		if (!err && now >= next_second) {
			err = update_drops(r) ?: jt_logw__flush(r->log);
			if (r->tty)
				status_line(r, &last_received, now, &last_ns);
			next_second = now + SECOND_NS;
		}
		if (stop || now >= deadline || r->child_done)
			break;
	}
	if (r->tty)
		fputs("\r\033[K", stderr);
	return err;
}

static void summary(struct recorder *r, double secs)
{
	struct jt_pipeline_stats st;
	unsigned int i;
	bool lost = false;

	jt_pipeline__stats(r->pl, &st);
	fprintf(stderr, "jitrace: %.1f s: %llu samples, %llu calls, %llu methods defined, "
		"%llu records (%.1f MB) in %s\n", secs, (unsigned long long)st.col.samples,
		(unsigned long long)st.col.calls, (unsigned long long)st.col.methods,
		(unsigned long long)jt_logw__records(r->log),
		jt_logw__bytes(r->log) / 1e6, r->o.output);
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

static int block_signals(struct recorder *r)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGPIPE);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL))
		return -errno;
	r->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (r->sfd < 0) {
		jt_err("signalfd: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

int jt_cmd_record(int argc, char **argv)
{
	struct recorder r = { .sfd = -1, .child_go = -1 };
	struct jt_pipeline_opts po = { .max_pending = 1 << 20, .proc_root = "/proc" };
	struct jt_bpf_opts bo = { 0 };
	struct jt_sink sink;
	struct jt_log_header hdr;
	char agent_buf[PATH_MAX];
	int i, err = parse_args(argc, argv, &r.o);
	double secs;

	if (err)
		return err > 0 ? 0 : 2;
	if (jt_agent__resolve(r.o.agent_path, r.o.no_agent, agent_buf, sizeof(agent_buf),
			      &r.o.agent_path))
		return 2;
	if (!r.o.agent_path && !r.o.no_agent) {
		if (r.o.calls) {
			jt_err("--calls needs libjitrace-agent.so: none beside jitrace or in "
			       "../lib; name it with --agent PATH");
			return 2;
		}
		jt_err("warning: libjitrace-agent.so not found; recording samples and perf maps "
		       "only");
	}
	if (block_signals(&r))
		return 1;
	r.tty = isatty(STDERR_FILENO);
	r.start_ns = jt_now_ns();
	fill_header(&hdr, &r.o, r.start_ns);
	bo = (struct jt_bpf_opts){
		.agent_path = r.o.agent_path, .sample_hz = r.o.hz,
		.ringbuf_bytes = r.o.ringbuf_bytes, .calls = r.o.calls, .kstack = r.o.kstack,
		.usdt = !r.o.no_usdt,
		.filter_pids = r.o.nr_pids || r.o.command, .attach = true,
		.verbose = r.o.verbose,
	};
	/* BPF first: without the privileges it needs, no empty log is left behind */
	r.bpf = jt_bpf__open(&bo);
	if (!r.bpf)
		goto fail;
	r.log = jt_logw__create(r.o.output, &hdr, r.o.force);
	if (!r.log)
		goto fail;
	sink = jt_logw__sink(r.log);
	po.window_ns = r.o.window_ns;
	po.follow_perfmaps = !r.o.no_perfmap;
	r.pl = jt_pipeline__new(&po, &sink);
	if (!r.pl)
		goto fail;
	r.rb = jt_rb__new(jt_bpf__ringbuf_fd(r.bpf), jt_pipeline__on_ring, r.pl);
	if (!r.rb)
		goto fail;
	for (i = 0; i < r.o.nr_pids; i++)
		if (jt_bpf__add_pid(r.bpf, r.o.pids[i]))
			goto fail;
	if (r.o.command && (spawn_command(&r) || jt_bpf__add_pid(r.bpf, r.child)))
		goto fail;
	/* maps of processes already running: all of them, or just the ones asked for */
	if (!bo.filter_pids)
		jt_pipeline__scan(r.pl, 0, r.start_ns);
	for (i = 0; i < r.o.nr_pids; i++)
		jt_pipeline__scan(r.pl, r.o.pids[i], r.start_ns);
	announce(&r);
	release_command(&r);
	err = run_loop(&r);
	if (!err && jt_rb__consume(r.rb) < 0)
		err = -EIO;
	err = err ?: update_drops(&r);
	err = err ?: jt_pipeline__finish(r.pl);
	secs = (jt_now_ns() - r.start_ns) / 1e9;
	if (err)
		goto fail;
	summary(&r, secs);
	err = jt_logw__close(r.log);
	r.log = NULL;
	if (err)
		goto fail;
	if (r.child > 0 && !r.child_done) {	/* stopped before the command ended */
		kill(r.child, SIGTERM);
		waitpid(r.child, &r.child_status, 0);
	} else if (r.child > 0 && WIFEXITED(r.child_status) && WEXITSTATUS(r.child_status)) {
		jt_err("%s exited with status %d", r.o.command[0], WEXITSTATUS(r.child_status));
	}
	jt_rb__free(r.rb);
	jt_pipeline__free(r.pl);
	jt_bpf__close(r.bpf);
	close(r.sfd);
	return 0;
fail:
	if (r.child > 0) {
		if (r.child_go >= 0)
			close(r.child_go);	/* it exits without running the command */
		else if (!r.child_done)
			kill(r.child, SIGTERM);
		if (!r.child_done)
			waitpid(r.child, NULL, 0);
	}
	if (r.log && r.pl)	/* keep what was recorded readable */
		jt_logw__flush(r.log);
	jt_logw__abort(r.log);
	jt_rb__free(r.rb);
	jt_pipeline__free(r.pl);
	jt_bpf__close(r.bpf);
	if (r.sfd >= 0)
		close(r.sfd);
	return 1;
}
