// SPDX-License-Identifier: GPL-2.0
/*
 * HotSpot's dynamic attach in C: the request and reply, a JVM's ids from /proc, and one
 * command run in a child that takes the JVM's user, through its own root and cwd.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sources/jvm_attach.h"
#include "host/procfs.h"
#include "base/util.h"

#define CMD_MAX 16		/* HotSpot's AttachOperation::name_length_max */
#define ARG_MAX_LEN 1024	/* and arg_length_max */
#define REQUEST_MAX (2 + CMD_MAX + 1 + JT_JVM_ATTACH_ARGS * (ARG_MAX_LEN + 1))
#define POLL_NS 20000000ULL	/* how often the child looks for the listener's socket */
#define GRACE_MS 1000		/* the parent waits this much past the child's own deadline */
#define OPTIONS_MAX (64 << 10)	/* of a command line or environment read for options */

int jt_jvm_attach__request(const char *cmd, const char *const *args, char *buf, size_t cap)
{
	const char *strs[2 + JT_JVM_ATTACH_ARGS] = { "1", cmd, "", "", "" };
	size_t at = 0, i, n;

	for (i = 0; args && i < JT_JVM_ATTACH_ARGS && args[i]; i++)
		strs[2 + i] = args[i];
	if (!cmd || !*cmd || strlen(cmd) > CMD_MAX)
		return -EINVAL;
	for (i = 0; i < JT_JVM_ATTACH_ARGS; i++)
		if (strlen(strs[2 + i]) > ARG_MAX_LEN)
			return -EINVAL;
	for (i = 0; i < JT_JVM_ATTACH_ARGS + 2; i++) {
		n = strlen(strs[i]) + 1;	/* each ends in its NUL */
		if (at + n > cap)
			return -EMSGSIZE;
		memcpy(buf + at, strs[i], n);
		at += n;
	}
	return (int)at;
}

int jt_jvm_attach__reply(const char *buf, size_t len, int *code, const char **text,
			 size_t *text_len)
{
	size_t i = 0;
	bool neg = false;
	long v = 0;

	if (i < len && buf[i] == '-') {
		neg = true;
		i++;
	}
	if (i == len || !isdigit((unsigned char)buf[i]))
		return -EPROTO;
	for (; i < len && isdigit((unsigned char)buf[i]); i++) {
		v = v * 10 + (buf[i] - '0');
		if (v > INT32_MAX)
			return -EPROTO;
	}
	if (i < len && buf[i] != '\n')
		return -EPROTO;
	i += i < len;
	*code = (int)(neg ? -v : v);
	*text = buf + i;
	*text_len = len - i;
	return 0;
}

/* The last number of the line after key in status (NStgid's is the innermost pid): 0, -EINVAL,
 * or -ESRCH for a key with no number. nth > 0: the nth number instead (Uid's effective is 2). */
static int status_field(const char *status, const char *key, int nth, unsigned long *out)
{
	const char *p = strstr(status, key), *end;
	unsigned long v;
	int k = 0;
	char *next;

	if (!p)
		return -EINVAL;
	p += strlen(key);
	end = strchr(p, '\n');
	if (!end)
		end = p + strlen(p);
	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			break;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		v = strtoul(p, &next, 10);
		p = next;
		*out = v;
		if (++k == nth)
			return 0;
	}
	return k && !nth ? 0 : (k ? -EINVAL : -ESRCH);
}

int jt_jvm_attach__parse_status(const char *status, struct jt_jvm_target *t)
{
	unsigned long nspid, uid, gid;
	unsigned long long cgt;
	const char *p;
	int err;

	err = status_field(status, "\nNStgid:", 0, &nspid);
	if (err == -EINVAL)	/* a kernel before 4.1: no namespaces said */
		err = status_field(status, "\nTgid:", 0, &nspid);
	if (err)
		return err;
	if (status_field(status, "\nUid:", 2, &uid) || status_field(status, "\nGid:", 2, &gid))
		return -EINVAL;
	p = strstr(status, "\nSigCgt:");
	if (!p || sscanf(p + 8, "%llx", &cgt) != 1)
		return -EINVAL;
	if (!nspid || nspid > UINT32_MAX)
		return -EINVAL;
	t->nspid = (uint32_t)nspid;
	t->euid = (uid_t)uid;
	t->egid = (gid_t)gid;
	t->catches_quit = cgt >> (SIGQUIT - 1) & 1;
	return 0;
}

