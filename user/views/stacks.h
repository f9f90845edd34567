/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Sampled stacks merged into one tree of named frames, a subtree per process: what the
 * report and the flame graph read. Each record adds 1 (a sample) or its weight (off-CPU
 * time). Frames are hashed by their reference while samples are added and named once per
 * distinct reference, so a million deep samples cost only hash probes; names are
 * interned, so a method's name is one number everywhere.
 */
#ifndef JT_STACKS_H
#define JT_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jt_log_format.h"
#include "log/view.h"

#define JT_STK_ROOT 0		/* node 0: every sample; its children are processes */
#define JT_STK_NONE UINT32_MAX

struct jt_stk_node {
	uint32_t parent;	/* JT_STK_NONE for the root */
	uint32_t name;		/* interned name; for a process node (depth 1): its pid */
	uint32_t child;		/* first child, JT_STK_NONE if none */
	uint32_t next;		/* next sibling, JT_STK_NONE if none */
	uint32_t depth;		/* 0 root, 1 process, 2 the outermost frame */
	uint64_t self;		/* samples (or weight) whose leaf is this node */
	uint64_t total;		/* samples (or weight) through this node */
};

struct jt_stacks;

struct jt_stacks *jt_stacks__new(void);
void jt_stacks__free(struct jt_stacks *s);

/*
 * Tell the tree about a record the logview has just taken in: a definition that replaces
 * an earlier one, or defines a reference already seen unresolved, forgets cached names.
 * Returns 0 or -ENOMEM (reported).
 */
int jt_stacks__saw(struct jt_stacks *s, const struct jt_rec_hdr *rec);

/* The interned name of a frame, as of what lv has seen; -ENOMEM (reported) on failure. */
int64_t jt_stacks__frame(struct jt_stacks *s, const struct jt_lv *lv, const struct jt_frame *f);

/* The interned name of an inlined scope of name (marked JT_LV_INLINED); -ENOMEM (reported). */
int64_t jt_stacks__inlined(struct jt_stacks *s, const char *name);

/*
 * Add a sample under its process. A method frame with inlined scopes there (log/view.h) is
 * the method's node and one node for each scope it inlined, innermost nearest the leaf. *leaf gets the leaf node (the process node for a sample
 * without frames). Returns 0 or -ENOMEM (reported).
 */
int jt_stacks__add(struct jt_stacks *s, const struct jt_lv *lv, const struct jt_rec_sample *smp,
		   uint32_t *leaf);
/*
 * The same for a record that weighs weight instead of 1 (off-CPU time: its microseconds).
 * A tree holds one kind of weight: samples or time, not both.
 */
int jt_stacks__add_weight(struct jt_stacks *s, const struct jt_lv *lv,
			  const struct jt_rec_sample *smp, uint64_t weight, uint32_t *leaf);
/*
 * Add weight under process pid as a one-frame stack named name (interned with kind): what
 * the log gives no frames for, as "[short waits]". Returns 0 or -ENOMEM (reported).
 */
int jt_stacks__add_named(struct jt_stacks *s, uint32_t pid, const char *name,
			 enum jt_lv_kind kind, uint64_t weight, uint32_t *leaf);

/* Sort every node's children by name (kind, then bytes), for stable output. */
void jt_stacks__sort(struct jt_stacks *s);

/*
 * The subtree under top in preorder without recursion (a crafted log's sample may be 65534
 * frames deep, more than the C stack holds): each node once on the way down (*leaving
 * false), children in order, and once on the way up (*leaving true). Start with
 * jt_stacks__walk_init; jt_stacks__walk_next returns the node, NULL when done.
 */
struct jt_stacks_walk {
	const struct jt_stacks *s;
	uint32_t top, idx;
	bool up;		/* idx is being left */
};

void jt_stacks__walk_init(struct jt_stacks_walk *w, const struct jt_stacks *s, uint32_t top);
const struct jt_stk_node *jt_stacks__walk_next(struct jt_stacks_walk *w, bool *leaving);

size_t jt_stacks__nr_nodes(const struct jt_stacks *s);
const struct jt_stk_node *jt_stacks__node(const struct jt_stacks *s, uint32_t idx);
size_t jt_stacks__nr_names(const struct jt_stacks *s);
/* An interned name: printable UTF-8, no control characters. */
const char *jt_stacks__name(const struct jt_stacks *s, uint32_t name, enum jt_lv_kind *kind);

/* "comm (pid)", or "[pid N]" when the log never named the process. */
void jt_stacks__proc_label(const struct jt_lv *lv, uint32_t pid, char *buf, size_t cap);

/*
 * Whether flame graphs need a root per process: the recording was system-wide, or more
 * than one process has samples.
 */
int jt_stacks__per_proc(const struct jt_stacks *s, uint32_t log_flags);

#endif
