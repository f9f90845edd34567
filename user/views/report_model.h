/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the report's files share, and only they (report.h is the command's): the model a
 * log is added up into (per method, process and thread: samples, calls, off-CPU time),
 * read by the text, JSON and --diff renderers through the ranked rows of its tables.
 */
#ifndef JT_REPORT_MODEL_H
#define JT_REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "base/xout.h"
#include "log/source.h"
#include "views/report.h"
#include "views/stacks.h"

#define JT_REPORT_NR_OFFS 3	/* hottest offsets shown per method */

struct jt_report_offc {
	uint64_t off, n;
	uint64_t src;		/* its source line (JT_REPORT_SRC_*), known at the end */
};

/*
 * The source line of an offset, as a hash value: file + 1 << 32 | line, or which of the
 * two kinds of not knowing. Every sample there must agree for the line to be shown: one
 * name may be several methods (code compiled again, other processes), each with its lines
 * or none.
 */
#define JT_REPORT_SRC_NONE 1	/* a sample there whose method has no line for it */
#define JT_REPORT_SRC_MIXED 2	/* samples there from methods whose lines disagree */
#define JT_REPORT_SRC_KNOWN(v) ((v) >> 32)

/*
 * Time off the CPU (off-CPU records) by state, enum jt_off_state: ns and the waits they
 * stand for; [0]: every state.
 */
struct jt_report_offtime {
	uint64_t ns[JT_OFF_MAX], n[JT_OFF_MAX];
};

/* A method (an interned name) in one process, or over every process. */
struct jt_report_entry {
	uint32_t name;
	uint64_t self, total;
	uint64_t calls, incl_ns, excl_ns;
	bool has_calls;
	/* off-CPU records whose stack holds it (once each, recursion or not): time, waits */
	uint64_t wait_ns, waits;
	uint64_t inner_ns;	/* ... of those, whose innermost user frame it is */
	struct jt_hash offs;	/* offset -> self samples there, held as the pointer's value */
	struct jt_hash srcs;	/* offset -> its line (JT_REPORT_SRC_*), if the log has lines */
	struct jt_report_offc top[JT_REPORT_NR_OFFS];
};

/* A process's methods and times, a thread's (--threads), or the whole log's. */
struct jt_report_section {
	uint32_t pid;
	uint32_t tid;		/* a thread's section (--threads); 0 for a process's */
	uint64_t samples, calls;
	struct jt_report_offtime off;
	struct jt_hash entries;	/* name -> struct jt_report_entry */
};

/* A thread's time: on the CPU (its samples) and off it. */
struct jt_report_wall {
	uint32_t pid, tid;
	uint64_t samples;
	struct jt_report_offtime off;
};

/* One log added up, with the options it was read with: what the renderers read. */
struct jt_report_model {
	const struct jt_report_opts *o;
	struct jt_logsrc src;	/* the log, read with o's filter; its definitions and drops */
	struct jt_stacks *stk;
	struct jt_hash procs;	/* pid -> struct jt_report_section */
	struct jt_report_section all;
	struct jt_hash threads;	/* pid << 32 | tid -> struct thread (report_model.c) */
	struct jt_hash tsecs;	/* --threads: pid << 32 | tid -> struct jt_report_section */
	uint64_t *seen;		/* by name: the last record (stamp) that counted it */
	size_t cap_seen;
	uint64_t stamp;		/* the record being added up by name, from 1 */
	struct jt_hash walls;	/* pid << 32 | tid -> struct jt_report_wall, every thread's */
	struct jt_report_wall *last_wall; /* the last sample's: a thread's samples come in runs */
	struct jt_hash mstats;	/* method id -> struct mstat (report_model.c) */
	uint64_t samples, enters, leaves;
	uint64_t leave_no_enter;	/* a leave whose enter the log does not hold */
	uint64_t closed_by_outer;	/* activations left without their own leave */
	uint64_t open_at_end;		/* activations still open when the log ends */
	uint64_t summed;		/* calls summed in the process (--calls-summary) */
	uint64_t spans;			/* calls logged alone for their length (--calls-min) */
	bool any_calls;
	bool any_offcpu;	/* the log recorded off-CPU time, or holds a record of it */
};

/* Which of a section's tables: hot methods, calls, off-CPU time. */
enum jt_report_table {
	JT_REPORT_HOT,		/* by self or total samples (o->sort) */
	JT_REPORT_CALLS,	/* by inclusive time */
	JT_REPORT_OFF,		/* by time off the CPU */
};

/* Said by every report file that runs out of memory: one wording for the one failure. */
extern const char report__nomem[];

/* ---- the model: report_model.c ---- */

/* Read one log (r->o->path, with r->o's filter) and add it up. Returns 0 or -1 (reported). */
int report__load(struct jt_report_model *r);
/* Free what report__load made, also after it failed part way. */
void report__free(struct jt_report_model *r);

/* ---- ranking and the figures the renderers share: report_rank.c ---- */

/* The rows (struct jt_report_entry) of one of the section's tables in order, at most top. */
void **report__rows(const struct jt_report_model *r, const struct jt_report_section *s,
		    enum jt_report_table table, size_t *n);
/* The process sections in order, at most procs of them; *n gets the count. */
void **report__sections(const struct jt_report_model *r, size_t *n);
/* --threads: the threads of process pid, the busiest first; *n gets the count. */
void **report__threads_of(const struct jt_report_model *r, uint32_t pid, size_t *n);
/* The time of process pid's threads, the longest first, at most top of them. */
void **report__walls_of(const struct jt_report_model *r, uint32_t pid, size_t *n);
/* How many processes have a section, --procs aside. */
size_t report__nr_sections(const struct jt_report_model *r);
/* The CPU time samples stand for: 1/hz s each. 0 when the log was not sampled. */
uint64_t report__cpu_ns(const struct jt_report_model *r, uint64_t samples);
/* n in percent of of; 0 when of is. */
double report__pct(uint64_t n, uint64_t of);
/* When recording began, in UTC; "?" when the header's clocks add up to no time at all. */
void report__start(const struct jt_report_model *r, char *buf, size_t cap);
/* Seconds from the start of recording (the header's) to the log's latest record. */
double report__duration_s(const struct jt_report_model *r);
/* The file of a known source line (JT_REPORT_SRC_KNOWN). */
const char *report__src_file(const struct jt_report_model *r, uint64_t src);

/* ---- the renderers: report_text.c, report_json.c, report_diff.c ---- */

/* The report as text. Returns 0 or -ENOMEM (reported). */
int report__text(FILE *out, const struct jt_report_model *r);
/* The log's path after label, when and where it was recorded, its samples and losses. */
void report__text_header(FILE *out, const struct jt_report_model *r, const char *label,
			 const char *indent);
/* s between before and after, its control bytes escaped (see report_text.c). */
void report__text_line(FILE *out, const char *before, const char *s, const char *after);
/* The report as JSON. Returns 0 or -errno, reported (out of memory by report__rows()...). */
int report__json(FILE *out, const struct jt_report_model *r);
/* "log": PATH, when and where it was recorded, "lost": {...}, without braces around. */
void report__json_log(struct jt_xout *x, const struct jt_report_model *r);
/* s as a JSON string, escaped as every JSON jitrace writes. */
void report__json_str(struct jt_xout *x, const char *s);
/* --diff: what moved from o->base to o->path, as text or JSON. Returns 0 or 1 (reported). */
int report__diff(FILE *out, const struct jt_report_opts *o);

#endif
