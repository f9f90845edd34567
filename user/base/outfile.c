// SPDX-License-Identifier: GPL-2.0
/* Output files made the one safe way: no symlinks followed blindly, 0600, put in place whole. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/outfile.h"
#include "base/trustwalk.h"
#include "base/util.h"

#define JT_OUTFILE_FLAGS (O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC)
#define JT_OUTFILE_TEMP_TRIES 100

/*
 * jitrace often runs as root, and its output path may lead through directories other users
 * can write. A directory may belong to anyone: the file itself is created with O_EXCL (never
 * over or through something already there). A symlink on the way is different: only
 * root's and the caller's own are followed (base/trustwalk.h).
 */
struct walk {
	const char *path;	/* the output path, named in every error */
	struct jt_trustwalk tw;
};

/* Report a failure to create w->path at component comp and return -err. */
static int cannot(const struct walk *w, const char *comp, int err)
{
	jt_err("%s: cannot create: '%s': %s", w->path, comp, strerror(err));
	return -err;
}

/* Open dir (relative to the directory at) as an O_PATH fd; -errno once reported. */
static int open_dir(struct walk *w, int at, const char *dir)
{
	int fd = jt_trustwalk__open(&w->tw, at, dir, true);

	if (fd >= 0)
		return fd;
	if (w->tw.refused) {
		jt_err("refusing to write %s: '%s' on the way is a symlink owned by uid %u, "
		       "neither root nor you; give the real directory", w->path, w->tw.comp,
		       (unsigned)w->tw.owner);
		return -EPERM;
	}
	return cannot(w, w->tw.comp, errno);
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
 * What is at base in dir now, checked before anything is written, so that a refusal comes
 * before a long recording rather than after it. Only a regular file or a symlink is ever
 * replaced, and only with force; 0 if the name may be written, else -errno (reported).
 */
static int check_target(const struct walk *w, int dir, const char *base, bool force)
{
	struct stat st;

	if (fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : cannot(w, base, errno);
	if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
		jt_err("refusing to write %s: it is %s; choose another path", w->path,
		       kind_of(st.st_mode));
		return -EEXIST;
	}
	if (force)
		return 0;
	if (S_ISLNK(st.st_mode))
		jt_err("refusing to write %s: it is a symlink; remove it or choose another path "
		       "(-f, --force replaces the link, never its target)", w->path);
	else
		jt_err("%s: already exists (-f, --force replaces it)", w->path);
	return -EEXIST;
}

struct jt_outfile {
	char *path;		/* as given: every error names it */
	const char *base;	/* the target's name in dir (the end of path) */
	int dir;		/* the directory the file is made in, by the safe walk (O_PATH) */
	int fd;
	FILE *stream;		/* once asked for: it owns fd */
	bool force;
	bool placed;		/* under the target's name */
	char temp[32];		/* its hidden name in dir while it has one, else "" */
};

/* Give the unnamed (O_TMPFILE) file the name name in its directory: 0 or -errno. */
static int link_fd(struct jt_outfile *of, const char *name)
{
	char proc[32];

	if (!linkat(of->fd, "", of->dir, name, AT_EMPTY_PATH))
		return 0;
	if (errno != ENOENT)
		return -errno;
	/* AT_EMPTY_PATH needs CAP_DAC_READ_SEARCH; the fd's link in /proc does not */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", of->fd);
	return linkat(AT_FDCWD, proc, of->dir, name, AT_SYMLINK_FOLLOW) ? -errno : 0;
}

/* A new file of our own at name in its directory: 0 or -errno. */
static int create_named(struct jt_outfile *of, const char *name)
{
	of->fd = openat(of->dir, name, JT_OUTFILE_FLAGS, 0600);
	return of->fd < 0 ? -errno : 0;
}

/* make() under fresh hidden names until one is free; of->temp is it. 0 or -errno. */
static int temp_name(struct jt_outfile *of, int (*make)(struct jt_outfile *, const char *))
{
	int i, err = -EEXIST;

	for (i = 0; i < JT_OUTFILE_TEMP_TRIES && err == -EEXIST; i++) {
		snprintf(of->temp, sizeof(of->temp), ".jitrace-%08x.tmp",
			 (uint32_t)(jt_now_ns() ^ (uint64_t)getpid() * 2654435761u) + i);
		err = make(of, of->temp);
	}
	if (err)
		of->temp[0] = '\0';
	return err;
}

/*
 * The file, unnamed: nothing at all is left if jitrace is killed before it is placed.
 * Filesystems without O_TMPFILE get a hidden name, which O_EXCL makes ours alone.
 */
static int make_temp(struct jt_outfile *of)
{
	int err;

	of->fd = openat(of->dir, ".", O_WRONLY | O_TMPFILE | O_CLOEXEC, 0600);
	if (of->fd >= 0)
		return 0;
	err = -errno;
	if (err == -EOPNOTSUPP || err == -EISDIR || err == -EINVAL)
		err = temp_name(of, create_named);
	if (err)
		jt_err("%s: cannot create a file in its directory: %s", of->path, strerror(-err));
	return err;
}

struct jt_outfile *jt_outfile__open(const char *path, bool force)
{
	struct walk w = { .path = path, .tw.uid = geteuid() };
	struct jt_outfile *of = calloc(1, sizeof(*of));
	char *parent, *slash;

	if (!of || !(of->path = strdup(path))) {
		jt_err("%s: out of memory", path);
		free(of);
		return NULL;
	}
	of->fd = of->dir = -1;
	of->force = force;
	slash = strrchr(of->path, '/');
	of->base = slash ? slash + 1 : of->path;
	if (!*of->base || !strcmp(of->base, ".") || !strcmp(of->base, "..")) {
		jt_err("refusing to write '%s': it does not end in a file name", path);
		goto fail;
	}
	/* "/x" is in "/"; "x" in the current directory, however it was reached */
	parent = slash ? strndup(path, slash == of->path ? 1 : (size_t)(slash - of->path)) :
			 strdup(".");
	if (!parent) {
		jt_err("%s: out of memory", path);
		goto fail;
	}
	of->dir = open_dir(&w, AT_FDCWD, parent);
	free(parent);
	if (of->dir < 0 || check_target(&w, of->dir, of->base, force) || make_temp(of))
		goto fail;
	return of;
fail:
	jt_outfile__close(of);
	return NULL;
}

int jt_outfile__fd(const struct jt_outfile *of)
{
	return of->fd;
}

FILE *jt_outfile__stream(struct jt_outfile *of)
{
	if (!of->stream) {
		of->stream = fdopen(of->fd, "w");
		if (!of->stream)
			jt_err("%s: %s", of->path, strerror(errno));
	}
	return of->stream;
}

/* The hidden name onto the target's, refusing one there: 0 or -errno. */
static int rename_noreplace(struct jt_outfile *of)
{
	if (!renameat2(of->dir, of->temp, of->dir, of->base, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL)
		return -errno;
	/* a filesystem without RENAME_NOREPLACE: a hard link refuses an existing name too */
	if (linkat(of->dir, of->temp, of->dir, of->base, 0))
		return -errno;
	unlinkat(of->dir, of->temp, 0);
	return 0;
}

/*
 * Every step is through the directory the file was made in: a directory on the way that is
 * swapped for a symlink since cannot move the file, or what is replaced, elsewhere. rename()
 * replaces only the name, never writes to what it names (a FIFO put there meanwhile by
 * whoever can write the directory is replaced, not fed).
 */
int jt_outfile__place(struct jt_outfile *of)
{
	int err = 0;

	if (of->stream && fflush(of->stream))
		err = -errno;
	else if (fsync(of->fd))
		err = -errno;
	if (err) {
		jt_err("%s: write: %s", of->path, strerror(-err));
		return err;
	}
	if (of->placed)		/* already: what was written since is flushed */
		return 0;
	if (!of->temp[0] && !of->force) {
		err = link_fd(of, of->base);	/* linkat() never replaces a name */
	} else {
		if (!of->temp[0] && (err = temp_name(of, link_fd))) {
			jt_err("%s: cannot name the file beside it: %s", of->path, strerror(-err));
			return err;
		}
		err = of->force ? renameat(of->dir, of->temp, of->dir, of->base) ? -errno : 0 :
				  rename_noreplace(of);
		if (err)
			unlinkat(of->dir, of->temp, 0);
		of->temp[0] = '\0';
	}
	if (err == -EEXIST)
		jt_err("%s: appeared while it was being written; left as it is (-f, --force "
		       "replaces it)", of->path);
	else if (err)
		jt_err("%s: cannot put it in place: %s", of->path, strerror(-err));
	else
		of->placed = true;
	return err;
}

int jt_outfile__close(struct jt_outfile *of)
{
	int err = 0;

	if (!of)
		return 0;
	if ((of->stream ? fclose(of->stream) : of->fd >= 0 ? close(of->fd) : 0) && of->placed) {
		err = -errno;
		jt_err("%s: close: %s", of->path, strerror(-err));
	}
	/* a file never placed goes, by its name in the directory it was made in, not by path */
	if (!of->placed && of->temp[0])
		unlinkat(of->dir, of->temp, 0);
	if (of->dir >= 0)
		close(of->dir);
	free(of->path);
	free(of);
	return err;
}

int jt_outfile__commit(struct jt_outfile *of)
{
	int err = jt_outfile__place(of), cerr = jt_outfile__close(of);

	return err ? err : cerr;
}

FILE *jt_outfile__fopen(const char *path, bool force, struct jt_outfile **of)
{
	FILE *f;

	*of = jt_outfile__open(path, force);
	if (!*of)
		return NULL;
	f = jt_outfile__stream(*of);
	if (!f) {
		jt_outfile__close(*of);
		*of = NULL;
	}
	return f;
}

int jt_outfile__finish(struct jt_outfile *of, bool ok)
{
	return ok ? jt_outfile__commit(of) : jt_outfile__close(of);
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
	struct walk w = { .path = path, .tw.uid = geteuid() };
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
	} else if (st.st_uid != 0 && st.st_uid != w.tw.uid) {
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
