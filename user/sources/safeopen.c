// SPDX-License-Identifier: GPL-2.0
/*
 * Opening files that untrusted processes write (perf maps, jitdump files), as root must:
 * inside the process's own root, without following any symlink, and only a regular file
 * owned by root or by the process's user.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/trustwalk.h"
#include "host/procfs.h"
#include "sources/safeopen.h"

/* written this little before its process started (a tick is 10 ms): still its own */
#define STALE_SLACK_NS 50000000ULL

static inline bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* The NStgid of pid (its pid inside its own namespace), or pid if the kernel has none. */
static int read_nstgid(int pid_dir, pid_t pid, pid_t *out)
{
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *fp;
	int fd;

	*out = pid;
	fd = openat(pid_dir, "status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fp = fdopen(fd, "r");
	if (!fp) {
		err = -errno;
		close(fd);
		return err;
	}
	errno = 0;
	while (getline(&line, &cap, fp) > 0) {
		/* "NStgid:\t<pid in each namespace, outermost first>\n": we want the last */
		char *s, *end;
		long v = 0;

		if (strncmp(line, "NStgid:", 7))
			continue;
		end = line + strlen(line);
		while (end > line + 7 && (end[-1] == '\n' || is_blank(end[-1])))
			end--;
		for (s = end; s > line + 7 && s[-1] >= '0' && s[-1] <= '9'; s--)
			;
		/* an exiting process has left its namespaces: "NStgid:" with no number */
		if (end == line + 7) {
			err = -ESRCH;
			break;
		}
		if (s == end || (s > line + 7 && !is_blank(s[-1])) || end - s > 10) {
			err = -EINVAL;
			break;
		}
		for (; s < end; s++)
			v = v * 10 + (*s - '0');
		if (v <= 0 || v > INT32_MAX)
			err = -EINVAL;
		else
			*out = (pid_t)v;
		break;
	}
	if (!err && ferror(fp))
		err = errno ? -errno : -EIO;	/* e.g. ESRCH: the process exited */
	free(line);
	fclose(fp);
	return err;
}

static int open_pid_dir(pid_t pid)
{
	char path[32];

	if (pid <= 0) {
		errno = EINVAL;
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int jt_safeopen__perfmap_path(pid_t pid, char *buf, size_t len)
{
	pid_t nstgid;
	int dir, err, n;

	dir = open_pid_dir(pid);
	if (dir < 0)
		return -errno;
	err = read_nstgid(dir, pid, &nstgid);
	close(dir);
	if (err)
		return err;
	n = snprintf(buf, len, "/proc/%d/root/tmp/perf-%d.map", (int)pid, (int)nstgid);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

#define OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/*
 * openat2() stand-in for where it is missing (ENOSYS: older seccomp profiles, valgrind):
 * walk the path one component at a time without following any symlink, and refuse ".."
 * so that a walk from a process's root cannot leave it.
 */
static int open_walk(int dir, const char *path)
{
	char comp[NAME_MAX + 1];
	const char *s = path;
	int cur = dir, fd = -1, err = 0;

	if (!*s) {
		errno = ENOENT;
		return -1;
	}
	if (*s == '/') {
		cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cur < 0)
			return -1;
	}
	for (;;) {
		const char *e;
		struct stat st;
		size_t len;
		int next;

		while (*s == '/')
			s++;
		e = strchrnul(s, '/');
		len = (size_t)(e - s);
		if (len > NAME_MAX) {
			err = ENAMETOOLONG;
			break;
		}
		memcpy(comp, s, len);
		comp[len] = '\0';
		if (!strcmp(comp, "..")) {
			err = EXDEV;
			break;
		}
		for (s = e; *s == '/'; s++)
			;
		if (!*s) {
			/* the last component: O_NOFOLLOW makes a symlink fail with ELOOP */
			fd = openat(cur, len ? comp : ".", OPEN_FLAGS);
			if (fd < 0)
				err = errno;
			break;
		}
		if (!len)
			continue;
		/* O_PATH|O_NOFOLLOW gives the symlink itself, which fstat then shows */
		next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			err = errno;
			break;
		}
		if (fstat(next, &st))
			err = errno;
		else if (S_ISLNK(st.st_mode))
			err = ELOOP;
		else if (!S_ISDIR(st.st_mode))
			err = ENOTDIR;
		if (cur != dir)
			close(cur);
		cur = next;
		if (err)
			break;
	}
	if (cur != dir)
		close(cur);
	errno = err;
	return err ? -1 : fd;
}

static int open_untrusted(int dir, const char *path, uint64_t resolve)
{
	struct open_how how = {
		/* O_NONBLOCK: a FIFO planted in place of the map must not hang us on open */
		.flags = OPEN_FLAGS,
		.resolve = resolve,
	};
	long fd;

	do {
		fd = syscall(SYS_openat2, dir, path, &how, sizeof(how));
	} while (fd < 0 && errno == EINTR);
	if (fd < 0 && errno == ENOSYS)
		return open_walk(dir, path);
	return (int)fd;
}

/* Keep fd if it is a regular file owned by root or uid; else close it (errno set). */
static int checked(int fd, uid_t uid)
{
	struct stat st;
	int err;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st))
		err = errno;
	else if (!S_ISREG(st.st_mode))
		err = EINVAL;
	else if (st.st_uid != 0 && st.st_uid != uid)
		err = EPERM;
	else
		return fd;
	close(fd);
	errno = err;
	return -1;
}

