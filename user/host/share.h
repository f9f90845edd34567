/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sessions' shares of what jitrace turns on in a process (a .NET perf map, a JVM's perf map
 * file), counted across sessions with flocks in a directory root alone can write
 * (/run/jitrace): the first session to need it turns it on, the last to let it go turns it
 * off, and what the process had by itself is never touched. Runtime-neutral: the runtime's
 * part is a pair of callbacks.
 */
#ifndef JT_SHARE_H
#define JT_SHARE_H

#include <stdbool.h>
#include <stdint.h>

struct jt_share_ops {
	/* names the gate, KIND.lock, and each process's share file, KIND-PID-START */
	const char *kind;
	/*
	 * No session holds pid's share (called under the gate): look at pid, and turn on what
	 * is needed. ours: a session turned it on before and died with its guard, so what is
	 * on is jitrace's, not the process's own. Returns 1 (on by jitrace now: the share is
	 * held), 0 (nothing of jitrace's to hold: not this runtime, or on by itself), -errno
	 * (said by the callback).
	 */
	int (*first)(void *ctx, uint32_t pid, bool ours);
	/* The last share of pid let go (under the gate): undo what first turned on. */
	void (*last)(void *ctx, uint32_t pid);
};

/* A share held: of which process (a reused pid is another), and its locked file. */
struct jt_share {
	uint32_t pid;
	unsigned long long start;	/* its start time (field 22 of its stat) */
	int fd;				/* the share file, locked shared; -1: not counted */
};

/*
 * Take this session's share of pid's (ops->kind) in lock_dir, which must exist; lock_dir
 * NULL: not counted, first is asked as if alone and last at __drop. Returns 1 with *s
 * filled, 0 if there is nothing to hold (gone, or ops->first said so), -errno (said).
 */
int jt_share__take(const char *lock_dir, const char *proc_root, uint32_t pid,
		   const struct jt_share_ops *ops, void *ctx, struct jt_share *s);
/*
 * Let a share __take returned go: the last one out calls ops->last, if the process is still
 * the one it was (not gone, its pid not reused).
 */
void jt_share__drop(const char *lock_dir, const char *proc_root, const struct jt_share *s,
		    const struct jt_share_ops *ops, void *ctx);

#endif
