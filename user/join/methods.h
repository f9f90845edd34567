/* SPDX-License-Identifier: GPL-2.0 */
/* Methods (named code ranges) and the table that gives each its one definition in the log. */
#ifndef JT_METHODS_H
#define JT_METHODS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/sink.h"
#include "host/monocode.h"

/*
 * A host may hold millions of these (100 runtimes of 10,000 methods each), so they are
 * packed: no pid (its process holds it), and a short name fits one 64-byte malloc chunk.
 */
struct jt_method {
	uint64_t log_id;	/* 0 until its definition is written */
	uint64_t start;
	uint64_t size;
	uint64_t load_ts;	/* when the code became live */
	uint64_t agent_id;	/* the runtime's id, 0 if none */
	/* It took the place of other code at some time in (load_ts, load_ts + this]: a
	 * sample in that span cannot be told apart (perf-map lines; 0 when exact). */
	uint32_t unsure_us;
	uint8_t src;		/* enum jt_src */
	bool has_lines:1;	/* its process keeps its source lines until it is defined */
	bool late_pending:1;	/* a late name of it waits to be written (livecode.c) */
	bool unloaded:1;	/* unloaded, kept for calls that name it late (livecode.c) */
	/*
	 * HotSpot's blob of this code (its kind + 1, 0: not read), or a Mono body's shape (a
	 * process is one runtime or the other), read at its first walk while the process lived
	 * and kept with it: code replaced at its address is another method, read afresh
	 * (frames.c).
	 */
	uint8_t hs_kind;
	union {
		struct {
			int32_t hs_frame_complete;
			uint32_t hs_frame_size;
			uint64_t hs_begin, hs_end;
		};
		struct jt_mono_code mono;
	};
	uint16_t name_len;
	char name[];
};

/* Names longer than UINT16_MAX are cut. */
struct jt_method *jt_method__new(uint64_t start, uint64_t size, uint64_t load_ts,
				 uint64_t agent_id, uint8_t src, const char *name,
				 uint32_t name_len);
bool jt_method__same_code(const struct jt_method *a, const struct jt_method *b);
/*
 * The bytes a method of a name_len-byte name holds, for the recorder's memory bound
 * (membound.h): its malloc chunk and its slots in its process's code map and id array.
 */
size_t jt_method__cost(uint32_t name_len);

/*
 * The method table hands out log ids and writes each method's definition exactly once,
 * at the time of its first reference, so that every reference follows its definition.
 */
struct jt_methods {
	uint64_t next_id;	/* 0 in a zeroed table means 1 */
	uint64_t defined;	/* definitions written */
};

/* Ensure m, code of process pid, is defined in the log; ts is the time of the referencing
 * record. */
int jt_methods__define(struct jt_methods *t, struct jt_method *m, uint32_t pid, uint64_t ts,
		       const struct jt_sink *sink);

#endif
