// SPDX-License-Identifier: GPL-2.0
/* Walking a path as root without following anyone else's symlinks. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/trustwalk.h"

/* the kernel's own limit on symlinks followed in one lookup */
#define JT_TRUSTWALK_MAX_LINKS 40

/* Close fd keeping errno: the error to report is the one before. */
static void close_keep(int fd)
{
	int err = errno;

	close(fd);
	errno = err;
}

/*
 * What the symlink link (named w->comp, in directory at, stat st) leads to, if root or
 * w->uid owns it: its target walked from at the same way.
 */
static int follow(struct jt_trustwalk *w, int at, int link, const struct stat *st,
		  bool want_dir)
{
	char *target;
	ssize_t n;
	int fd;

	if (st->st_uid != 0 && st->st_uid != w->uid) {
		w->refused = true;
		w->owner = st->st_uid;
		errno = EPERM;
		return -1;
	}
	if (++w->links > JT_TRUSTWALK_MAX_LINKS) {
		errno = ELOOP;
		return -1;
	}
	target = malloc(PATH_MAX);
	if (!target)
		return -1;
	/* read through the fd that was checked: the link cannot be swapped since fstat() */
	n = readlinkat(link, "", target, PATH_MAX - 1);
	if (n < 0) {
		fd = -1;
	} else {
		target[n] = '\0';
		fd = jt_trustwalk__open(w, at, target, want_dir);
	}
	free(target);
	return fd;
}

/* One step from cur: comp as a directory (following a trusted symlink), or -1. */
static int step(struct jt_trustwalk *w, int cur, bool want_dir)
{
	struct stat st;
	int next, link;

	/* O_PATH|O_NOFOLLOW gives a symlink itself, which fstat() then shows */
	link = openat(cur, w->comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (link < 0)
		return -1;
	if (fstat(link, &st)) {
		next = -1;
	} else if (S_ISLNK(st.st_mode)) {
		next = follow(w, cur, link, &st, want_dir);
	} else if (!S_ISDIR(st.st_mode)) {
		next = -1;
		errno = ENOTDIR;
	} else {
		return link;	/* the directory itself */
	}
	close_keep(link);
	return next;
}

int jt_trustwalk__open(struct jt_trustwalk *w, int at, const char *path, bool want_dir)
{
	const char *s = path, *e;
	int cur, next;
	size_t len;
	bool last;

	w->refused = false;
	snprintf(w->comp, sizeof(w->comp), "%s", *s == '/' ? "/" : ".");
	cur = openat(at, w->comp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -1;
	for (;;) {
		while (*s == '/')
			s++;
		e = strchrnul(s, '/');
		len = (size_t)(e - s);
		if (len > NAME_MAX) {
			snprintf(w->comp, sizeof(w->comp), "%.*s...", 32, s);
			close(cur);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(w->comp, s, len);
		w->comp[len] = '\0';
		for (s = e; *s == '/'; s++)
			;
		last = !*s;
		if (!len) {		/* "" or only slashes: the directory itself */
			if (want_dir)
				return cur;
			strcpy(w->comp, ".");
		}
		if (last && !want_dir) {
			/* O_NOFOLLOW: a symlink put here since any check fails, never followed */
			next = openat(cur, w->comp, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
				      O_CLOEXEC);
			if (next >= 0 || errno != ELOOP) {
				close_keep(cur);
				return next;
			}
		}
		next = step(w, cur, want_dir || !last);
		close_keep(cur);
		if (next < 0 || last)
			return next;
		cur = next;
	}
}
