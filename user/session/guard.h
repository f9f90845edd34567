/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guard of what a session turns on in the processes it records (.NET perf maps, the perf
 * map files a JVM's attach writes): a small child that holds the session's shares of them
 * (host/share.h), and undoes what no session needs any more once the recorder lets it go, or
 * dies (even by SIGKILL: its pipe from the recorder closes).
 */
#ifndef JT_GUARD_H
#define JT_GUARD_H

#include <stdint.h>

#define JT_GUARD_LOCK_DIR "/run/jitrace"	/* root's alone: where sessions count shares */

struct jt_guard;

/* Fork the guard (proc_root "/proc"); NULL if it could not be (said why). */
struct jt_guard *jt_guard__start(const char *proc_root, const char *lock_dir);
/*
 * Have the guard ask pid (0: every process with a diagnostics socket) to write its perf map,
 * as jt_dotnet_ipc__enable (__enable_all) would. Returns how many it turned on or joined, or
 * -errno.
 */
int jt_guard__dotnet(struct jt_guard *g, uint32_t pid);
/*
 * Before the JVM pid is asked for its perf map (Compiler.perfmap): have the guard hold a
 * share of the map file, so that a map no JVM wrote before any session asked is removed
 * when the last session lets it go; one that was there is never touched. 1: held; 0:
 * nothing to hold (the JVM's own map, or it is gone); -errno.
 */
int jt_guard__jvm_map(struct jt_guard *g, uint32_t pid);
/* Let go: the guard undoes what no session needs any more, and is waited for. NULL fine. */
void jt_guard__stop(struct jt_guard *g);

#endif
