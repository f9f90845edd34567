// SPDX-License-Identifier: GPL-2.0
/* The filters shared by the views of a log: process id, command name, time range. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/filter.h"
#include "log/log.h"
#include "base/util.h"

void jt_filter__init(struct jt_filter *f)
{
	*f = (struct jt_filter){ .to = -1, .last = -1, .to_ns = UINT64_MAX };
}

static int parse_secs(const char *what, const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !isfinite(v) || v < 0) {
		jt_err("%s: '%s' is not a number of seconds (0 or more)", what, arg);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* PID[,PID...], added to those already given. */
static int parse_pids(struct jt_filter *f, const char *arg)
{
	const char *p = arg;
	unsigned long v;
	char *end;

	do {
		errno = 0;
		v = strtoul(p, &end, 10);
		if (errno || end == p || (*end && *end != ',') || *p == '-' || !v ||
		    v > INT_MAX) {
			jt_err("--pid: '%s' is not a process id, or a list of them", arg);
			return -EINVAL;
		}
		if (f->nr_pids == JT_FILTER_MAX_PIDS) {
			jt_err("--pid: at most %d processes", JT_FILTER_MAX_PIDS);
			return -EINVAL;
		}
		f->pids[f->nr_pids++] = v;
		p = end + 1;
	} while (*end);
	return 0;
}

int jt_filter__parse(struct jt_filter *f, const char *what, const char *arg)
{
	if (!strcmp(what, "--pid"))
		return parse_pids(f, arg);
	if (!strcmp(what, "--comm")) {
		if (!arg[0] || strlen(arg) > 15) {
			jt_err("--comm: '%s' is not a command name (1 to 15 characters)", arg);
			return -EINVAL;
		}
		f->comm = arg;
		return 0;
	}
	if (!strcmp(what, "--from"))
		return parse_secs(what, arg, &f->from);
	if (!strcmp(what, "--to"))
		return parse_secs(what, arg, &f->to);
	if (!strcmp(what, "--last"))
		return parse_secs(what, arg, &f->last);
	jt_err("no filter %s", what);
	return -EINVAL;
}

unsigned int jt_filter__read_flags(const struct jt_filter *f)
{
	return f->salvage ? JT_LOGR_SALVAGE : 0;
}

int jt_filter__option(struct jt_filter *f, int c, const char *arg)
{
	switch (c) {
	case 'p':
		return jt_filter__parse(f, "--pid", arg);
	case JT_FILTER_OPT_COMM:
		return jt_filter__parse(f, "--comm", arg);
	case JT_FILTER_OPT_FROM:
		return jt_filter__parse(f, "--from", arg);
	case JT_FILTER_OPT_TO:
		return jt_filter__parse(f, "--to", arg);
	case JT_FILTER_OPT_LAST:
		return jt_filter__parse(f, "--last", arg);
	case JT_FILTER_OPT_SALVAGE:
		f->salvage = true;
		return 0;
	default:
		return 1;
	}
}

int jt_filter__check(const struct jt_filter *f)
{
	if (f->to >= 0 && f->to <= f->from) {
		jt_err("--to %g is not after --from %g", f->to, f->from);
		return -EINVAL;
	}
	return 0;
}

void jt_filter__start(struct jt_filter *f, uint64_t start_ns)
{
	uint64_t last_ns;

	f->from_ns = start_ns + (uint64_t)(f->from * 1e9);
	f->to_ns = f->to < 0 ? UINT64_MAX : start_ns + (uint64_t)(f->to * 1e9);
	/* the last seconds of what was recorded, within --from and --to if given too */
	if (f->last < 0 || f->last * 1e9 >= (double)f->end_ns)
		return;
	last_ns = (uint64_t)(f->last * 1e9);
	if (f->end_ns - last_ns > f->from_ns)
		f->from_ns = f->end_ns - last_ns;
}

bool jt_filter__keep(const struct jt_filter *f, const struct jt_lv *lv, uint64_t ts,
		     uint32_t pid)
{
	const struct jt_lv_proc *p;
	int i;

	if (ts < f->from_ns || ts >= f->to_ns)
		return false;
	if (f->nr_pids) {
		for (i = 0; i < f->nr_pids && f->pids[i] != pid; i++)
			;
		if (i == f->nr_pids)
			return false;
	}
	if (f->comm) {
		p = jt_lv__proc(lv, pid);
		if (!p || strcmp(p->comm, f->comm))
			return false;
	}
	return true;
}

bool jt_filter__describe(const struct jt_filter *f, char *buf, size_t cap)
{
	size_t n = 0;
	int i;

	buf[0] = '\0';
#define ADD(...) (n += snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__))
	for (i = 0; i < f->nr_pids; i++)
		ADD("%s%u", i ? "," : n ? ", pid " : "pid ", f->pids[i]);
	if (f->comm)
		ADD("%scomm %s", n ? ", " : "", f->comm);
	if (f->from > 0 || f->to >= 0) {
		ADD("%sfrom %g s", n ? ", " : "", f->from);
		if (f->to >= 0)
			ADD(" to %g s", f->to);
	}
	if (f->last >= 0)
		ADD("%slast %g s", n ? ", " : "", f->last);
#undef ADD
	return n > 0;
}
