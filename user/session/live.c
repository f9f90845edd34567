// SPDX-License-Identifier: GPL-2.0
/* A live session: BPF, the ring buffer and the pipeline in one loop, with one cleanup path. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sources/dotnet_ipc.h"
#include "session/guard.h"
#include "session/jvms.h"
#include "session/calls.h"
#include "session/live.h"
#include "session/loader.h"
#include "base/membound.h"
#include "join/ucopy.h"
#include "session/ringbuf.h"
#include "base/util.h"

#define TICK_MS 10
#define SECOND_NS 1000000000ULL
/*
 * What a tick may spend reading perf maps and jitdump files (and joining what it read, about
 * as much again): 20 processes' 500,000-line maps take tens of seconds to read, and the ring
 * buffer, the duration and signals must not wait for them.
 */
#define FILES_SLICE_NS 3000000ULL
/*
 * What a tick may spend on the ring buffer when it holds more than that: producers as fast
 * as the reader (millions of calls a second) fill it and lose records, counted, but never
 * hold the loop, the duration or a signal.
 */
#define RING_SLICE_NS 100000000ULL
/*
 * What a JVM may take to start its attach listener and write its perf map, all JVMs at once:
 * the map of 20,000 methods is written in about 50 ms here.
 */
#define JVM_ATTACH_MS 10000
#define JVMTI_SO "libjitrace-jvmti.so"
/*
 * Calls regions: what a tick may read of them (a thread's ring holds 65,536, 13 ms at 5M
 * calls/s; the ticks come every 10 ms), well inside the reorder window of 100 ms.
 */
#define CALLS_TICK_MAX (4u << 20)
/*
 * Calls coming at a rate that brings this many in TICK_MS make the ticks of the next
 * BUSY_NS come after BUSY_TICK_MS: one thread calling 5 million times a second fills its
 * ring (65,536) in 6.5 ms. The rate, not the count of one drain (a drain just after a big
 * one finds little), and for a while (a thread kept off its CPU for a moment catches up at
 * full speed after it).
 */
#define CALLS_BUSY 4096
#define BUSY_TICK_MS 1
#define BUSY_NS 200000000ULL

struct jt_live {
	const struct jt_live_opts *o;
	struct jt_bpf *bpf;
	struct jt_pipeline *pl;
	struct jt_rb *rb;
	uint64_t ring_ts;	/* the newest time of a record read from the ring */
	int sfd;
	sigset_t old_mask;	/* given back at close */
	uint64_t start_ns;
	pid_t child;		/* the command we run, or 0 */
	int child_go;		/* write end of the pipe that lets it exec */
	int child_err;		/* read end of the pipe it sends exec's errno back on */
	int child_status;
	bool child_done;
	bool timed_out;		/* the duration ended the loop */
	struct jt_dotnet_ipc *dotnet;	/* .NET runtimes asked to load the module */
	struct jt_guard *guard;	/* what undoes what the session turns on in processes */
	struct jt_membound mem;		/* what grows with the host, within --max-memory */
	struct jt_calls *calls;		/* the agents' calls regions (NULL: uprobes only) */
};