int jt_safeopen__path(const char *path, uid_t uid)
{
	return checked(open_untrusted(AT_FDCWD, path, RESOLVE_NO_SYMLINKS), uid);
}

/* Open rel (relative to the process's root) in pid's root, its /proc entry open as dir. */
static int open_in_root(int dir, const char *rel, uid_t uid)
{
	int root, fd, err;

	root = openat(dir, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -1;
	fd = open_untrusted(root, rel,
			    RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	err = errno;
	close(root);
	errno = err;
	return checked(fd, uid);
}

int jt_safeopen__trusted_links(const char *path, uid_t uid, struct jt_safeopen_link *bad)
{
	struct jt_trustwalk w = { .uid = uid };
	int fd;

	if (!*path) {
		errno = ENOENT;
		return -1;
	}
	fd = jt_trustwalk__open(&w, AT_FDCWD, path, false);
	if (fd < 0 && w.refused) {
		snprintf(bad->name, sizeof(bad->name), "%s", w.comp);
		bad->owner = w.owner;
	}
	return fd;
}

/*
 * When the process whose /proc directory is dir started, as CLOCK_REALTIME ns (what a
 * file's mtime is in), from its stat's starttime. 0 if it cannot be told.
 */
static uint64_t started_realtime(int dir)
{
	char buf[1024];
	unsigned long long ticks = 0;
	struct timespec real, boot;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd;

	fd = openat(dir, "stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || hz <= 0)
		return 0;
	buf[n] = 0;
	if (jt_procfs__stat_num(buf, 22, &ticks))
		return 0;
	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	return (uint64_t)real.tv_sec * 1000000000ULL + real.tv_nsec -
	       ((uint64_t)boot.tv_sec * 1000000000ULL + boot.tv_nsec) +
	       ticks * (1000000000ULL / hz);
}

/*
 * A perf map last written before its process started is another's, of an earlier process
 * with the same pid (pids are reused; nothing removes the maps): not this one's, yet.
 */
static bool written_before(int fd, uint64_t started)
{
	struct stat st;
	uint64_t mtime;

	if (!started || fstat(fd, &st))
		return false;
	mtime = (uint64_t)st.st_mtim.tv_sec * 1000000000ULL + st.st_mtim.tv_nsec;
	return mtime + STALE_SLACK_NS < started;
}

static bool stale_map(int dir, int fd)
{
	return written_before(fd, started_realtime(dir));
}

int jt_safeopen__mapsite(pid_t pid, struct jt_mapsite *site)
{
	struct stat ours, theirs;
	int dir, err;

	dir = open_pid_dir(pid);
	if (dir < 0)
		return -errno;
	err = read_nstgid(dir, pid, &site->nstgid);
	if (!err && (stat("/", &ours) || fstatat(dir, "root/", &theirs, 0)))
		err = -errno;
	if (!err) {
		site->host = ours.st_dev == theirs.st_dev && ours.st_ino == theirs.st_ino;
		site->started = started_realtime(dir);
	}
	close(dir);
	return err;
}

int jt_safeopen__perfmap_gone(const struct jt_mapsite *site, uid_t uid)
{
	char path[64];
	int fd;

	if (!site->host) {
		errno = EXDEV;	/* its root went with it */
		return -1;
	}
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)site->nstgid);
	fd = jt_safeopen__path(path, uid);
	if (fd >= 0 && written_before(fd, site->started)) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

/*
 * A file of pid's in its own root's /tmp, named by fmt with its pid in its own namespace
 * (the name into name, as the process sees it), written since the process started.
 */
static int own_tmp_file(pid_t pid, uid_t uid, const char *fmt, char *name, size_t len)
{
	char rel[32];
	pid_t nstgid;
	int dir, fd, err;

	/* status and root both through one /proc/PID fd: a reused pid fails with ESRCH */
	dir = open_pid_dir(pid);
	if (dir < 0)
		return -1;
	err = read_nstgid(dir, pid, &nstgid);
	if (err) {
		close(dir);
		errno = -err;
		return -1;
	}
	snprintf(rel, sizeof(rel), fmt, (int)nstgid);
	if (name)
		snprintf(name, len, "/%s", rel);
	fd = open_in_root(dir, rel, uid);
	err = errno;
	if (fd >= 0 && stale_map(dir, fd)) {
		close(fd);
		fd = -1;
		err = ESTALE;
	}
	close(dir);
	errno = err;
	return fd;
}

int jt_safeopen__perfmap(pid_t pid, uid_t uid)
{
	return own_tmp_file(pid, uid, "tmp/perf-%d.map", NULL, 0);
}

int jt_safeopen__jitdump(pid_t pid, uid_t uid, char *path, size_t len)
{
	return own_tmp_file(pid, uid, "tmp/jit-%d.dump", path, len);
}

int jt_safeopen__in_root(pid_t pid, const char *path, uid_t uid)
{
	int dir, fd, err;

	while (*path == '/')
		path++;
	dir = open_pid_dir(pid);
	if (dir < 0)
		return -1;
	fd = open_in_root(dir, path, uid);
	err = errno;
	close(dir);
	errno = err;
	return fd;
}
