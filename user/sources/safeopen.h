/* SPDX-License-Identifier: GPL-2.0 */
/* Opening files that untrusted processes write, as root must (perf maps, jitdump files). */
#ifndef JT_SAFEOPEN_H
#define JT_SAFEOPEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Each returns a read-only fd of a regular file owned by root or by uid, reached without
 * following any symlink, or -1 with errno set; nothing is printed.
 */
/* path as given (tests, and files of jitrace's own namespace) */
int jt_safeopen__path(const char *path, uid_t uid);
/* pid's perf map: tmp/perf-NSTGID.map inside the process's own root (/proc/PID/root) */
int jt_safeopen__perfmap(pid_t pid, uid_t uid);
/*
 * pid's jitdump where runtimes put it, tmp/jit-NSTGID.dump inside its own root, written
 * since it started (ESTALE: an earlier process's); its path as pid sees it into path.
 */
int jt_safeopen__jitdump(pid_t pid, uid_t uid, char *path, size_t len);
/* path as process pid sees it, resolved inside its own root */
int jt_safeopen__in_root(pid_t pid, const char *path, uid_t uid);
/*
 * A file of jitrace's own that root reads on a user's word (the push credentials): opened
 * read-only (O_NONBLOCK, no controlling tty), whatever it is, following only symlinks that
 * root or uid own, at its name or on the way, as outputs are created (outfile.h); the kernel
 * mounts Kubernetes Secrets through root's links. The caller checks what it opened. Returns
 * the fd, or -1 with errno set; a link refused (EPERM) is named in *bad. Nothing is printed.
 */
struct jt_safeopen_link {
	char name[256];		/* the refused symlink's name (its last component) */
	uid_t owner;
};
int jt_safeopen__trusted_links(const char *path, uid_t uid, struct jt_safeopen_link *bad);
/*
 * Where a process's perf map is, taken while it lives, so that a map it writes as it ends
 * (HotSpot's -XX:+DumpPerfMapAtExit) can still be read once /proc/PID is gone.
 */
struct jt_mapsite {
	bool host;		/* its root is jitrace's: the map is /tmp/perf-NSTGID.map here */
	pid_t nstgid;
	uint64_t started;	/* CLOCK_REALTIME ns it started, 0: not known */
};
/* Take pid's; returns 0 or -errno. */
int jt_safeopen__mapsite(pid_t pid, struct jt_mapsite *site);
/*
 * The map of a process that is gone, by what was taken of it: only one that shared
 * jitrace's root, and only a map written since it started (ESTALE otherwise; EXDEV for
 * another root).
 */
int jt_safeopen__perfmap_gone(const struct jt_mapsite *site, uid_t uid);
/*
 * The path of pid's perf map as jitrace opens it, /proc/PID/root/tmp/perf-NSTGID.map, for
 * messages. Returns 0 or -errno (-ENAMETOOLONG if len is too small).
 */
int jt_safeopen__perfmap_path(pid_t pid, char *buf, size_t len);

#endif