static int take_signals(struct jt_live *l)
{
	sigset_t set;
	int err;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGPIPE);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL)) {
		err = -errno;
		jt_err("sigprocmask: %s", strerror(-err));
		return err;
	}
	l->sfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (l->sfd < 0) {
		err = -errno;
		jt_err("signalfd: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* What arrived and was not read is the session's: it is dropped, not delivered. */
static void give_signals_back(struct jt_live *l)
{
	struct signalfd_siginfo si;

	if (l->sfd >= 0) {
		while (read(l->sfd, &si, sizeof(si)) == sizeof(si))
			;
		close(l->sfd);
	}
	sigprocmask(SIG_SETMASK, &l->old_mask, NULL);
}

struct jt_live *jt_live__open(const struct jt_live_opts *o)
{
	struct jt_live *l = calloc(1, sizeof(*l));
	struct jt_bpf_opts bo = {
		.agent_path = o->agent_path, .sample_hz = o->hz,
		.ringbuf_bytes = o->ringbuf_bytes, .calls = o->calls, .kstack = o->kstack,
		.calls_buffers = !o->calls_via_uprobe,
		.offcpu = o->offcpu, .offcpu_min_ns = o->offcpu_min_ns,
		.ustack_bytes = o->ustack_bytes,
		.usdt = !o->no_usdt, .filter_pids = o->nr_pids || o->command,
		.attach = !o->load_only, .verbose = o->verbose,
	};

	if (!l) {
		jt_err("out of memory");
		return NULL;
	}
	l->o = o;
	l->mem.limit = jt_live__mem_limit(o);
	l->sfd = -1;
	l->child_go = -1;
	l->child_err = -1;
	l->start_ns = jt_now_ns();
	sigprocmask(SIG_BLOCK, NULL, &l->old_mask);	/* given back at close, whatever fails */
	if (take_signals(l))
		goto fail;
	l->bpf = jt_bpf__open(&bo);
	if (!l->bpf)
		goto fail;
	return l;
fail:
	jt_live__close(l);
	return NULL;
}

/* Whether the environment loads the CLR profiler module, which names .NET code itself. */
static bool module_in_env(void)
{
	const char *p = getenv("CORECLR_PROFILER"), *n = getenv("CORECLR_NOTIFICATION_PROFILERS");

	return (p && strcasestr(p, JT_DOTNET_PROFILER_CLSID)) ||
	       (n && strcasestr(n, JT_DOTNET_PROFILER_CLSID));
}

/* Fork the command now; it waits until its pid is in the filter, then execs. */
static int spawn_command(struct jt_live *l)
{
	char **command = l->o->command;
	bool want_dotnet_map = !l->o->no_perfmap && !l->o->dotnet_module &&
			       !module_in_env();
	int go[2], ep[2];
	char c;

	int err;

	if (pipe2(go, O_CLOEXEC)) {
		err = -errno;
		jt_err("pipe: %s", strerror(-err));
		return err;
	}
	if (pipe2(ep, O_CLOEXEC)) {	/* closed by a successful exec: EOF means it ran */
		err = -errno;
		jt_err("pipe: %s", strerror(-err));
		close(go[0]);
		close(go[1]);
		return err;
	}
	l->child = fork();
	if (l->child < 0) {
		err = -errno;
		jt_err("fork: %s", strerror(-err));
		l->child = 0;
		close(go[0]);
		close(go[1]);
		close(ep[0]);
		close(ep[1]);
		return err;
	}
	if (l->child == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		close(go[1]);
		close(ep[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);	/* jitrace gave up before starting it */
		/*
		 * A .NET runtime started with nothing set writes no perf map. The command is the
		 * recording's own, so it writes its map from its first method (DOTNET_ names are
		 * ignored by anything else); a value the user set is theirs, and so is the
		 * module if they load it. Not over IPC: the runtime listens only once it
		 * started, and a map turned on so would need turning off again.
		 */
		if (want_dotnet_map)
			setenv("DOTNET_PerfMapEnabled", "3", 0);
		execvp(command[0], command);
		err = errno;
		if (write(ep[1], &err, sizeof(err)) != sizeof(err))	/* then say it here */
			fprintf(stderr, "jitrace: cannot run %s: %s\n", command[0],
				strerror(err));
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	l->child_go = go[1];
	l->child_err = ep[0];
	return 0;
}

static void release_command(struct jt_live *l)
{
	if (l->child_go < 0)
		return;
	/* until its exec is done, it runs jitrace's own code: named from its maps now */
	jt_pipeline__maps_now(l->pl, l->child, jt_now_ns());
	if (write(l->child_go, "g", 1) != 1)
		jt_err("starting %s: %s", l->o->command[0], strerror(errno));
	close(l->child_go);
	l->child_go = -1;
}

int jt_live__exec(struct jt_live *l)
{
	int e = 0;
	ssize_t n;

	if (l->child_go < 0)
		return 0;
	release_command(l);
	do
		n = read(l->child_err, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->child_err);
	l->child_err = -1;
	if (n != sizeof(e) || !e)
		return 0;	/* EOF: exec closed the pipe, the command runs */
	jt_err("cannot run %s: %s", l->o->command[0], strerror(e));
	return -e;
}

/*
 * name, a library installed beside the agent jitrace probes, as an absolute path into buf
 * (PATH_MAX bytes), for a runtime to load: 0, or -errno (reported, under option's name).
 */
static int beside_agent(const struct jt_live_opts *o, const char *option, const char *name,
			char *buf)
{
	char *slash;

	if (!o->agent_path || !realpath(o->agent_path, buf) || !(slash = strrchr(buf, '/')) ||
	    (size_t)(slash - buf) + strlen(name) + 2 > PATH_MAX) {
		jt_err("%s: cannot resolve %s: %s", option, o->agent_path ?: "the agent",
		       o->agent_path ? strerror(errno) : "none found");
		return -ENOENT;
	}
	strcpy(slash + 1, name);
	if (access(buf, R_OK)) {
		jt_err("%s: %s: %s", option, buf, strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * JVMs running before the session, found by -p or -a: their code compiled before is in no
 * probe's record. Each is asked by HotSpot's attach for its perf map (Compiler.perfmap),
 * after BPF has attached HotSpot's probes (jt_live__open), so that what it compiles from
 * then on is told by them: the map and the probes overlap, nothing falls between. With
 * --jvm-agent the JVMTI agent is loaded instead (it replays what was compiled). Before the
 * maps are scanned, so the first read of a map is the fresh one.
 */
static void ask_jvms(struct jt_live *l)
{
	const struct jt_live_opts *o = l->o;
	struct jt_jvms_opts jo = {
		.proc_root = "/proc", .pids = o->pids, .nr_pids = o->nr_pids,
		.agent_calls = o->calls, .timeout_ms = JVM_ATTACH_MS,
	};
	char agent[PATH_MAX];
	uint64_t t;
	int n;

	if (o->jvm_agent) {
		if (beside_agent(o, "--jvm-agent", JVMTI_SO, agent))
			return;
		jo.agent = agent;
	} else {
		/* a map file the attach makes is removed by the guard when no session needs it
		 * (after SIGKILL too); started here if .NET's part did not */
		if (!l->guard)
			l->guard = jt_guard__start("/proc", JT_GUARD_LOCK_DIR);
		jo.guard = l->guard;
	}
	t = jt_now_ns();
	n = jt_jvms__ask(&jo);
	t = (jt_now_ns() - t) / 1000000;	/* what the session's start waited for them */
	if (n && o->jvm_agent)
		fprintf(stderr, "jitrace: %s loaded into %d JVM%s in %llu ms\n", agent, n,
			n > 1 ? "s" : "", (unsigned long long)t);
	else if (n)
		fprintf(stderr, "jitrace: %d JVM%s wrote %s perf map (Compiler.perfmap) in %llu ms\n",
			n, n > 1 ? "s" : "", n > 1 ? "their" : "its", (unsigned long long)t);
}

/*
 * .NET processes started with nothing set write no perf map: ask each one traced (-p), or
 * each found at start (-a), through its diagnostics socket, to write it (asked to stop at
 * close), or with --dotnet-module to load libjitrace-coreclr.so from beside the agent. What
 * fails is said, and recording goes on.
 */
static void ask_dotnet(struct jt_live *l)
{
	const struct jt_live_opts *o = l->o;
	char module[PATH_MAX];
	int i, k, n = 0;

	l->dotnet = jt_dotnet_ipc__new("/proc");
	if (!l->dotnet)
		return;
	if (o->dotnet_module && beside_agent(o, "--dotnet-module", JT_DOTNET_PROFILER_SO, module))
		return;
	/* maps turned on are turned off again by a guard that outlives the recorder (SIGKILL
	 * too), counting shares with other sessions: a process is left as it was found */
	if (!o->dotnet_module && (o->nr_pids || !o->command))
		l->guard = jt_guard__start("/proc", JT_GUARD_LOCK_DIR);
	if (!o->nr_pids && !o->command) {
		if (o->dotnet_module)
			n += jt_dotnet_ipc__attach_all(l->dotnet, JT_DOTNET_PROFILER_CLSID, module);
		else if (l->guard && (k = jt_guard__dotnet(l->guard, 0)) > 0)
			n += k;
	}
	for (i = 0; i < o->nr_pids; i++)
		n += (o->dotnet_module ?
		      jt_dotnet_ipc__attach(l->dotnet, o->pids[i], JT_DOTNET_PROFILER_CLSID,
					    module) :
		      l->guard ? jt_guard__dotnet(l->guard, o->pids[i]) : 0) == 1;
	if (n && o->dotnet_module)
		fprintf(stderr, "jitrace: %s loaded into %d .NET process%s\n", module, n,
			n > 1 ? "es" : "");
	else if (n)
		fprintf(stderr, "jitrace: %d .NET process%s asked to write %s perf map until "
			"recording ends\n", n, n > 1 ? "es" : "", n > 1 ? "their" : "its");
}

/* The ring's records, less the agents' announcements of their regions, which are ours. */
static int on_ring(void *ctx, const void *data, size_t len)
{
	struct jt_live *l = ctx;
	const struct jt_ev_hdr *h = data;

	int err;

	if (len >= sizeof(*h) && h->ts > l->ring_ts)
		l->ring_ts = h->ts;
	if (len >= sizeof(struct jt_ev_call) && h->type == JT_EV_CALLS_REGION)
		return l->calls ? jt_calls__add(l->calls, h->pid, true) : 0;
	/* a process's calls before its exit, while its methods are known */
	if (len >= sizeof(*h) && h->type == JT_EV_EXIT && l->calls) {
		err = jt_calls__exiting(l->calls, h->pid, h->ts);
		if (err)
			return err;
	}
	/* the old image's calls before its exec, while its methods are known */
	if (len >= sizeof(*h) && h->type == JT_EV_EXEC && l->calls) {
		err = jt_calls__exec(l->calls, h->pid, h->ts);
		if (err)
			return err;
	}
	return jt_pipeline__raw(l->pl, data, len);
}

int jt_live__start(struct jt_live *l, const struct jt_sink *sink)
{
	const struct jt_live_opts *o = l->o;
	struct jt_pipeline_opts po = {
		.window_ns = o->window_ns, .max_pending = 1 << 20, .proc_root = "/proc",
		.follow_perfmaps = !o->no_perfmap,
		.follow_jitdumps = !o->no_jitdump, .unwind_tables = o->offcpu || o->ustack_bytes,
		.copy_max = o->ustack_bytes,
		.files_slice_ns = FILES_SLICE_NS, .mem = &l->mem,
	};
	int i, err = 0;

	l->pl = jt_pipeline__new(&po, sink);
	if (!l->pl)
		return -ENOMEM;
	l->rb = jt_rb__new(jt_bpf__ringbuf_fd(l->bpf), on_ring, l);
	if (!l->rb)
		return -ENOMEM;
	for (i = 0; i < o->nr_pids && !err; i++)
		err = jt_bpf__add_pid(l->bpf, o->pids[i]);
	if (!err && o->command)
		err = spawn_command(l) ?: jt_bpf__add_pid(l->bpf, l->child);
	if (err)
		return err;
	/*
	 * New processes (every one; or the command and its children, or those of the processes
	 * of -p) hand their regions over as they start: a child forked and gone within a tick
	 * keeps its calls.
	 */
	if (o->calls && !o->calls_via_uprobe && o->agent_path && !o->load_only) {
		uint32_t child = (uint32_t)l->child;

		l->calls = jt_calls__new(l->pl, true, o->command ? &child : o->pids,
					 o->command ? 1 : o->nr_pids, o->calls_summary,
					 o->calls_min_ns);
		if (!l->calls)
			return -ENOMEM;
	}
	if (o->load_only)
		return 0;
	if (!o->no_perfmap || o->dotnet_module)
		ask_dotnet(l);
	if (!o->no_attach && !o->command && (!o->no_perfmap || o->jvm_agent))
		ask_jvms(l);
	/* maps of processes already running: all of them, or just the ones asked for */
	if (!o->nr_pids && !o->command)
		jt_pipeline__scan(l->pl, 0, l->start_ns);
	for (i = 0; i < o->nr_pids; i++)
		jt_pipeline__scan(l->pl, o->pids[i], l->start_ns);
	/* a process that made its region before we came tells no one: look for it */
	if (l->calls && !o->nr_pids && !o->command)
		jt_calls__scan_all(l->calls);
	for (i = 0; l->calls && i < o->nr_pids; i++)
		jt_calls__add(l->calls, o->pids[i], false);
	return 0;
}

static int update_drops(struct jt_live *l)
{
	uint64_t totals[JT_DROP_MAX];
	int err = jt_bpf__drops(l->bpf, totals);

	return err ?: jt_pipeline__bpf_drops(l->pl, totals);
}

/* Reap the command if it ended; SIGCHLD only says that some child changed. */
static void check_child(struct jt_live *l)
{
	int status;

	if (l->child > 0 && !l->child_done && waitpid(l->child, &status, WNOHANG) == l->child) {
		l->child_done = true;
		l->child_status = status;
	}
}

/* A second Ctrl-C finds the signal unblocked and its default action back: it kills. */
static void unblock(int sig)
{
	sigset_t set;

	signal(sig, SIG_DFL);
	sigemptyset(&set);
	sigaddset(&set, sig);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
}

/* A signal read: true if it asks to stop. */
static bool on_signal(struct jt_live *l)
{
	struct signalfd_siginfo si;

	if (read(l->sfd, &si, sizeof(si)) != sizeof(si))
		return false;
	if (si.ssi_signo == SIGCHLD) {
		check_child(l);
		return false;
	}
	if (!l->o->hold_signals)
		unblock(si.ssi_signo);
	return true;
}

/* What the samples' stack copies were, at the end: one line. */
static void say_copies(struct jt_live *l)
{
	struct jt_pipeline_stats st;

	jt_pipeline__stats(l->pl, &st);
	if (!st.col.copies)
		return;
	jt_err("user stack copies: %llu walked, %llu bytes each on average, %llu with the "
	       "kernel's frame-pointer walk; cut %llu times below %u bytes to what threads' walks "
	       "needed, grown again %llu times; larger than their thread's cut: %llu",
	       (unsigned long long)st.col.copies,
	       (unsigned long long)(st.col.copy_bytes / st.col.copies),
	       (unsigned long long)st.col.copies_fp_walks, (unsigned long long)st.col.copies_cut,
	       l->o->ustack_bytes, (unsigned long long)st.col.copies_grown,
	       (unsigned long long)st.col.copies_over);
}

/* What threads' stack copies were found to need since the last tick, to the sampler. */
static void hand_copy_wants(struct jt_live *l)
{
	struct jt_ucopy_want w[64];
	size_t n, i;

	/* stamped before the sampler is told: a sample after it may be made with the old copy */
	while ((n = jt_pipeline__copy_wants(l->pl, w, 64, jt_now_ns())) > 0)
		for (i = 0; i < n; i++)
			jt_bpf__ucopy(l->bpf, w[i].tid, w[i].bytes, w[i].fp_walk);
}

int jt_live__run(struct jt_live *l, jt_live_hook hook, void *ctx)
{
	double secs = l->o->duration;
	uint64_t deadline = secs > 0 ? l->start_ns + (uint64_t)(secs * 1e9) : UINT64_MAX;
	uint64_t next_second = l->start_ns + SECOND_NS;
	struct pollfd pfd = { .fd = l->sfd, .events = POLLIN };
	bool stop = false;
	uint64_t drained = 0, last_drain = jt_now_ns(), busy_until = 0;
	int err = jt_live__exec(l);

	if (err)
		return err;
	while (!err && !stop) {
		uint64_t now, until, read_at;

		if (poll(&pfd, 1, jt_now_ns() < busy_until ? BUSY_TICK_MS : TICK_MS) > 0)
			stop = on_signal(l);
		read_at = jt_now_ns();
		until = read_at + RING_SLICE_NS;
		if (jt_rb__consume_until(l->rb, until < deadline ? until : deadline) < 0) {
			err = -EIO;
			break;
		}
		/* read to the end it saw: every exit and exec stamped before read_at is handled */
		if (l->calls)
			jt_calls__ring_read(l->calls, jt_rb__behind(l->rb) ? 0 : read_at);
		/*
		 * Calls only as far as the ring was read: an agent's code load comes by the
		 * ring, its calls by the regions, and a call let out before the load it needs
		 * is read (the reorder stage lets out early when full) is of an unknown method,
		 * the load then too late. A slow collector (an emulated guest) met it.
		 */
		if (jt_rb__behind(l->rb) && l->ring_ts < read_at)
			read_at = l->ring_ts;
		now = jt_now_ns();
		err = l->calls ? jt_calls__tick(l->calls, CALLS_TICK_MAX, read_at,
						now >= next_second, &drained) : 0;
		if (drained * TICK_MS * 1000000ULL >= CALLS_BUSY * (now - last_drain))
			busy_until = now + BUSY_NS;
		last_drain = now;
		err = err ?: jt_pipeline__tick(l->pl, now);
		if (!err && l->o->ustack_bytes)
			hand_copy_wants(l);
		if (!err && now >= next_second) {
			err = update_drops(l);
			next_second = now + SECOND_NS;
		}
		if (!err && hook) {
			int ret = hook(ctx, now);

			err = ret < 0 ? ret : 0;
			stop |= ret > 0;
		}
		if (!stop && !l->child_done && now >= deadline)
			l->timed_out = true;
		stop |= now >= deadline || l->child_done;
	}
	if (!err && l->o->offcpu)	/* what short waits add up to, into the ring */
		err = jt_bpf__offcpu_flush(l->bpf);
	/* what is in the ring now, not what producers add after the end */
	if (!err && jt_rb__consume_until(l->rb, UINT64_MAX) < 0)
		err = -EIO;
	if (!err && l->calls)	/* given back: the agents' calls go to the stubs */
		err = jt_calls__finish(l->calls);
	err = err ?: update_drops(l);
	err = err ?: jt_pipeline__finish(l->pl);
	if (!err && l->o->ustack_bytes)
		say_copies(l);
	return err;
}

void jt_live__close(struct jt_live *l)
{
	if (!l)
		return;
	if (l->child > 0) {
		if (l->child_go >= 0)
			close(l->child_go);	/* it exits without running the command */
		else if (!l->child_done)
			kill(l->child, SIGTERM);
		if (!l->child_done)
			waitpid(l->child, NULL, 0);
	}
	if (l->child_err >= 0)
		close(l->child_err);
	jt_dotnet_ipc__free(l->dotnet);
	jt_guard__stop(l->guard);
	jt_calls__free(l->calls);
	jt_rb__free(l->rb);
	jt_pipeline__free(l->pl);
	jt_bpf__close(l->bpf);
	give_signals_back(l);
	free(l);
}

uint64_t jt_live__start_ns(const struct jt_live *l)
{
	return l->start_ns;
}

struct jt_membound *jt_live__mem(struct jt_live *l)
{
	return &l->mem;
}

struct jt_bpf *jt_live__bpf(const struct jt_live *l)
{
	return l->bpf;
}

void jt_live__stats(const struct jt_live *l, struct jt_pipeline_stats *st)
{
	jt_pipeline__stats(l->pl, st);
}

pid_t jt_live__child(const struct jt_live *l)
{
	return l->child;
}

bool jt_live__timed_out(const struct jt_live *l)
{
	return l->timed_out;
}

bool jt_live__child_ended(const struct jt_live *l, int *status)
{
	if (l->child_done)
		*status = l->child_status;
	return l->child_done;
}
