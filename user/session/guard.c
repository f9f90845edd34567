// SPDX-License-Identifier: GPL-2.0
/* The guard child that holds a session's shares of what it turns on in processes, and undoes them. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sources/dotnet_ipc.h"
#include "sources/jvm_attach.h"
#include "host/share.h"
#include "session/guard.h"
#include "base/util.h"

struct jt_guard {
	pid_t pid;
	int to;		/* requests: struct request each */
	int from;	/* replies: i32 each */
};

enum { REQ_DOTNET = 1, REQ_JVM_MAP = 2 };

struct request {
	uint32_t what;	/* REQ_* */
	uint32_t pid;
};

/* What the guard child holds of the JVMs' maps. */
struct jvm_maps {
	const char *proc_root, *lock_dir;
	struct jt_share *held;
	size_t n, cap;
};

/* lock_dir, made root's alone if missing; false (said why) if it is not a directory root
 * alone can write: then shares are not counted. */
static bool lock_dir_ok(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		jt_err("%s: %s: what a session turns on in processes is undone by each session "
		       "alone", dir, strerror(errno));
		return false;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 0022)) {
		jt_err("%s: not a directory root alone can write: what a session turns on in "
		       "processes is undone by each session alone", dir);
		return false;
	}
	return true;
}

static int read_full(int fd, void *buf, size_t len)
{
	ssize_t n;

	do
		n = read(fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

/*
 * A JVM's map, as a share: the first session in holds it if no map was there (the attach
 * about to write one is jitrace's), the last out removes it. A map that was there (written
 * by Compiler.perfmap before any session, or by the JVM itself) is not jitrace's; one the
 * JVM writes as it exits (-XX:+DumpPerfMapAtExit) is written when its process is gone, and
 * a gone process is never touched.
 */
static int jvm_first(void *ctx, uint32_t pid, bool ours)
{
	int err = jt_jvm_attach__perfmap_there(((struct jvm_maps *)ctx)->proc_root, pid);

	if (err == 1)
		return ours ? 1 : 0;
	if (err == -ENOENT || err == -ESRCH)
		return 0;	/* gone */
	if (err < 0)
		jt_err("pid %u: cannot see whether its JVM has a perf map in its /tmp: %s; it "
		       "is left there after recording", pid, strerror(-err));
	return err < 0 ? err : 1;
}

static void jvm_last(void *ctx, uint32_t pid)
{
	int err = jt_jvm_attach__perfmap_remove(((struct jvm_maps *)ctx)->proc_root, pid);

	if (err == -EPERM)
		jt_err("pid %u: its /tmp/perf-PID.map is no longer a regular file of the JVM's "
		       "user: left there", pid);
	else if (err && err != -ESRCH && err != -ENOENT)	/* not gone meanwhile */
		jt_err("pid %u: cannot remove the perf map jitrace had its JVM write in its "
		       "/tmp: %s", pid, strerror(-err));
}

static const struct jt_share_ops jvm_map_share = {
	.kind = "jvm", .first = jvm_first, .last = jvm_last,
};

static int jvm_hold(struct jvm_maps *m, uint32_t pid)
{
	size_t i;
	int r;

	for (i = 0; i < m->n; i++)
		if (m->held[i].pid == pid)
			return 1;
	if (jt_array_grow(&m->held, &m->cap, m->n + 1, sizeof(*m->held))) {
		jt_err("pid %u: out of memory: its JVM's perf map is left there after recording",
		       pid);
		return -ENOMEM;
	}
	r = jt_share__take(m->lock_dir, m->proc_root, pid, &jvm_map_share, m, &m->held[m->n]);
	m->n += r == 1;
	return r;
}

static void jvm_release(struct jvm_maps *m)
{
	size_t i;

	for (i = 0; i < m->n; i++)
		jt_share__drop(m->lock_dir, m->proc_root, &m->held[i], &jvm_map_share, m);
	free(m->held);
}

/* The child: serve requests until the recorder's end of the pipe closes, then undo. */
static void __attribute__((noreturn)) guard_main(int in, int out, const char *proc_root,
						 const char *lock_dir)
{
	struct jvm_maps jvm = { .proc_root = proc_root, .lock_dir = lock_dir };
	struct jt_dotnet_ipc *d;
	struct request req;
	sigset_t none;
	int32_t r;

	/* the terminal's Ctrl-C and the recorder's end are the recorder's: the guard outlives
	 * them to undo, and ends when its pipe closes */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	d = jt_dotnet_ipc__new(proc_root);
	if (d && lock_dir)
		jt_dotnet_ipc__share(d, lock_dir);
	while (!read_full(in, &req, sizeof(req))) {
		if (req.what == REQ_JVM_MAP)
			r = jvm_hold(&jvm, req.pid);
		else
			r = !d ? -ENOMEM : req.pid ? jt_dotnet_ipc__enable(d, req.pid) :
			    jt_dotnet_ipc__enable_all(d);
		if (write(out, &r, sizeof(r)) != sizeof(r))
			break;
	}
	jvm_release(&jvm);
	jt_dotnet_ipc__free(d);
	_exit(0);
}

struct jt_guard *jt_guard__start(const char *proc_root, const char *lock_dir)
{
	struct jt_guard *g = calloc(1, sizeof(*g));
	int req[2] = { -1, -1 }, rep[2] = { -1, -1 };

	if (!g) {
		jt_err("out of memory");
		return NULL;
	}
	if (lock_dir && !lock_dir_ok(lock_dir))
		lock_dir = NULL;
	if (pipe2(req, O_CLOEXEC) || pipe2(rep, O_CLOEXEC)) {
		jt_err("pipe: %s", strerror(errno));
		goto fail;
	}
	g->pid = fork();
	if (g->pid < 0) {
		jt_err("fork: %s", strerror(errno));
		goto fail;
	}
	if (!g->pid) {
		/* nothing of the recorder's stays open in it (BPF links, the log) but its
		 * pipes and stdio */
		int lo = req[0] < rep[1] ? req[0] : rep[1], hi = req[0] ^ rep[1] ^ lo;

		close_range(3, (unsigned int)lo - 1, 0);
		close_range((unsigned int)lo + 1, (unsigned int)hi - 1, 0);
		close_range((unsigned int)hi + 1, ~0U, 0);
		guard_main(req[0], rep[1], proc_root, lock_dir);
	}
	close(req[0]);
	close(rep[1]);
	g->to = req[1];
	g->from = rep[0];
	return g;
fail:
	for (int i = 0; i < 2; i++) {
		if (req[i] >= 0)
			close(req[i]);
		if (rep[i] >= 0)
			close(rep[i]);
	}
	free(g);
	return NULL;
}

static int ask(struct jt_guard *g, uint32_t what, uint32_t pid)
{
	struct request req = { .what = what, .pid = pid };
	int32_t r;

	if (write(g->to, &req, sizeof(req)) != sizeof(req) || read_full(g->from, &r, sizeof(r))) {
		jt_err("the guard process is gone: what this session turns on in processes is "
		       "not undone");
		return -EPIPE;
	}
	return r;
}

int jt_guard__dotnet(struct jt_guard *g, uint32_t pid)
{
	return ask(g, REQ_DOTNET, pid);
}

int jt_guard__jvm_map(struct jt_guard *g, uint32_t pid)
{
	return ask(g, REQ_JVM_MAP, pid);
}

void jt_guard__stop(struct jt_guard *g)
{
	if (!g)
		return;
	close(g->to);
	close(g->from);
	while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
		;
	free(g);
}