/* What separates options: in a command line a NUL, in an options variable blanks. */
static bool is_sep(char c)
{
	return !c || c == ' ' || c == '\t' || c == '\n';
}

int jt_jvm_attach__disabled_in(const char *text, size_t len)
{
	static const char flag[] = "DisableAttachMechanism";
	const size_t word = 5 + sizeof(flag) - 1;	/* "-XX:+" and the flag */
	int said = -1;
	size_t i;

	for (i = 0; i + word <= len; i++) {
		if ((i && !is_sep(text[i - 1])) || (i + word < len && !is_sep(text[i + word])))
			continue;
		if (!memcmp(text + i, "-XX:", 4) && (text[i + 4] == '+' || text[i + 4] == '-') &&
		    !memcmp(text + i + 5, flag, word - 5))
			said = text[i + 4] == '+';	/* the last one said wins, as in HotSpot */
	}
	return said;
}

int jt_jvm_attach__socket_name(uint32_t nspid, char *buf, size_t cap)
{
	return snprintf(buf, cap, ".java_pid%u", nspid) >= (int)cap ? -ENAMETOOLONG : 0;
}

int jt_jvm_attach__trigger_name(uint32_t nspid, char *buf, size_t cap)
{
	return snprintf(buf, cap, ".attach_pid%u", nspid) >= (int)cap ? -ENAMETOOLONG : 0;
}

int jt_jvm_attach__is_jvm(const char *proc_root, uint32_t pid)
{
	struct jt_vmas vm = { 0 };
	int err = jt_procfs__read_maps(proc_root, pid, &vm), found = 0;
	size_t i, n;

	if (err)
		return err;
	for (i = 0; i < vm.n && !found; i++) {
		n = strlen(vm.v[i].path);
		found = n >= 10 && !strcmp(vm.v[i].path + n - 10, "/libjvm.so");
	}
	jt_vmas__free(&vm);
	return found;
}

/* The value of NAME= in an environment (NUL-separated, len bytes), or NULL; its length. */
static const char *env_value(const char *env, size_t len, const char *name, size_t *vlen)
{
	size_t at, n = strlen(name);

	for (at = 0; at < len; at += strnlen(env + at, len - at) + 1)
		if (len - at > n && !memcmp(env + at, name, n) && env[at + n] == '=') {
			*vlen = strnlen(env + at + n + 1, len - at - n - 1);
			return env + at + n + 1;
		}
	return NULL;
}

int jt_jvm_attach__target(const char *proc_root, uint32_t pid, struct jt_jvm_target *t,
			  bool *disabled)
{
	/* in the order HotSpot reads them: each later one overrides */
	static const char *const vars[] = { "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", NULL,
					    "_JAVA_OPTIONS" };
	char status[4096], *buf = malloc(OPTIONS_MAX);
	int n, env_len, i, said;
	const char *v;
	size_t vlen;

	*disabled = false;
	if (!buf)
		return -ENOMEM;
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	n = jt_procfs__read_raw(proc_root, pid, "status", status, sizeof(status));
	n = n < 0 ? n : jt_jvm_attach__parse_status(status, t);
	env_len = n < 0 ? n : jt_procfs__read_raw(proc_root, pid, "environ", buf, OPTIONS_MAX / 2);
	if (n < 0 || env_len < 0) {
		free(buf);
		return n < 0 ? n : env_len;
	}
	for (i = 0; i < (int)JT_ARRAY_SIZE(vars); i++) {
		if (vars[i]) {
			v = env_value(buf, (size_t)env_len, vars[i], &vlen);
			said = v ? jt_jvm_attach__disabled_in(v, vlen) : -1;
		} else {	/* the command line, read after the environment's half */
			n = jt_procfs__read_raw(proc_root, pid, "cmdline", buf + OPTIONS_MAX / 2,
						OPTIONS_MAX / 2);
			said = n > 0 ? jt_jvm_attach__disabled_in(buf + OPTIONS_MAX / 2, n) : -1;
		}
		if (said >= 0)
			*disabled = said;
	}
	free(buf);
	return 0;
}

/* ---- one command, in a child that is the JVM's user ---- */

