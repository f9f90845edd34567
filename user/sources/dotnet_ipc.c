// SPDX-License-Identifier: GPL-2.0
/*
 * .NET's diagnostics IPC client: framing, one command and its reply, finding a runtime's
 * socket inside its process's root, and the live session's EnablePerfMap / DisablePerfMap.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "sources/dotnet_ipc.h"
#include "host/procfs.h"
#include "host/share.h"
#include "base/util.h"

static const char magic[14] = "DOTNET_IPC_V1";	/* and its NUL: 14 bytes */

#define REPLY_MAX 256		/* bytes of a reply's payload kept: its HRESULT is the first 4 */
#define ENABLE_TIMEOUT_MS 10000	/* the runtime writes every method it compiled before it replies */
#define DISABLE_TIMEOUT_MS 5000
#define ATTACH_TIMEOUT_MS 10000	/* loading the module and its Initialize */
#define SOCKET_NAME "dotnet-diagnostic-"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

int jt_dotnet_ipc__frame(uint8_t set, uint8_t id, const void *payload, size_t len, void *buf,
			 size_t cap)
{
	uint8_t *p = buf;

	if (len > JT_DOTNET_IPC_MAX - JT_DOTNET_IPC_HDR || JT_DOTNET_IPC_HDR + len > cap)
		return -EMSGSIZE;
	memcpy(p, magic, sizeof(magic));
	put16(p + 14, (uint16_t)(JT_DOTNET_IPC_HDR + len));
	p[16] = set;
	p[17] = id;
	put16(p + 18, 0);
	if (len)
		memcpy(p + JT_DOTNET_IPC_HDR, payload, len);
	return (int)(JT_DOTNET_IPC_HDR + len);
}

int jt_dotnet_ipc__header(const void *buf, size_t len, uint8_t *set, uint8_t *id,
			  uint16_t *payload_size)
{
	const uint8_t *p = buf;
	uint16_t size;

	if (len < JT_DOTNET_IPC_HDR || memcmp(p, magic, sizeof(magic)))
		return -EPROTO;
	size = (uint16_t)(p[14] | p[15] << 8);
	if (size < JT_DOTNET_IPC_HDR)
		return -EPROTO;
	*set = p[16];
	*id = p[17];
	*payload_size = size - JT_DOTNET_IPC_HDR;
	return 0;
}

/* "{8-4-4-4-12}" hex digits into a GUID as it lies in memory (three little-endian fields). */
static int parse_guid(const char *s, uint8_t out[16])
{
	static const int groups[] = { 8, 4, 4, 4, 12 };
	uint8_t raw[16];
	int g, k, n = 0;

	if (*s++ != '{')
		return -EINVAL;
	for (g = 0; g < 5; g++) {
		for (k = 0; k < groups[g]; k += 2) {
			unsigned int v;

			if (!isxdigit((unsigned char)s[0]) || !isxdigit((unsigned char)s[1]) ||
			    sscanf(s, "%2x", &v) != 1)
				return -EINVAL;
			raw[n++] = (uint8_t)v;
			s += 2;
		}
		if (*s++ != (g < 4 ? '-' : '}'))
			return -EINVAL;
	}
	if (*s)
		return -EINVAL;
	/* Data1 (u32), Data2 and Data3 (u16) are written big-endian in the text */
	memcpy(out, raw, 16);
	for (k = 0; k < 4; k++)
		out[k] = raw[3 - k];
	out[4] = raw[5];
	out[5] = raw[4];
	out[6] = raw[7];
	out[7] = raw[6];
	return 0;
}

int jt_dotnet_ipc__attach_payload(uint32_t timeout_ms, const char *guid, const char *path,
				  const void *data, uint32_t data_len, void *buf, size_t cap)
{
	size_t units = strlen(path) + 1, need = 4 + 16 + 4 + 2 * units + 4 + (size_t)data_len, i;
	uint8_t clsid[16], *p = buf;

	if (parse_guid(guid, clsid))
		return -EINVAL;
	for (i = 0; path[i]; i++)
		if ((unsigned char)path[i] > 0x7f)
			return -EINVAL;
	if (need > cap || need > JT_DOTNET_IPC_MAX - JT_DOTNET_IPC_HDR)
		return -EMSGSIZE;
	put32(p, timeout_ms);
	memcpy(p + 4, clsid, sizeof(clsid));
	p += 20;
	put32(p, (uint32_t)units);
	p += 4;
	for (i = 0; i < units; i++, p += 2)
		put16(p, (uint8_t)path[i]);	/* the NUL included */
	put32(p, data_len);
	if (data_len)
		memcpy(p + 4, data, data_len);
	return (int)need;
}

