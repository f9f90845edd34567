/* SPDX-License-Identifier: GPL-2.0 */
/* Opening files that untrusted processes write, as root must (perf maps, jitdump files). */
#ifndef JT_SAFEOPEN_H
#define JT_SAFEOPEN_H

#include <stddef.h>
#include <sys/types.h>

/*
 * Each returns a read-only fd of a regular file owned by root or by uid, reached without
 * following any symlink, or -1 with errno set; nothing is printed.
 */
/* path as given (tests, and files of jitrace's own namespace) */
int jt_safeopen__path(const char *path, uid_t uid);
/* pid's perf map: tmp/perf-NSTGID.map inside the process's own root (/proc/PID/root) */
int jt_safeopen__perfmap(pid_t pid, uid_t uid);
/* path as process pid sees it, resolved inside its own root */
int jt_safeopen__in_root(pid_t pid, const char *path, uid_t uid);
/*
 * The path of pid's perf map as jitrace opens it, /proc/PID/root/tmp/perf-NSTGID.map, for
 * messages. Returns 0 or -errno (-ENAMETOOLONG if len is too small).
 */
int jt_safeopen__perfmap_path(pid_t pid, char *buf, size_t len);

#endif
