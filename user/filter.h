/* SPDX-License-Identifier: GPL-2.0 */
/* Which part of a log a view (report, flame graph) keeps: --pid, --comm, --from, --to. */
#ifndef JT_FILTER_H
#define JT_FILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "logview.h"

struct jt_filter {
	bool has_pid;
	uint32_t pid;
	const char *comm;	/* the process's comm, exact; NULL: any */
	double from, to;	/* seconds since the recording began; to < 0: to the end */
	uint64_t from_ns, to_ns;	/* absolute, set by jt_filter__start */
};

/* No filtering. */
void jt_filter__init(struct jt_filter *f);
/* Parse one option's value: what is "--pid", "--comm", "--from" or "--to". 0 or -EINVAL
 * (reported with the value). */
int jt_filter__parse(struct jt_filter *f, const char *what, const char *arg);
/* Resolve the time range against the log's start (the header's start_ns). */
void jt_filter__start(struct jt_filter *f, uint64_t start_ns);
/* Whether a sample or call of pid at ts is kept; lv says the process's comm at that time. */
bool jt_filter__keep(const struct jt_filter *f, const struct jt_lv *lv, uint64_t ts,
		     uint32_t pid);
/* Whether any filter is set, and a short description of them ("pid 42, 1.0 s to 2.0 s"). */
bool jt_filter__describe(const struct jt_filter *f, char *buf, size_t cap);

#endif
