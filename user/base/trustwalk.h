/* SPDX-License-Identifier: GPL-2.0 */
/* Walking a path as root without following anyone else's symlinks. */
#ifndef JT_TRUSTWALK_H
#define JT_TRUSTWALK_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

/*
 * One walk, possibly over several calls (links count across them). Following a symlink
 * lets its owner choose where root reads or writes, so only root's and uid's symlinks are
 * followed, their targets walked the same way (like fs.protected_symlinks, but for every
 * directory). Each step opens from the fd of the one before: nothing can be swapped in
 * between a check and its use.
 */
struct jt_trustwalk {
	uid_t uid;			/* whose symlinks are followed, besides root's */
	int links;			/* symlinks followed so far */
	char comp[NAME_MAX + 1];	/* on failure: the component at fault */
	bool refused;			/* failed on a symlink of another user (EPERM) */
	uid_t owner;			/* then: that symlink's owner (comp names it) */
};

/*
 * path, from the directory at (AT_FDCWD or an fd): want_dir, an O_PATH fd of the directory
 * it names; otherwise its last component opened O_RDONLY|O_NONBLOCK (never through a
 * symlink put there since any check). -1 with errno set and w->comp named on failure.
 */
int jt_trustwalk__open(struct jt_trustwalk *w, int at, const char *path, bool want_dir);

#endif
