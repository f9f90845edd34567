// SPDX-License-Identifier: GPL-2.0
/* The guard child that turns .NET perf maps on for a session and off after it, however it ends. */
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
#include "session/dotnet_guard.h"
#include "base/util.h"

struct jt_dotnet_guard {
	pid_t pid;
	int to;		/* requests: u32 pid each */
	int from;	/* replies: i32 each */
};

/* lock_dir, made root's alone if missing; false (said why) if it is not a directory root
 * alone can write: then shares are not counted. */
static bool lock_dir_ok(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) && errno != EEXIST) {
		jt_err("%s: %s: .NET perf maps are turned off by each session alone", dir,
		       strerror(errno));
		return false;
	}
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 0022)) {
		jt_err("%s: not a directory root alone can write: .NET perf maps are turned off "
		       "by each session alone", dir);
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

/* The child: serve requests until the recorder's end of the pipe closes, then undo. */
static void __attribute__((noreturn)) guard_main(int in, int out, const char *proc_root,
						 const char *lock_dir)
{
	struct jt_dotnet_ipc *d;
	sigset_t none;
	uint32_t pid;
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
	while (!read_full(in, &pid, sizeof(pid))) {
		r = !d ? -ENOMEM : pid ? jt_dotnet_ipc__enable(d, pid) :
		    jt_dotnet_ipc__enable_all(d);
		if (write(out, &r, sizeof(r)) != sizeof(r))
			break;
	}
	jt_dotnet_ipc__free(d);
	_exit(0);
}

struct jt_dotnet_guard *jt_dotnet_guard__start(const char *proc_root, const char *lock_dir)
{
	struct jt_dotnet_guard *g = calloc(1, sizeof(*g));
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

int jt_dotnet_guard__enable(struct jt_dotnet_guard *g, uint32_t pid)
{
	int32_t r;

	if (write(g->to, &pid, sizeof(pid)) != sizeof(pid) || read_full(g->from, &r, sizeof(r))) {
		jt_err(".NET perf maps: the guard process is gone");
		return -EPIPE;
	}
	return r;
}

void jt_dotnet_guard__stop(struct jt_dotnet_guard *g)
{
	if (!g)
		return;
	close(g->to);
	close(g->from);
	while (waitpid(g->pid, NULL, 0) < 0 && errno == EINTR)
		;
	free(g);
}
