/* SPDX-License-Identifier: MIT */
/*
 * Where the toy JIT tells of its code: libjitrace-agent (the default: a perf-map line and a
 * stub call per load), or, without the agent, a jitdump file and/or a perf map it writes
 * itself, as runtimes that know nothing of jitrace do (Node's --perf-prof, perf's JVMTI
 * agent, .NET, Python's -X perf_jit).
 */
#ifndef TOYJIT_SINK_H
#define TOYJIT_SINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOY_PATH_MAX 4096

/* The jitdump format (tools/perf/Documentation/jitdump-specification.txt). */
#define TOY_JITDUMP_MAGIC 0x4A695444u
#define TOY_JITDUMP_VERSION 1
#define TOY_JITDUMP_EM_X86_64 62
#define TOY_JITDUMP_CODE_LOAD 0
#define TOY_JITDUMP_CODE_DEBUG_INFO 2
#define TOY_LINES_PER_FN 3	/* a function's source lines: entry, body, return */

struct toy_fn;

struct toy_sink {
	bool agent;		/* through libjitrace-agent; false: the files below only */
	int dump_fd;		/* jit-PID.dump, -1: none */
	void *marker;		/* one page of it mapped PROT_READ|PROT_EXEC: its announcement */
	size_t marker_size;
	int map_fd;		/* /tmp/perf-PID.map written by the toy itself, -1: none */
	bool map_at_exit;	/* its lines held and written only when the toy ends */
	char *map_held;
	size_t map_held_len;
	uint64_t next_index;	/* jitdump code_index, and the method id without the agent */
	char source[64];	/* debug info: the notional source file, "SCENARIO.toy" */
	char dump_path[TOY_PATH_MAX];
	char map_path[64];
};

/* The agent's sink, no files. */
void sink__init(struct toy_sink *s, const char *scenario);
/*
 * Create DIR/jit-PID.dump (truncating a stale one), write its header and map its first page
 * PROT_READ|PROT_EXEC, MAP_PRIVATE. The agent is no longer used. Returns 0 or -1 (said why).
 */
int sink__open_jitdump(struct toy_sink *s, const char *dir);
/*
 * Create /tmp/perf-PID.map afresh and write its lines ourselves, not through the agent;
 * at_exit: hold them and write them all when the sink is closed, as a runtime that buffers
 * its map does.
 */
int sink__open_perfmap(struct toy_sink *s, bool at_exit);
void sink__close(struct toy_sink *s);

enum toy_rewrite {
	TOY_REWRITE_NONE,
	TOY_REWRITE_INPLACE,	/* truncated and written again: the same file */
	TOY_REWRITE_RENAME,	/* a new file renamed over it */
	TOY_REWRITE_UNLINK,	/* removed, then created again */
};

/*
 * Write the perf map anew, as `jcmd PID Compiler.perfmap` does: a line for each of the n
 * functions, fns[0] first and named renamed (longer than before), the way how says.
 * Returns 0 or -1 (said).
 */
int sink__rewrite_map(struct toy_sink *s, struct toy_fn *const *fns, size_t n,
		      const char *renamed, enum toy_rewrite how);

/*
 * Tell of fn's finished, executable code; sets fn->id. line is the first of its
 * TOY_LINES_PER_FN lines in s->source (jitdump only: a debug-info record, written before
 * the code load as the format wants; with say, a "debug" line on stdout too).
 */
int sink__load(struct toy_sink *s, struct toy_fn *fn, uint32_t line, bool say);
/* fn's code is gone (the agent only: the jitdump and perf-map formats have no unload). */
void sink__unload(struct toy_sink *s, struct toy_fn *fn);

#endif
