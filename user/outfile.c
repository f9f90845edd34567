// SPDX-License-Identifier: GPL-2.0
/* Output files created the one safe way: no symlinks followed blindly, no devices, 0600. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "outfile.h"
#include "util.h"

#define JT_OUTFILE_FLAGS (O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)
/* the kernel's own limit on symlinks followed in one lookup */
#define JT_OUTFILE_MAX_LINKS 40
#define JT_OUTFILE_TEMP_TRIES 100

/*
 * jitrace often runs as root, and its output path may lead through directories other users
 * can write. The directory is opened one component at a time, each step from the fd of the
 * one before, so nothing can be swapped in between a check and its use. A directory may
 * belong to anyone: the file itself is created with O_EXCL (never over or through something
 * already there). A symlink on the way is different: following it lets its owner choose the
 * directory root writes into, so only root's and the caller's own symlinks are followed
 * (their targets walked the same way), like fs.protected_symlinks but for every directory.
 */
struct walk {
	const char *path;	/* the output path, named in every error */
	uid_t uid;		/* whose symlinks are followed, besides root's */
	int links;		/* symlinks followed so far */
};

static int open_dir(struct walk *w, int at, const char *dir);

/* Report a failure to create w->path at component comp and return -err. */
static int cannot(const struct walk *w, const char *comp, int err)
{
	jt_err("%s: cannot create: '%s': %s", w->path, comp, strerror(err));
	return -err;
}

/* The directory the symlink link (named name, in directory at) points to, if we trust it. */
static int follow(struct walk *w, int at, int link, const struct stat *st, const char *name)
{
	char *target;
	ssize_t n;
	int fd;

	if (st->st_uid != 0 && st->st_uid != w->uid) {
		jt_err("refusing to write %s: '%s' on the way is a symlink owned by uid %u, "
		       "neither root nor you; give the real directory", w->path, name,
		       (unsigned)st->st_uid);
		return -EPERM;
	}
	if (++w->links > JT_OUTFILE_MAX_LINKS)
		return cannot(w, name, ELOOP);
	target = malloc(PATH_MAX);
	if (!target)
		return cannot(w, name, ENOMEM);
	/* read through the fd that was checked: the link cannot be swapped since fstat() */
	n = readlinkat(link, "", target, PATH_MAX - 1);
	if (n < 0) {
		fd = cannot(w, name, errno);
	} else {
		target[n] = '\0';
		fd = open_dir(w, at, target);
	}
	free(target);
	return fd;
}

/* Open dir (relative to the directory at) as an O_PATH fd; -errno once reported. */
static int open_dir(struct walk *w, int at, const char *dir)
{
	char comp[NAME_MAX + 1];
	const char *s = dir, *e;
	struct stat st;
	int cur, next;
	size_t len;

	cur = openat(at, *s == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return cannot(w, *s == '/' ? "/" : ".", errno);
	for (;; s = e) {
		while (*s == '/')
			s++;
		if (!*s)
			return cur;
		e = strchrnul(s, '/');
		len = (size_t)(e - s);
		if (len > NAME_MAX) {
			next = -ENAMETOOLONG;
			jt_err("%s: cannot create: a directory name is too long", w->path);
			break;
		}
		memcpy(comp, s, len);
		comp[len] = '\0';
		/* O_PATH|O_NOFOLLOW gives a symlink itself, which fstat() then shows */
		next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			next = cannot(w, comp, errno);
			break;
		}
		if (fstat(next, &st)) {
			close(next);
			next = cannot(w, comp, errno);
			break;
		}
		if (S_ISLNK(st.st_mode)) {
			int link = next;

			next = follow(w, cur, link, &st, comp);
			close(link);
		} else if (!S_ISDIR(st.st_mode)) {
			close(next);
			next = cannot(w, comp, ENOTDIR);
		}
		close(cur);
		if (next < 0)
			return next;
		cur = next;
	}
	close(cur);
	return next;
}

static const char *kind_of(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFLNK:
		return "a symlink";
	case S_IFDIR:
		return "a directory";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	}
	return "not a regular file";
}

/*
 * base exists in dir. Only a regular file or a symlink is ever replaced, and only with
 * force: a new file is created beside it and renamed over it, so the path always names
 * either the old entry or our new file, and the old one is never written to (a hard link's
 * other names, a symlink's target keep their contents).
 */