static int send_all(int fd, const uint8_t *buf, size_t len, uint64_t deadline)
{
	while (len) {
		ssize_t n;
		int err = jt_wait_fd(fd, POLLOUT, deadline);

		if (err)
			return err;
		n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* len bytes into buf (NULL: read and drop them); -ECONNRESET if the stream ends first. */
static int recv_all(int fd, uint8_t *buf, size_t len, uint64_t deadline)
{
	uint8_t sink[256];

	while (len) {
		size_t want = buf ? len : (len < sizeof(sink) ? len : sizeof(sink));
		ssize_t n;
		int err = jt_wait_fd(fd, POLLIN, deadline);

		if (err)
			return err;
		n = recv(fd, buf ? buf : sink, want, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -ECONNRESET;
		if (buf)
			buf += n;
		len -= (size_t)n;
	}
	return 0;
}

int jt_dotnet_ipc__command(int fd, uint8_t set, uint8_t id, const void *payload, size_t len,
			   int timeout_ms, uint32_t *hresult)
{
	uint64_t deadline = jt_now_ns() + (uint64_t)timeout_ms * 1000000;
	uint8_t hdr[JT_DOTNET_IPC_HDR], reply[REPLY_MAX], *msg;
	uint16_t size;
	int n, err;

	*hresult = 0;
	msg = malloc(JT_DOTNET_IPC_HDR + len);
	if (!msg)
		return -ENOMEM;
	n = jt_dotnet_ipc__frame(set, id, payload, len, msg, JT_DOTNET_IPC_HDR + len);
	err = n < 0 ? n : send_all(fd, msg, (size_t)n, deadline);
	free(msg);
	if (err)
		return err;
	err = recv_all(fd, hdr, sizeof(hdr), deadline);
	if (!err)
		err = jt_dotnet_ipc__header(hdr, sizeof(hdr), &set, &id, &size);
	if (err)
		return err;
	if (set != JT_DOTNET_IPC_SERVER || (id != JT_DOTNET_IPC_OK && id != JT_DOTNET_IPC_ERROR) ||
	    size < 4)
		return -EPROTO;
	n = size < sizeof(reply) ? size : (int)sizeof(reply);
	err = recv_all(fd, reply, (size_t)n, deadline) ?:
	      recv_all(fd, NULL, size - (size_t)n, deadline);
	if (err)
		return err;
	*hresult = get32(reply);
	return id == JT_DOTNET_IPC_OK ? 0 : -EREMOTEIO;
}

const char *jt_dotnet_ipc__hresult_str(uint32_t hresult, char buf[16])
{
	switch (hresult) {
	case 0x80131384:
		return "the runtime could not read the command";
	case 0x80131385:
		return "unknown command (EnablePerfMap needs .NET 8 or later)";
	case 0x80131386:
		return "not a diagnostics IPC message";
	case 0x80131515:
		return "not supported by this runtime";
	case 0x80004005:
		return "the runtime failed (E_FAIL)";
	case 0x80070057:
		return "invalid argument";
	case 0x8013136a:
		return "a profiler is loaded already";
	}
	snprintf(buf, 16, "0x%08x", hresult);
	return buf;
}


/* ---- a process and its socket ---- */

/* A file of dir (a /proc/PID fd) whole, up to max bytes, NUL-terminated; NULL with errno. */
static char *read_whole(int dir, const char *name, size_t max, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap), *grown;
	ssize_t got = 0;
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC), err;

	if (!buf || fd < 0) {
		err = buf ? errno : ENOMEM;
		goto fail;
	}
	for (;;) {
		if (n + 1 == cap) {
			if (cap >= max)
				break;	/* the rest is not needed */
			grown = realloc(buf, 2 * cap);
			if (!grown) {
				err = ENOMEM;
				goto fail;
			}
			buf = grown;
			cap *= 2;
		}
		got = read(fd, buf + n, cap - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	if (got < 0) {
		err = errno;
		goto fail;
	}
	close(fd);
	buf[n] = 0;
	*len = n;
	return buf;
fail:
	if (fd >= 0)
		close(fd);
	free(buf);
	errno = err;
	return NULL;
}

/* What a process is: its pid in its own namespace, its user, its start time (clock ticks). */
struct proc_ids {
	uint32_t nspid;
	uid_t uid;
	unsigned long long start;
};

static int read_ids(int dir, uint32_t pid, struct proc_ids *ids)
{
	char *status, *stat, *p, *tok, *save = NULL;
	int err = -EINVAL;
	unsigned long v;
	size_t len;

	ids->nspid = pid;
	status = read_whole(dir, "status", 1 << 16, &len);
	if (!status)
		return -errno;
	p = strstr(status, "\nUid:");
	if (p && sscanf(p + 5, "%lu", &v) == 1) {
		ids->uid = (uid_t)v;
		err = 0;
	}
	p = strstr(status, "\nNStgid:");	/* one pid a namespace, outermost first */
	if (p)
		p[strcspn(p + 1, "\n") + 1] = 0;
	for (tok = p ? strtok_r(p + 8, " \t", &save) : NULL; tok && isdigit((unsigned char)*tok);
	     tok = strtok_r(NULL, " \t", &save))
		ids->nspid = (uint32_t)strtoul(tok, NULL, 10);
	free(status);
	if (err)
		return err;
	stat = read_whole(dir, "stat", 1 << 16, &len);
	if (!stat)
		return -errno;
	err = jt_procfs__stat_num(stat, 22, &ids->start);
	free(stat);
	return err;
}

/*
 * Where the runtime put its socket, relative to its root, into buf: $TMPDIR from its
 * environment (as the runtime reads it) if absolute and without "..", else "tmp".
 */
static void tmp_dir_of(int dir, char *buf, size_t cap)
{
	size_t len, at;
	char *env = read_whole(dir, "environ", 1 << 20, &len);
	const char *v = NULL;

	for (at = 0; env && at < len; at += strlen(env + at) + 1)
		if (!strncmp(env + at, "TMPDIR=", 7))
			v = env + at + 7;
	while (v && *v == '/')
		v++;
	if (!v || !*v || v[-1] != '/' || strstr(v, "..") || strlen(v) >= cap)
		v = "tmp";
	snprintf(buf, cap, "%s", v);
	free(env);
}

/* rel (a directory inside the process's root, root an O_PATH fd of it) as an O_PATH fd. */
static int open_in_root(int root, const char *rel)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		/* its own symlinks resolve inside its root, never into ours */
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	do
		fd = syscall(SYS_openat2, root, rel, &how, sizeof(how));
	while (fd < 0 && errno == EINTR);
	if (fd < 0 && errno == ENOSYS) {
		/* no openat2 (old seccomp profiles, valgrind): only the plain /tmp */
		if (strcmp(rel, "tmp")) {
			errno = ENOSYS;
			return -1;
		}
		fd = openat(root, rel, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	return (int)fd;
}

/*
 * The name the runtime gives its socket, dotnet-diagnostic-NSPID-START-socket, or the one
 * with key 0 (it could not read its start time), if tmp holds either: 0 with its stat in st,
 * or -ENOENT.
 */
static int exact_socket(int tmp, const struct proc_ids *ids, char *name, size_t cap,
			struct stat *st)
{
	unsigned long long keys[2] = { ids->start, 0 };
	int k;

	for (k = 0; k < 2; k++) {
		snprintf(name, cap, SOCKET_NAME "%u-%llu-socket", ids->nspid, keys[k]);
		if (!fstatat(tmp, name, st, AT_SYMLINK_NOFOLLOW))
			return 0;
	}
	return -ENOENT;
}

/*
 * The socket's name in tmp: an exact one (above), else the only one of NSPID (a clock the
 * runtime saw otherwise, as in a time namespace). 0 or -ENOENT.
 */
static int find_socket(int tmp, const struct proc_ids *ids, char *name, size_t cap)
{
	unsigned long long key;
	char prefix[48], tail[8];
	struct stat st;
	struct dirent *de;
	int found = 0, fd;
	unsigned int pid;
	DIR *d;

	if (!exact_socket(tmp, ids, name, cap, &st))
		return 0;
	snprintf(prefix, sizeof(prefix), SOCKET_NAME "%u-", ids->nspid);
	fd = openat(tmp, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d) {
		if (fd >= 0)
			close(fd);
		return -ENOENT;
	}
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, prefix, strlen(prefix)) &&
		    sscanf(de->d_name, SOCKET_NAME "%u-%llu-socke%7s", &pid, &key, tail) == 3 &&
		    !strcmp(tail, "t") && found++ == 0)
			snprintf(name, cap, "%s", de->d_name);
	closedir(d);
	return found == 1 ? 0 : -ENOENT;
}

/* A directory fd of PROC_ROOT/PID, or -errno. */
static int open_pid_dir(const char *proc_root, uint32_t pid)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/%u", proc_root, pid) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/*
 * PROC_ROOT/PID's ids, and its temporary directory (tmp_dir_of) inside its own root as an
 * O_PATH fd; -errno.
 */
static int open_tmp_of(const char *proc_root, uint32_t pid, struct proc_ids *ids)
{
	char rel[PATH_MAX];
	int dir, root, tmp, err;

	dir = open_pid_dir(proc_root, pid);
	if (dir < 0)
		return dir;
	err = read_ids(dir, pid, ids);
	if (err) {
		close(dir);
		return err;
	}
	tmp_dir_of(dir, rel, sizeof(rel));
	root = openat(dir, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	tmp = root < 0 ? -1 : open_in_root(root, rel);
	err = tmp < 0 ? -errno : 0;
	if (root >= 0)
		close(root);
	close(dir);
	return tmp < 0 ? err : tmp;
}

int jt_dotnet_ipc__connect(const char *proc_root, uint32_t pid)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char rel[PATH_MAX], name[NAME_MAX + 1];
	int tmp, fd = -1, err;
	struct proc_ids ids;
	struct stat st;

	tmp = open_tmp_of(proc_root, pid, &ids);
	if (tmp < 0)
		return tmp;
	err = find_socket(tmp, &ids, name, sizeof(name));
	if (err)
		goto out;
	if (fstatat(tmp, name, &st, AT_SYMLINK_NOFOLLOW)) {
		err = -errno;
		goto out;
	}
	/* someone else's socket in a shared /tmp must not be taken for the runtime's */
	if (!S_ISSOCK(st.st_mode) || (st.st_uid != 0 && st.st_uid != ids.uid)) {
		err = -EPERM;
		goto out;
	}
	/* through the directory's fd: short, whatever the path, and no symlink on the way */
	if (snprintf(rel, sizeof(rel), "/proc/self/fd/%d/%s", tmp, name) >=
	    (int)sizeof(sa.sun_path)) {
		err = -ENAMETOOLONG;
		goto out;
	}
	memcpy(sa.sun_path, rel, strlen(rel) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
out:
	close(tmp);
	return fd >= 0 ? fd : err;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

int jt_dotnet_ipc__maps_open(const char *proc_root, uint32_t pid)
{
	char map[48], dump[48], link[PATH_MAX];
	int dir, fd, found = 0, err;
	struct proc_ids ids;
	struct dirent *de;
	DIR *d;

	dir = open_pid_dir(proc_root, pid);
	if (dir < 0)
		return dir;
	err = read_ids(dir, pid, &ids);
	fd = err ? -1 : openat(dir, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!err && fd < 0)
		err = -errno;
	close(dir);
	if (err)
		return err;
	d = fdopendir(fd);
	if (!d) {
		err = -errno;
		close(fd);
		return err;
	}
	snprintf(map, sizeof(map), "/perf-%u.map", ids.nspid);
	snprintf(dump, sizeof(dump), "/jit-%u.dump", ids.nspid);
	while (!found && (de = readdir(d))) {
		ssize_t n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);

		if (n <= 0)
			continue;
		link[n] = 0;
		found = ends_with(link, map) || ends_with(link, dump);
	}
	closedir(d);
	return found;
}

/* ---- a live session's processes ---- */

struct jt_dotnet_ipc {
	const char *proc_root;
	const char *lock_dir;	/* where sessions count their shares (NULL: not counted) */
	struct jt_share *held;	/* the processes whose maps it turned on, or shares */
	size_t n, cap;
};

struct jt_dotnet_ipc *jt_dotnet_ipc__new(const char *proc_root)
{
	struct jt_dotnet_ipc *d = calloc(1, sizeof(*d));

	if (!d) {
		jt_err("out of memory");
		return NULL;
	}
	d->proc_root = proc_root;
	return d;
}

void jt_dotnet_ipc__share(struct jt_dotnet_ipc *d, const char *lock_dir)
{
	d->lock_dir = lock_dir;
}

/*
 * One command to pid's runtime: 0, or -errno. What the runtime answered wrong is reported
 * as "pid N: WHAT: why"; a socket not found or refused is the caller's to judge.
 */
static int ask(const char *proc_root, uint32_t pid, uint8_t set, uint8_t id,
	       const void *payload, size_t len, int timeout_ms, const char *what)
{
	char hr[16];
	uint32_t hresult;
	int fd, err;

	fd = jt_dotnet_ipc__connect(proc_root, pid);	/* a unix socket connects at once */
	if (fd < 0)
		return fd;
	err = jt_dotnet_ipc__command(fd, set, id, payload, len, timeout_ms, &hresult);
	close(fd);
	if (err == -EREMOTEIO)
		jt_err("pid %u: its .NET runtime refused %s: %s", pid, what,
		       jt_dotnet_ipc__hresult_str(hresult, hr));
	else if (err == -ETIMEDOUT)
		jt_err("pid %u: its .NET runtime did not answer %s within %d s", pid, what,
		       timeout_ms / 1000);
	else if (err == -EPROTO)
		jt_err("pid %u: its .NET diagnostics socket answered %s with something that is "
		       "not a diagnostics IPC reply", pid, what);
	else if (err)
		jt_err("pid %u: %s over its .NET diagnostics socket: %s", pid, what,
		       strerror(-err));
	return err;
}

/* A failed ask(): 0 if pid is no .NET process to ask (no socket, or one nobody listens on,
 * as a crashed runtime leaves), err else, with what ask() did not say said here. */
static int judge(uint32_t pid, int err)
{
	if (err == -ENOENT || err == -ECONNREFUSED || err == -ESRCH)
		return 0;
	if (err == -EPERM)
		jt_err("pid %u: not using the .NET diagnostics socket in its temporary directory: "
		       "not a socket owned by root or by the process's user", pid);
	else if (err == -ENOSYS)
		jt_err("pid %u: its $TMPDIR is not /tmp and this kernel has no openat2 to find "
		       "its .NET diagnostics socket safely", pid);
	else if (err && err != -EREMOTEIO && err != -ETIMEDOUT && err != -EPROTO)
		jt_err("pid %u: cannot reach its .NET diagnostics socket: %s", pid,
		       strerror(-err));
	return err;
}

/* pid not asked yet, and room to remember it: 1; 0 if asked already; -ENOMEM (reported). */
static int room_for(struct jt_dotnet_ipc *d, uint32_t pid)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		if (d->held[i].pid == pid)
			return 0;
	if (jt_array_grow(&d->held, &d->cap, d->n + 1, sizeof(*d->held))) {
		jt_err("out of memory");
		return -ENOMEM;
	}
	return 1;
}

/* No session holds pid's map: turn it on, unless the runtime writes it by itself. */
static int first(void *ctx, uint32_t pid, bool ours)
{
	const struct jt_dotnet_ipc *d = ctx;
	uint8_t type[4];
	int err = jt_dotnet_ipc__maps_open(d->proc_root, pid);

	if (err == 1)
		return ours ? 1 : 0;	/* else the runtime's own, from before any session */
	if (err < 0)
		return err == -ENOENT || err == -ESRCH ? 0 : err;
	put32(type, JT_DOTNET_PERFMAP_MAP);	/* the map is what jitrace reads: no jitdump */
	err = ask(d->proc_root, pid, JT_DOTNET_IPC_PROCESS, JT_DOTNET_IPC_ENABLE_PERFMAP, type,
		  sizeof(type), ENABLE_TIMEOUT_MS, "EnablePerfMap");
	return err ? judge(pid, err) : 1;
}

static void disable(void *ctx, uint32_t pid);

/* Counted across sessions (host/share.h): a map the runtime wrote by itself is never
 * turned off */
static const struct jt_share_ops perfmap_share = {
	.kind = "dotnet", .first = first, .last = disable,
};

int jt_dotnet_ipc__enable(struct jt_dotnet_ipc *d, uint32_t pid)
{
	int err = room_for(d, pid);

	if (err <= 0)
		return err;
	err = jt_share__take(d->lock_dir, d->proc_root, pid, &perfmap_share, d, &d->held[d->n]);
	d->n += err == 1;
	return err;
}

int jt_dotnet_ipc__attach(struct jt_dotnet_ipc *d, uint32_t pid, const char *clsid,
			  const char *path)
{
	uint8_t payload[4096];
	int n, err;

	(void)d;
	n = jt_dotnet_ipc__attach_payload(ATTACH_TIMEOUT_MS, clsid, path, NULL, 0, payload,
					  sizeof(payload));
	if (n < 0) {
		jt_err("pid %u: cannot ask its .NET runtime to load %s: %s", pid, path,
		       n == -EINVAL ? "not an ASCII path" : "path too long");
		return n;
	}
	err = ask(d->proc_root, pid, JT_DOTNET_IPC_PROFILER, JT_DOTNET_IPC_ATTACH_PROFILER,
		  payload, (size_t)n, ATTACH_TIMEOUT_MS, "AttachProfiler");
	return err ? judge(pid, err) : 1;
}

typedef int (*each_fn)(struct jt_dotnet_ipc *d, uint32_t pid, const char *clsid,
		       const char *path);

/*
 * fn for each process but ours whose own temporary directory, inside its own root, holds a
 * socket under the name its runtime gives it (its pid in its own namespace, its start time):
 * a process in a container has its socket in the container's /tmp, which no directory of
 * ours shows, and jitrace in a pod sees none of the host's in its own /tmp. How many fn
 * returned 1 for.
 */
static int each_socket(struct jt_dotnet_ipc *d, each_fn fn, const char *clsid, const char *path)
{
	char name[NAME_MAX + 1];
	struct proc_ids ids;
	struct stat st;
	int done = 0, tmp, i, n;
	uint32_t *pids;
	bool found;

	n = jt_procfs__list_pids(d->proc_root, &pids);
	if (n < 0)
		jt_err("%s: its processes cannot be listed: %s", d->proc_root, strerror(-n));
	for (i = 0; i < n; i++) {
		tmp = open_tmp_of(d->proc_root, pids[i], &ids);
		if (tmp < 0)
			continue;	/* gone, or no root to look in */
		found = !exact_socket(tmp, &ids, name, sizeof(name), &st) && S_ISSOCK(st.st_mode);
		close(tmp);
		if (found)
			done += fn(d, pids[i], clsid, path) == 1;
	}
	free(pids);
	return done;
}

static int enable_one(struct jt_dotnet_ipc *d, uint32_t pid, const char *clsid,
		      const char *path)
{
	(void)clsid;
	(void)path;
	return jt_dotnet_ipc__enable(d, pid);
}

int jt_dotnet_ipc__enable_all(struct jt_dotnet_ipc *d)
{
	return each_socket(d, enable_one, NULL, NULL);
}

int jt_dotnet_ipc__attach_all(struct jt_dotnet_ipc *d, const char *clsid, const char *path)
{
	return each_socket(d, jt_dotnet_ipc__attach, clsid, path);
}

int jt_dotnet_ipc__nr_enabled(const struct jt_dotnet_ipc *d)
{
	return (int)d->n;
}

/* DisablePerfMap to pid; what is not said is a process gone meanwhile. */
static void disable(void *ctx, uint32_t pid)
{
	const struct jt_dotnet_ipc *d = ctx;
	int err = ask(d->proc_root, pid, JT_DOTNET_IPC_PROCESS, JT_DOTNET_IPC_DISABLE_PERFMAP,
		      NULL, 0, DISABLE_TIMEOUT_MS, "DisablePerfMap");

	/* gone meanwhile: nothing left to turn off */
	if (err && err != -ENOENT && err != -ESRCH && err != -ECONNREFUSED &&
	    err != -EREMOTEIO && err != -ETIMEDOUT && err != -EPROTO)
		jt_err("pid %u: its .NET runtime still writes its perf map: %s", pid,
		       strerror(-err));
}

void jt_dotnet_ipc__free(struct jt_dotnet_ipc *d)
{
	size_t i;

	if (!d)
		return;
	for (i = 0; i < d->n; i++)
		jt_share__drop(d->lock_dir, d->proc_root, &d->held[i], &perfmap_share, d);
	free(d->held);
	free(d);
}
