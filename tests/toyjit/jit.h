/* SPDX-License-Identifier: MIT */
/* The toy JIT: W^X code regions, the one function frame it emits, bodies, agent registration. */
#ifndef TOYJIT_JIT_H
#define TOYJIT_JIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "x86.h"

struct toy_sink;

#define TOY_NAME_MAX 64
#define TOY_REGIONS_MAX 4

/* Every generated function has this C signature. */
typedef uint64_t (*toy_entry_t)(uint64_t arg);

struct toy_fn {
	/*
	 * The generated code reads id and increments calls through their absolute addresses,
	 * so a toy_fn never moves once code refers to it.
	 */
	uint64_t id;	/* agent method id, 0 until loaded */
	uint64_t calls;	/* entries, counted by the function's own code */
	char name[TOY_NAME_MAX];
	bool instrumented;	/* calls jitrace_method_enter/leave itself */
	bool loaded;
	uint8_t *code;
	size_t size;
	size_t body_off;	/* where the body begins, after the entry sequence */
	size_t tail_off;	/* where the return sequence begins */
};

/* One anonymous mapping, either RW (being written) or RX (runnable), never both. */
struct toy_region {
	uint8_t *mem;
	size_t size;
};

struct toy_jit {
	struct toy_fn *fns;	/* fixed capacity: code holds pointers into it */
	size_t nfns;
	size_t max_fns;
	struct toy_region regions[TOY_REGIONS_MAX];
	size_t nregions;
	bool instrument_all;	/* -i */
	bool list_methods;	/* a "method" line per load (and a "debug" line with a jitdump) */
	struct toy_sink *sink;	/* where loads are told: the agent, or files (sink.h) */
};

/* sink: where loads are told (the agent unless --jitdump or --perf-map). */
int jit__init(struct toy_jit *j, size_t max_fns, bool instrument_all, struct toy_sink *sink);
/* Unloads whatever is still loaded and unmaps every region. */
void jit__destroy(struct toy_jit *j);
/* A new function record; instrumented if asked or if -i. */
struct toy_fn *jit__fn(struct toy_jit *j, const char *name, bool instrumented);
/* A new RW region of at least size bytes. */
struct toy_region *jit__map(struct toy_jit *j, size_t size);
int jit__protect(struct toy_region *r, bool exec);
/*
 * Tell of finished, executable code: to the agent, or in the sink's jitdump (debug info at
 * lines 10(k+1) to 10(k+1)+2 for the k-th function made) and perf map. Prints its method line.
 */
int jit__load(struct toy_jit *j, struct toy_fn *fn);
void jit__unload(struct toy_jit *j, struct toy_fn *fn);
/* A "calls NAME=COUNT" line for every instrumented function. */
void jit__print_calls(const struct toy_jit *j);
toy_entry_t toyfn__entry(const struct toy_fn *fn);

/*
 * Function shape:
 *   push rbp; mov rbp, rsp; push rbx; push r12   (rsp is 16-byte aligned from here on)
 *   mov rbx, rdi; xor r12d, r12d                 (rbx: the argument, r12: the result)
 *   [instrumented: jitrace_method_enter(*&fn->id)]
 *   inc qword [&fn->calls]
 *   body
 *   [instrumented: jitrace_method_leave(*&fn->id)]
 *   mov rax, r12; pop r12; pop rbx; pop rbp; ret
 * toyfn__begin aligns the start to 16 bytes with int3 and sets fn->code and fn->body_off;
 * toyfn__end sets fn->tail_off and fn->size and fails (with a message) if the buffer
 * overflowed.
 */
void toyfn__begin(struct x86_buf *b, struct toy_fn *fn);
int toyfn__end(struct x86_buf *b, struct toy_fn *fn);
/* Pad a finished function with int3 to exactly size bytes (never shrinks it). */
int toyfn__pad_to(struct x86_buf *b, struct toy_fn *fn, size_t size);

/* Spin units * iters iterations of `dec rcx; jnz`; align puts the inner loop on 64 bytes. */
void toyfn__spin(struct x86_buf *b, uint32_t units, uint32_t iters, bool align);
/* The same, aligned, with `sub rcx, 1` for `dec rcx`: other bytes, one longer, same speed. */
void toyfn__spin_sub(struct x86_buf *b, uint32_t units, uint32_t iters);
/* Spin rbx iterations of the same inner loop, 64-byte aligned. */
void toyfn__spin_arg(struct x86_buf *b);
void toyfn__set_result(struct x86_buf *b, uint32_t value);
void toyfn__set_count(struct x86_buf *b, uint32_t count);	/* rbx = count */
/* Call a function (rel32 when in reach); accumulate adds its result to ours. */
void toyfn__call(struct x86_buf *b, const struct toy_fn *callee, bool accumulate);

/* Repeat what lies between begin and end rbx times (rbx ends at 0; none if it is 0). */
struct toy_loop {
	size_t top;
	size_t exit;
};
void toyfn__loop_begin(struct x86_buf *b, struct toy_loop *l);
void toyfn__loop_end(struct x86_buf *b, struct toy_loop *l);

#endif