static int replace(const struct walk *w, int dir, const char *base, bool force)
{
	char temp[64];
	struct stat st;
	int fd = -EEXIST, i, err;

	if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW))
		return cannot(w, base, errno);
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		jt_err("refusing to write %s: it is %s; choose another path", w->path,
		       kind_of(st.st_mode));
		return -EEXIST;
	}
	if (!force) {
		if (S_ISLNK(st.st_mode))
			jt_err("refusing to write %s: it is a symlink; remove it or choose another "
			       "path (-f, --force replaces the link, never its target)", w->path);
		else
			jt_err("%s: already exists (-f, --force replaces it)", w->path);
		return -EEXIST;
	}
	for (i = 0; i < JT_OUTFILE_TEMP_TRIES && fd == -EEXIST; i++) {
		snprintf(temp, sizeof(temp), ".jitrace-%08x.tmp",
			 (uint32_t)(jt_now_ns() ^ (uint64_t)getpid() * 2654435761u) + i);
		fd = openat(dir, temp, JT_OUTFILE_FLAGS, 0600);
		if (fd < 0)
			fd = -errno;
	}
	if (fd < 0) {
		jt_err("%s: cannot create a file beside it to replace it: %s", w->path,
		       strerror(-fd));
		return fd;
	}
	/*
	 * Whoever can write dir could put a FIFO here since fstatat(); rename() replaces only
	 * the name, never writes to what it names, so that race costs them their own FIFO.
	 */
	if (renameat(dir, temp, dir, base)) {
		err = errno;
		unlinkat(dir, temp, 0);
		close(fd);
		jt_err("%s: cannot replace: %s", w->path, strerror(err));
		return -err;
	}
	return fd;
}

int jt_outfile__create(const char *path, bool force)
{
	struct walk w = { .path = path, .uid = geteuid() };
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	int dir, fd;
	char *parent;

	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		jt_err("refusing to write '%s': it does not end in a file name", path);
		return -EISDIR;
	}
	/* "/x" is in "/"; "x" in the current directory, however it was reached */
	parent = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
	if (!parent) {
		jt_err("%s: out of memory", path);
		return -ENOMEM;
	}
	dir = open_dir(&w, AT_FDCWD, parent);
	free(parent);
	if (dir < 0)
		return dir;
	/* O_EXCL fails on anything already there, a symlink too, dangling or not */
	fd = openat(dir, base, JT_OUTFILE_FLAGS, 0600);
	if (fd < 0 && errno == EEXIST)
		fd = replace(&w, dir, base, force);
	else if (fd < 0) {
		fd = -errno;
		jt_err("%s: cannot create: %s", path, strerror(-fd));
	}
	close(dir);
	return fd;
}

FILE *jt_outfile__fopen(const char *path, bool force)
{
	int fd = jt_outfile__create(path, force);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "w");
	if (!f) {
		jt_err("%s: %s", path, strerror(errno));
		close(fd);
		unlink(path);	/* ours, just created */
	}
	return f;
}

int jt_outfile__create_at(int dirfd, const char *name, const char *shown)
{
	int fd = openat(dirfd, name, JT_OUTFILE_FLAGS, 0600);

	if (fd < 0) {
		fd = -errno;
		jt_err("%s: cannot create: %s", shown, strerror(-fd));
	}
	return fd;
}

/* The directory at path, made 0700 if missing; an O_PATH fd of it or -errno (reported). */
static int make_dir(struct walk *w, char *path)
{
	char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	int parent, at;

	if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
		return open_dir(w, AT_FDCWD, path);
	if (slash)
		*slash = '\0';
	parent = open_dir(w, AT_FDCWD, !slash ? "." : slash == path ? "/" : path);
	if (slash)
		*slash = '/';
	if (parent < 0)
		return parent;
	if (mkdirat(parent, base, 0700) && errno != EEXIST) {
		at = -errno;
		jt_err("%s: cannot create the directory: %s", w->path, strerror(-at));
	} else {
		/* the last step like every other: a symlink there only if root's or ours */
		at = open_dir(w, parent, base);
	}
	close(parent);
	return at;
}

int jt_outfile__dir(const char *path)
{
	struct walk w = { .path = path, .uid = geteuid() };
	size_t len = strlen(path);
	struct stat st;
	int at, fd, err = 0;
	char *p;

	while (len > 1 && path[len - 1] == '/')		/* "dir/" is "dir" */
		len--;
	p = strndup(path, len);
	if (!p) {
		jt_err("%s: out of memory", path);
		return -ENOMEM;
	}
	at = make_dir(&w, p);
	free(p);
	if (at < 0)
		return at;
	fd = openat(at, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		jt_err("%s: cannot open the directory: %s", path, strerror(-err));
	}
	close(at);
	if (err)
		return err;
	if (fstat(fd, &st)) {
		err = -errno;
		jt_err("%s: %s", path, strerror(-err));
	} else if (st.st_uid != 0 && st.st_uid != w.uid) {
		jt_err("refusing to keep files in %s: it belongs to uid %u, neither root nor you",
		       path, (unsigned)st.st_uid);
		err = -EPERM;
	} else if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		jt_err("refusing to keep files in %s: others can write to it (mode %04o); give a "
		       "directory of your own (one that does not exist is made, mode 0700)", path,
		       (unsigned)(st.st_mode & 07777));
		err = -EPERM;
	}
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}
