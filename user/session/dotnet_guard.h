/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The guard of a session's .NET perf maps: a small child that turns them on when asked, holds
 * the session's shares of them, and turns off what no session needs any more once the
 * recorder lets it go, or dies (even by SIGKILL: its pipe from the recorder closes).
 */
#ifndef JT_DOTNET_GUARD_H
#define JT_DOTNET_GUARD_H

#include <stdint.h>

#define JT_DOTNET_LOCK_DIR "/run/jitrace"	/* root's alone: where sessions count shares */

struct jt_dotnet_guard;

/* Fork the guard (proc_root "/proc"); NULL if it could not be (said why). */
struct jt_dotnet_guard *jt_dotnet_guard__start(const char *proc_root, const char *lock_dir);
/*
 * Have the guard ask pid (0: every process with a diagnostics socket) to write its perf map,
 * as jt_dotnet_ipc__enable (__enable_all) would. Returns how many it turned on or joined, or
 * -errno.
 */
int jt_dotnet_guard__enable(struct jt_dotnet_guard *g, uint32_t pid);
/* Let go: the guard turns off what no session needs any more, and is waited for. NULL fine. */
void jt_dotnet_guard__stop(struct jt_dotnet_guard *g);

#endif
