/* SPDX-License-Identifier: GPL-2.0 */
/* Integration-test helpers: run jitrace and the toy JIT, load a log, check its promises. */
#ifndef JT_ITEST_LIB_H
#define JT_ITEST_LIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "jt_log_format.h"

struct it_log {
	struct jt_log_header hdr;
	struct jt_rec_hdr **recs;	/* copies, in file order */
	size_t n;
	int state;			/* enum jt_logr_state at the end */
	const struct jt_rec_method **methods;	/* by id; [0] unused */
	size_t nr_methods;
	const struct jt_rec_symbol **symbols;	/* by id; [0] unused */
	size_t nr_symbols;
	const struct jt_rec_module **modules;	/* by id; [0] unused */
	size_t nr_modules;
};

/* Load every record of path; fails the test if the log cannot be opened. */
void it_log_load(const char *path, struct it_log *log);
void it_log_free(struct it_log *log);
const struct jt_rec_method *it_method(const struct it_log *log, uint64_t id);
const struct jt_rec_symbol *it_symbol(const struct it_log *log, uint64_t id);
/* A kernel frame: an address, or a symbol of the kernel (module 0). */
bool it_frame_is_kernel(const struct it_log *log, const struct jt_frame *f);
/* A method's or symbol's name (or the anonymous memory's a user address lies in) into buf;
 * else the address, and -1. */
int it_frame_name(const struct it_log *log, const struct jt_frame *f, char *buf, size_t len);
/* Whether frame i of s is called name (a symbol or a method); "*PART": its name holds PART. */
bool it_frame_is(const struct it_log *log, const struct jt_rec_sample *s, unsigned int i,
		 const char *name);
/* The first frame of s at or after from called name, or s->nr_frames. */
unsigned int it_find_frame(const struct it_log *log, const struct jt_rec_sample *s,
			   unsigned int from, const char *name);
/*
 * Of pid's samples whose leaf is called leaf: how many (*n), and how many hold the frames
 * chain[0..nr) after it, in this order, each directly above the last if adjacent (*whole).
 * _of: of records of type (JT_REC_SAMPLE, or JT_REC_OFFCPU: the stacks threads left with).
 */
void it_count_chains(const struct it_log *log, uint32_t pid, const char *leaf,
		     const char *const *chain, unsigned int nr, bool adjacent, uint64_t *n,
		     uint64_t *whole);
void it_count_chains_of(const struct it_log *log, uint16_t type, uint32_t pid, const char *leaf,
			const char *const *chain, unsigned int nr, bool adjacent, uint64_t *n,
			uint64_t *whole);
/* Whether m (which may be NULL) is called exactly name. */
bool it_name_is(const struct jt_rec_method *m, const char *name);
/* Samples of pid at or after ts whose leaf method is called name. */
uint64_t it_count_leaf(const struct it_log *log, uint32_t pid, uint64_t after, const char *name);
/* Samples of pid whose leaf method's name contains part. */
uint64_t it_count_leaf_with(const struct it_log *log, uint32_t pid, const char *part);
/* The method a sample's leaf user frame is in, or NULL. */
const struct jt_rec_method *it_leaf_method(const struct it_log *log,
					   const struct jt_rec_sample *s);
/*
 * The log's promises: timestamps never decrease; every method and module is defined once,
 * before any record that references it; a clean end record; a drop record for every kind.
 */
void it_check_promises(const struct it_log *log);
/* Every record lost: the drop records' counts, less frames left unnamed and stacks cut. */
uint64_t it_drops_total(const struct it_log *log);
/* Frames or records of one drop kind, over the log. */
uint64_t it_drops_of(const struct it_log *log, unsigned int what);

/*
 * Statistical asserts over sampled data. A share estimated from n samples is off by chance
 * by up to 4.5 standard errors (sqrt(p(1-p)/n)), which a correct run exceeds about once in
 * 150,000; the caller adds what the program or runtime itself can move it by, and says so
 * beside the call. Each prints its numbers and fails with them.
 */
#define IT_MIN_SAMPLES 100
/* k of n is want, within systematic plus the chance error; n at least IT_MIN_SAMPLES. */
void it_assert_share_near(const char *what, uint64_t k, uint64_t n, double want,
			  double systematic);
/* k of n is at least floor, less the chance error; why says where floor comes from. */
void it_assert_share_at_least(const char *what, uint64_t k, uint64_t n, double floor,
			      const char *why);
/* Count enter or leave records of pid whose method is called name. */
uint64_t it_count_calls(const struct it_log *log, uint32_t pid, uint16_t type, const char *name);
/* Calls of pid's method name the log summed (callsum records), and their times. */
uint64_t it_summed_calls(const struct it_log *log, uint32_t pid, const char *name,
			 uint64_t *incl, uint64_t *excl);

/* What the toy JIT printed. */
struct it_toy {
	pid_t pid;
	char names[64][64];
	uint64_t calls[64];
	int nr_calls;
	uint64_t switch_begin, switch_end;
	bool done;
};
void it_toy_parse(const char *path, struct it_toy *t);

/* A scratch directory for this test program, and paths inside it. */
const char *it_dir(void);
char *it_path_dup(const char *name);
/* The scratch directory's NAME.EXT, malloc'd: a run's log, output and errors by one name. */
char *it_path_ext(const char *name, const char *ext);

/* Run argv with stdout and stderr sent to files (NULL: inherit). Returns the pid. */
pid_t it_spawn(char *const argv[], const char *out, const char *err);
/* Wait for pid; returns its exit status, or 128+signal. */
int it_wait(pid_t pid);
/* Run and wait. */
int it_run(char *const argv[], const char *out, const char *err);
/* Wait until file contains text (up to timeout_ms); true if it did. */
bool it_wait_for_text(const char *file, const char *text, int timeout_ms);

/* The whole file at path, NUL-terminated (the test fails if it cannot be read). */
char *it_slurp(const char *path);

/* What jitrace said at the end of the samples' stack copies (0 each if it said nothing). */
struct it_copies {
	unsigned long long walked;	/* copies walked */
	unsigned long long fp_walks;	/* of them, with the kernel's frame-pointer walk */
	unsigned long long cuts;	/* times a thread's copy was cut */
};

/*
 * Run argv, a jitrace record into log_path, which must succeed: what it says goes to
 * log_path.err, shown, and what it said of the samples' stack copies into *said; none may be
 * larger than its thread's copy was cut to once the sampler was told.
 */
void it_record_copies(char *const argv[], const char *log_path, struct it_copies *said);
/*
 * whole walks of a recording reached their stack's end by the copy: unless fewer than a
 * thread's first window (UCOPY_QUICK), fewer than half the walks had the kernel's walk.
 */
void it_assert_fp_walk_dropped(const struct it_copies *said, uint64_t whole);

/* Share files of recordings left in /run/jitrace for pid's kind ("dotnet", "jvm"). */
int it_shares_left(const char *kind, pid_t pid);

/* Every program runs only the tests JT_TEST_FILTER names, if set (a glob; see lib.c). */

/*
 * JT_TEST_SCALE=N (a whole number, 1 by default): timed workloads run N times as long, where
 * everything runs slower (a guest kernel under emulation), so that what a process spends
 * once (exec, the loader, a runtime's start) weighs in a run as much as on a host.
 */
unsigned int it_scale(void);
/* v times it_scale(), in decimal into buf (a program's argument); returns buf. */
char *it_scaled(char *buf, size_t len, unsigned long v);

#define IT_JITRACE "build/jitrace"
#define IT_TOYJIT "build/toyjit"

#endif
