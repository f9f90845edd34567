/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The collector's state, shared by its files alone (collector.c: the processes and the event
 * dispatch; frames.c: a stack's addresses named as frames; livecode.c: the code live in each
 * process and its late names; procdefs.c: processes and threads defined in the log, which
 * the others build on). Nothing else includes it: jt_coll_* is no API.
 */
#ifndef JT_COLLECTOR_INT_H
#define JT_COLLECTOR_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "join/codemap.h"
#include "join/collector.h"
#include "base/hash.h"
#include "join/idmap.h"
#include "join/late.h"
#include "join/methods.h"
#include "join/ucopy.h"
#include "host/hotspot.h"
#include "host/procfs.h"

#define SYM_IDX_BITS 24		/* symbols of a file past 16M stay file + offset */

struct proc {
	uint32_t pid;
	struct jt_membound *mem;	/* the collector's: what its methods are charged to */
	size_t perfmap_methods;	/* live methods from its perf map, against the cap */
	bool defined;		/* its proc record is written */
	bool has_agent;		/* it has sent agent events */
	bool vmas_read;
	uint64_t vmas_ts;	/* when /proc/PID/maps was last read */
	char comm[16];
	struct jt_codemap code;
	struct jt_idmap ids;	/* agent id -> struct jt_method */
	struct jt_vmas vmas;
	struct jt_hash syms;	/* module id << SYM_IDX_BITS | symbol index -> log symbol id */
	struct jt_hash lines;	/* method -> struct lines, until the method is defined */
	struct jt_hash pieces;	/* agent id -> inlined scopes half-sent (livecode.c) */
	char *cmdline;		/* from its exec, NULL: read from /proc when needed */
	uint64_t life_ts;	/* its exec, 0: it began before we did */
	struct jt_late late;	/* what a late perf-map line may name */
	struct jt_hash threads;	/* tid -> its name as last written (JT_COMM_LEN bytes) */
	struct jt_hash interp;	/* a JVM's Method * -> struct jt_method of its interpreted frames */
	uint8_t mono;		/* 0: not looked up in its mappings since read, else PROC_*MONO */
	/* its last JT_UNLOADED_KEPT unloaded agent methods, oldest first from unloaded_at
	 * (NULL until its first unload) */
	struct jt_method **unloaded;
	unsigned int nr_unloaded, unloaded_at;
};

enum { PROC_NOT_MONO = 1, PROC_MONO };

/*
 * A perf-map line that named code samples had met unnamed, held until every line read
 * with it has been seen: another line for the same addresses among them would say the
 * code there changed while nothing named it, and then neither is written as late.
 */
struct pending_late {
	uint32_t pid;
	struct jt_method *m;	/* held (late_pending) until written or given up */
	uint64_t from_ts;
	uint64_t ts;		/* the line's */
};

#define PENDING_LATE_MAX 4096

struct jt_collector {
	const char *proc_root;
	size_t max_perfmap_methods;
	struct jt_sink sink;
	struct jt_hash procs;	/* pid -> struct proc */
	struct proc *last;	/* the one found last: a burst of calls is one process's */
	struct jt_ucopy ucopy;	/* what each thread's stack copies need */
	struct jt_methods methods;
	struct jt_symbols *symbols;
	struct jt_membound *mem;
	bool own_symbols;	/* symbols is ours to free */
	struct jt_hash ksyms;	/* kallsyms index -> log symbol id */
	struct jt_hotspots hotspots;	/* the JVMs whose frames a copied stack walks through */
	uint64_t next_module_id;
	uint64_t next_symbol_id;
	struct jt_collector_stats st;
	struct pending_late *pending;	/* in ts order */
	size_t nr_pending;
	union {			/* a sample or off-CPU record is built here, frames in place */
		struct jt_rec_offcpu off;
		char bytes[sizeof(struct jt_rec_offcpu) +
			   (2 * JT_MAX_FRAMES + 1) * sizeof(struct jt_frame)];
	} sample;
};

/* What taking methods out of a process's code map did. */
struct evict_ctx {
	struct proc *p;
	size_t evicted;
	uint64_t ts;		/* when, 0: the process's code is forgotten whole */
};

/* Code to make live: from a code-load event, or a parent's code copied at a fork. */
struct code {
	uint64_t ts, id, start, size;
	uint32_t unsure_us;	/* its time is known only to (ts, ts + this] */
	uint8_t src;
	const char *name;
	uint32_t name_len;
};

/* procdefs.c: what defines processes and threads in the log */
int jt_coll_proc_define(struct jt_collector *c, struct proc *p, uint64_t ts);
void jt_coll_set_comm(struct proc *p, const char *comm);
int jt_coll_thread_define(struct jt_collector *c, struct proc *p, const struct jt_event *ev);

/* livecode.c: the code live in each process, its methods' definitions, late names */
bool jt_coll_in_ids(const struct proc *p, const struct jt_method *m);
void jt_coll_method_let_go(struct proc *p, struct jt_method *m);
void jt_coll_on_evict(void *ctx, struct jt_method *m);
int jt_coll_method_define(struct jt_collector *c, struct proc *p, struct jt_method *m,
			  uint64_t ts);
int jt_coll_add_code(struct jt_collector *c, struct proc *p, const struct code *k);
void jt_coll_late_release(struct jt_collector *c, const struct pending_late *l);
int jt_coll_late_flush(struct jt_collector *c, uint64_t ts, uint32_t pid);
int jt_coll_on_code_load(struct jt_collector *c, struct proc *p, const struct jt_event *ev);
int jt_coll_on_code_move(struct jt_collector *c, struct proc *p, const struct jt_event *ev);
int jt_coll_on_code_lines(struct jt_collector *c, struct proc *p, const struct jt_event *ev);
int jt_coll_on_code_inline(struct jt_collector *c, struct proc *p, const struct jt_event *ev);
void jt_coll_pieces_forget(struct proc *p);
int jt_coll_on_call(struct jt_collector *c, struct proc *p, const struct jt_event *ev);
int jt_coll_on_unload(struct jt_collector *c, struct proc *p, const struct jt_event *ev);

/* frames.c: a sample's or off-CPU record's stack */
void jt_coll_interp_forget(struct proc *p);
/* Let go of the unloaded methods p keeps for late calls (livecode.c). */
void jt_coll_unloaded_forget(struct proc *p);
int jt_coll_stack_build(struct jt_collector *c, struct proc *p, const struct jt_event *ev,
			struct jt_rec_sample *rec);

#endif
