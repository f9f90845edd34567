/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which part of a log a view (report, flame graph, exports) keeps: --pid, --comm, --from,
 * --to, parsed the same way by every command.
 */
#ifndef JT_FILTER_H
#define JT_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "log/view.h"

#define JT_FILTER_MAX_PIDS 64

struct jt_filter {
	uint32_t pids[JT_FILTER_MAX_PIDS];	/* only these processes (nr_pids 0: all) */
	int nr_pids;
	const char *comm;	/* the process's comm, exact; NULL: any */
	double from, to;	/* seconds since the recording began; to < 0: to the end */
	double last;		/* --last: only the recording's last seconds (< 0: all) */
	uint64_t end_ns;	/* the recording's last record's time, for --last (log/set.h) */
	uint64_t from_ns, to_ns;	/* absolute, set by jt_filter__start */
	bool salvage;		/* --salvage: read past what breaks the log (JT_LOGR_SALVAGE) */
	/* more logs (or directories of them), read with the view's own as one recording */
	char *const *more;
	int nr_more;
};

/* getopt_long codes and entries of the filter's options, for a command's table */
enum { JT_FILTER_OPT_COMM = 0x200, JT_FILTER_OPT_FROM, JT_FILTER_OPT_TO, JT_FILTER_OPT_SALVAGE,
       JT_FILTER_OPT_LAST };
#define JT_FILTER_LONGOPTS                                                   \
	{ "pid", required_argument, NULL, 'p' },                             \
	{ "comm", required_argument, NULL, JT_FILTER_OPT_COMM },             \
	{ "from", required_argument, NULL, JT_FILTER_OPT_FROM },             \
	{ "to", required_argument, NULL, JT_FILTER_OPT_TO },                 \
	{ "salvage", no_argument, NULL, JT_FILTER_OPT_SALVAGE },              \
	{ "last", required_argument, NULL, JT_FILTER_OPT_LAST }

/* No filtering. */
void jt_filter__init(struct jt_filter *f);
/* The jt_logr__open_flags() flags the view's log is read with. */
unsigned int jt_filter__read_flags(const struct jt_filter *f);
/*
 * Parse one option's value: what is "--pid" (PID[,PID...]), "--comm", "--from", "--to" or
 * "--last".
 * 0 or -EINVAL (reported with the value).
 */
int jt_filter__parse(struct jt_filter *f, const char *what, const char *arg);
/* The same for getopt_long's c: 1 if c is not a filter option, else 0 or -EINVAL. */
int jt_filter__option(struct jt_filter *f, int c, const char *arg);
/* Once every option is in: --to must be after --from. 0 or -EINVAL (reported). */
int jt_filter__check(const struct jt_filter *f);
/*
 * Resolve the time range against the log's start (the header's start_ns); --last against
 * end_ns, which the log set sets first.
 */
void jt_filter__start(struct jt_filter *f, uint64_t start_ns);
/* Whether a sample or call of pid at ts is kept; lv says the process's comm at that time. */
bool jt_filter__keep(const struct jt_filter *f, const struct jt_lv *lv, uint64_t ts,
		     uint32_t pid);
/* Whether any filter is set, and a short description of them ("pid 42, 1.0 s to 2.0 s"). */
bool jt_filter__describe(const struct jt_filter *f, char *buf, size_t cap);

#endif