struct jt_jvm_call {
	uint32_t pid;
	pid_t child;
	int fd;			/* the child's result: struct result, then the reply's text */
	uint64_t deadline;	/* the parent's: the child's own and a grace */
};

/* What the child sends back before the text. */
struct result {
	int err;		/* 0: a reply came (code, text); -errno: why says why not */
	int code;
	char why[JT_JVM_ATTACH_WHY_MAX];
};

/* The listener's socket in tmp, owned by the JVM's user: 0, or -ENOENT. */
static int socket_there(int tmp, const char *name, uid_t euid)
{
	struct stat st;

	if (fstatat(tmp, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISSOCK(st.st_mode) ||
	    (st.st_uid != euid && st.st_uid != 0))
		return -ENOENT;
	return 0;
}

static int connect_in(int tmp, const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err;

	/* through the directory's fd: the JVM's /tmp, whatever mount namespace it is in */
	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", tmp, name) >=
	    (int)sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/*
 * Start the JVM's listener: a trigger file of its user in its cwd (else its /tmp), then
 * SIGQUIT, whose handler looks for the trigger; wait until its socket takes a connection,
 * into *fd. 0, or -errno with why.
 */
static int start_listener(const struct jt_jvm_target *t, int cwd, int tmp, const char *sock,
			  uint64_t deadline, int *fd, char *why, size_t cap)
{
	char trig[32];
	int dirs[2] = { cwd, tmp }, made = -1, tfd = -1, err = 0, k;
	struct timespec pause = { 0, POLL_NS };
	bool root = !getuid();

	*fd = -1;
	jt_jvm_attach__trigger_name(t->nspid, trig, sizeof(trig));
	for (k = 0; k < 2 && tfd < 0; k++) {
		if (dirs[k] < 0)
			continue;
		tfd = openat(dirs[k], trig, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
		if (tfd >= 0)
			made = dirs[k];
		else if (errno == EEXIST)
			break;	/* another client's, there now: it serves as well */
	}
	if (tfd >= 0)
		close(tfd);
	else if (errno != EEXIST) {
		err = -errno;
		snprintf(why, cap, "cannot create %s in its cwd or /tmp as uid %u: %s", trig,
			 (unsigned int)t->euid, strerror(errno));
		return err;
	}
	/* the signal as root (if jitrace is): its real uid may not be its effective one */
	if ((root && seteuid(0)) || kill((pid_t)t->pid, SIGQUIT) || (root && seteuid(t->euid))) {
		err = -errno;
		snprintf(why, cap, "SIGQUIT: %s", strerror(errno));
	}
	/* a stale socket (a JVM of that pid before) stays until the listener binds anew */
	while (!err && (*fd = socket_there(tmp, sock, t->euid) ?: connect_in(tmp, sock)) < 0) {
		if (jt_now_ns() + POLL_NS > deadline) {
			err = -ETIMEDOUT;
			snprintf(why, cap, "its attach listener did not start (attach disabled by "
				 "its options, or the JVM too busy or too old)");
			break;
		}
		nanosleep(&pause, NULL);
	}
	if (made >= 0)
		unlinkat(made, trig, 0);
	return err;
}

/* The request sent and the reply read whole (up to text's room; the rest read and dropped). */
static int exchange(int fd, const char *req, size_t len, uint64_t deadline, char *text,
		    size_t cap, size_t *got, char *why, size_t wcap)
{
	char sink[512];
	ssize_t n;
	int err;

	*got = 0;
	while (len) {
		err = jt_wait_fd(fd, POLLOUT, deadline);
		n = err ? -1 : send(fd, req, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && !err && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			err = err ?: -errno;
			snprintf(why, wcap, "sending the command: %s", strerror(-err));
			return err;
		}
		req += n;
		len -= (size_t)n;
	}
	for (;;) {
		err = jt_wait_fd(fd, POLLIN, deadline);
		if (err) {
			snprintf(why, wcap, "no reply: %s", strerror(-err));
			return err;
		}
		if (*got < cap)
			n = recv(fd, text + *got, cap - *got, MSG_DONTWAIT);
		else
			n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			err = -errno;
			snprintf(why, wcap, "reading the reply: %s", strerror(errno));
			return err;
		}
		if (!n)
			return 0;	/* the listener closes once it has answered */
		if (*got < cap)
			*got += (size_t)n;
	}
}

/* The child's work; what came of it goes to out. Never returns. */
static void run_child(const struct jt_jvm_target *t, int cwd, int tmp, const char *req,
		      size_t len, uint64_t deadline, int out)
{
	struct result r = { 0 };
	char sock[32], text[JT_JVM_ATTACH_TEXT_MAX];
	size_t got = 0;
	int fd = -1;

	jt_jvm_attach__socket_name(t->nspid, sock, sizeof(sock));
	/* HotSpot admits root or its own euid and egid; root in another user namespace is
	 * nobody there, so be its user (seteuid last: it drops the right to setegid) */
	if (setegid(t->egid) || seteuid(t->euid)) {
		r.err = -errno;
		snprintf(r.why, sizeof(r.why), "cannot take its uid %u gid %u: %s",
			 (unsigned int)t->euid, (unsigned int)t->egid, strerror(errno));
		goto out;
	}
	if (!socket_there(tmp, sock, t->euid))
		fd = connect_in(tmp, sock);	/* a listener running: a stale one refuses */
	if (fd < 0)
		r.err = start_listener(t, cwd, tmp, sock, deadline, &fd, r.why, sizeof(r.why));
	if (!r.err)
		r.err = exchange(fd, req, len, deadline, text, sizeof(text) - 1, &got, r.why,
				 sizeof(r.why));
	if (fd >= 0)
		close(fd);
	if (!r.err) {
		const char *body;
		size_t blen;

		if (jt_jvm_attach__reply(text, got, &r.code, &body, &blen)) {
			r.err = -EPROTO;
			snprintf(r.why, sizeof(r.why), "its reply is not HotSpot's (%zu bytes)",
				 got);
		} else {
			memmove(text, body, blen);
			got = blen;
		}
	}
out:
	if (write(out, &r, sizeof(r)) == sizeof(r) && !r.err && got)
		(void)!write(out, text, got);
	_exit(0);
}

/* An O_PATH directory fd of PROC_ROOT/PID/WHAT ("root/tmp", "cwd"), or -errno. */
static int open_proc_dir(const char *proc_root, uint32_t pid, const char *what)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/%u/%s", proc_root, pid, what) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

struct jt_jvm_call *jt_jvm_attach__start(const char *proc_root, uint32_t pid, const char *cmd,
					 const char *const *args, int timeout_ms,
					 char why[JT_JVM_ATTACH_WHY_MAX])
{
	uint64_t deadline = jt_now_ns() + (uint64_t)timeout_ms * 1000000;
	struct jt_jvm_call *call = NULL;
	struct jt_jvm_target t;
	char req[REQUEST_MAX];
	int len, err, cwd = -1, tmp = -1, pipefd[2] = { -1, -1 };
	bool disabled;

	len = jt_jvm_attach__request(cmd, args, req, sizeof(req));
	if (len < 0) {
		snprintf(why, JT_JVM_ATTACH_WHY_MAX, "%s: command or argument too long", cmd);
		return NULL;
	}
	err = jt_jvm_attach__target(proc_root, pid, &t, &disabled);
	if (err) {
		snprintf(why, JT_JVM_ATTACH_WHY_MAX, "reading /proc: %s", strerror(-err));
		return NULL;
	}
	if (disabled) {
		snprintf(why, JT_JVM_ATTACH_WHY_MAX, "it was started with "
			 "-XX:+DisableAttachMechanism");
		return NULL;
	}
	if (!t.catches_quit) {	/* SIGQUIT's default action would end it */
		snprintf(why, JT_JVM_ATTACH_WHY_MAX, "it does not handle SIGQUIT (-Xrs, or still "
			 "starting): not signalled");
		return NULL;
	}
	tmp = open_proc_dir(proc_root, pid, "root/tmp");
	cwd = open_proc_dir(proc_root, pid, "cwd");	/* may be gone: /tmp serves */
	call = calloc(1, sizeof(*call));
	if (tmp < 0 || !call || pipe2(pipefd, O_CLOEXEC)) {
		if (tmp < 0)	/* EACCES: jitrace without CAP_SYS_PTRACE, another user's */
			snprintf(why, JT_JVM_ATTACH_WHY_MAX, "%s/%u/root/tmp: %s", proc_root, pid,
				 strerror(-tmp));
		else
			snprintf(why, JT_JVM_ATTACH_WHY_MAX, "%s", strerror(call ? errno : ENOMEM));
		goto fail;
	}
	call->pid = pid;
	call->fd = pipefd[0];
	call->deadline = deadline + GRACE_MS * 1000000ULL;
	call->child = fork();
	if (call->child < 0) {
		snprintf(why, JT_JVM_ATTACH_WHY_MAX, "fork: %s", strerror(errno));
		goto fail;
	}
	if (!call->child) {
		close(pipefd[0]);
		run_child(&t, cwd, tmp, req, (size_t)len, deadline, pipefd[1]);
	}
	close(pipefd[1]);
	close(tmp);
	if (cwd >= 0)
		close(cwd);
	return call;
fail:
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	if (tmp >= 0)
		close(tmp);
	if (cwd >= 0)
		close(cwd);
	free(call);
	return NULL;
}

/* All the child writes, up to cap bytes, until it closes or the deadline: bytes read. */
static size_t read_until_closed(int fd, void *buf, size_t cap, uint64_t deadline)
{
	size_t got = 0;
	ssize_t n;

	while (got < cap && !jt_wait_fd(fd, POLLIN, deadline)) {
		n = read(fd, (char *)buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

int jt_jvm_attach__finish(struct jt_jvm_call *call, int *code, char text[JT_JVM_ATTACH_TEXT_MAX],
			  char why[JT_JVM_ATTACH_WHY_MAX])
{
	struct result r;
	size_t got;
	int err;

	text[0] = 0;
	got = read_until_closed(call->fd, &r, sizeof(r), call->deadline);
	if (got == sizeof(r) && !r.err) {
		got = read_until_closed(call->fd, text, JT_JVM_ATTACH_TEXT_MAX - 1, call->deadline);
		text[got] = 0;
		*code = r.code;
		err = 0;
	} else if (got == sizeof(r)) {
		snprintf(why, JT_JVM_ATTACH_WHY_MAX, "%s", r.why);
		err = r.err;
	} else {
		snprintf(why, JT_JVM_ATTACH_WHY_MAX, "no answer within the time allowed");
		err = -ETIMEDOUT;
		kill(call->child, SIGKILL);	/* a child stuck past its own deadline */
	}
	close(call->fd);
	while (waitpid(call->child, NULL, 0) < 0 && errno == EINTR)
		;
	free(call);
	return err;
}

uint32_t jt_jvm_attach__pid(const struct jt_jvm_call *call)
{
	return call->pid;
}

/* PROC_ROOT/PID's root's tmp as an O_PATH fd, no symlink followed there, and the JVM's map's
 * name in it; -errno. */
static int perfmap_dir(const char *proc_root, uint32_t pid, struct jt_jvm_target *t,
		       char *name, size_t cap)
{
	bool disabled;
	int root, tmp, err;

	err = jt_jvm_attach__target(proc_root, pid, t, &disabled);
	if (err)
		return err;
	snprintf(name, cap, "perf-%u.map", t->nspid);
	root = open_proc_dir(proc_root, pid, "root");
	if (root < 0)
		return root;
	tmp = openat(root, "tmp", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	err = -errno;
	close(root);
	return tmp < 0 ? err : tmp;
}

int jt_jvm_attach__perfmap_there(const char *proc_root, uint32_t pid)
{
	struct jt_jvm_target t;
	char name[32];
	struct stat st;
	int tmp = perfmap_dir(proc_root, pid, &t, name, sizeof(name)), err;

	if (tmp < 0)
		return tmp;
	err = fstatat(tmp, name, &st, AT_SYMLINK_NOFOLLOW) ? -errno : 1;
	close(tmp);
	return err == -ENOENT ? 0 : err;
}

int jt_jvm_attach__perfmap_remove(const char *proc_root, uint32_t pid)
{
	struct jt_jvm_target t;
	char name[32];
	struct stat st;
	int tmp = perfmap_dir(proc_root, pid, &t, name, sizeof(name)), err = 0;

	if (tmp < 0)
		return tmp;
	/* /tmp is sticky: only the JVM's user (or root) could swap the file in between */
	if (fstatat(tmp, name, &st, AT_SYMLINK_NOFOLLOW))
		err = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_uid != t.euid)
		err = -EPERM;
	else if (unlinkat(tmp, name, 0))
		err = -errno;
	close(tmp);
	return err == -ENOENT ? 0 : err;
}
