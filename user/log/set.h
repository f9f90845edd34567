/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Logs read as one recording: a log, a directory of segments (a flight recorder's, or any
 * *.jtl files), or several logs, their records handed on in time order. What the log
 * source (log/source.h) reads through.
 *
 * One log is read as it is. Several are merged by time, each opened only when the merge
 * reaches its start (segments follow each other, so about one is open at a time). A
 * segment that begins at the last record of one already read, of the same host, clock
 * offset and naming (segment.h), continues its recording: its ids are that recording's,
 * and its definitions of ids the recording has defined already (each segment defines
 * again what it uses) are passed over, so a reader sees each defined once and a call
 * entered in one segment and left in the next matches. Each other recording's ids are
 * moved up by JT_LOGSET_ID_MAX times its number, so that no two recordings' ids meet.
 * --last and --from/--to decide which logs are read at all: a segment whose successor
 * begins before the time asked for is not opened.
 */
#ifndef JT_LOGSET_H
#define JT_LOGSET_H

#include "log/filter.h"
#include "log/log.h"

/* Ids of a log read with others stay below this (the rest of the 56 bits is the others'). */
#define JT_LOGSET_ID_MAX (1ULL << 40)

struct jt_logset;

/*
 * Open path (a log or a directory of them) and filter->more, read with filter's flags, and
 * resolve filter's times against them all (filter->end_ns for --last, then
 * jt_filter__start). NULL on error (reported, naming the file).
 */
struct jt_logset *jt_logset__open(const char *path, struct jt_filter *filter);
void jt_logset__close(struct jt_logset *s);
/*
 * The recording's header: one log's own; for several, the earliest's with the earliest
 * start_ns and every log's flags.
 */
const struct jt_log_header *jt_logset__header(const struct jt_logset *s);
/*
 * The next record in time order, checked as jt_logr__next checks it, valid until the next
 * call; NULL at the end or on an error. A log that ends truncated, not the last one read,
 * is said on stderr as its end is reached.
 */
const struct jt_rec_hdr *jt_logset__next(struct jt_logset *s);
/* As jt_logr__state and jt_logr__why; why names the file when several are read. */
enum jt_logr_state jt_logset__state(const struct jt_logset *s);
const char *jt_logset__why(const struct jt_logset *s);
/* How many logs are in the set, and how many were read (or are being read). */
size_t jt_logset__logs(const struct jt_logset *s);
size_t jt_logset__read(const struct jt_logset *s);

#endif
