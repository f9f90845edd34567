// SPDX-License-Identifier: GPL-2.0
/*
 * Chrome Trace Event export: balanced B/E pairs of calls and an X event per off-CPU wait,
 * written as the log is read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/chrome.h"
#include "export/common.h"
#include "log/source.h"
#include "base/util.h"

struct chrome {
	struct jt_logsrc src;
	struct jt_xcalls calls;		/* and the threads with waits, for their names */
	struct jt_xout o;
	uint64_t events;
	uint64_t waits;			/* off-CPU waits written (a sum of short ones: each) */
	uint64_t off_ns, short_ns;	/* their time, and that of sums of short waits in it */
};

/* A call opens (B) or closes (E). */
static int event(void *ctx, bool open, uint32_t pid, uint32_t tid, uint64_t id, uint64_t ts)
{
	struct chrome *c = ctx;
	char buf[JT_LOGSRC_NAME_CAP];
	const char *name = jt_logsrc__method(&c->src, id, buf);

	jt_xout__printf(&c->o, "%s{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":",
			c->events++ ? ",\n" : "\n", open ? "B" : "E", pid, tid);
	jt_xout__usec(&c->o, jt_logsrc__rel(&c->src, ts));
	jt_xout__str(&c->o, ",\"cat\":\"jit\",\"name\":");
	jt_xout__json_str(&c->o, name, strlen(name));
	jt_xout__str(&c->o, "}");
	return 0;
}

/*
 * An off-CPU wait: a complete event (X) on its thread from when it left the CPU to when it
 * ran again, named for its state, with the innermost user frame it left in ("blocked in")
 * and its stack, leaf first, in args. A sum of short waits has no single interval and no
 * stack: an instant event (i) when it was sent, with how many waits and their time.
 */
static int wait_event(struct chrome *c, const struct jt_rec_offcpu *r)
{
	const struct jt_rec_sample *smp = &r->smp;
	char buf[JT_LOGSRC_NAME_CAP], state[JT_XOFF_NAME_CAP];
	unsigned i, user;
	const char *name, *file;
	enum jt_lv_kind kind;

	if (jt_xcalls__see(&c->calls, smp->pid, smp->tid))
		return -ENOMEM;
	c->waits += r->count;
	c->off_ns += r->off_ns;
	jt_xout__printf(&c->o, "%s{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":",
			c->events++ ? ",\n" : "\n", r->state == JT_OFF_SHORT ? "i" : "X", smp->pid,
			smp->tid);
	if (r->state == JT_OFF_SHORT) {
		c->short_ns += r->off_ns;
		jt_xout__usec(&c->o, jt_logsrc__rel(&c->src, r->h.ts));
		jt_xout__printf(&c->o, ",\"s\":\"t\",\"cat\":\"off-cpu\",\"name\":\"%s\","
				"\"args\":{\"waits\":%u,\"off_ns\":", jt_xoff__name(r->state, state),
				r->count);
		jt_xout__u64(&c->o, r->off_ns);
		jt_xout__str(&c->o, "}}");
		return 0;
	}
	jt_xout__usec(&c->o, jt_logsrc__rel(&c->src, smp->h.ts));
	jt_xout__str(&c->o, ",\"dur\":");
	jt_xout__usec(&c->o, r->h.ts - smp->h.ts);	/* the reader checked the order */
	jt_xout__printf(&c->o, ",\"cat\":\"off-cpu\",\"name\":\"%s\",\"args\":{",
			jt_xoff__name(r->state, state));
	user = jt_lv__user_leaf(c->src.lv, smp);
	if (user < smp->nr_frames) {
		name = jt_logsrc__frame(&c->src, &smp->frames[user], buf, &file, &kind);
		jt_xout__str(&c->o, "\"blocked in\":");
		jt_xout__json_str(&c->o, name, strlen(name));
		jt_xout__str(&c->o, ",");
	}
	jt_xout__str(&c->o, "\"stack\":[");
	for (i = 0; i < smp->nr_frames; i++) {
		name = jt_logsrc__frame(&c->src, &smp->frames[i], buf, &file, &kind);
		if (i)
			jt_xout__str(&c->o, ",");
		jt_xout__json_str(&c->o, name, strlen(name));
	}
	jt_xout__str(&c->o, "]}}");
	return 0;
}

static void meta(struct chrome *c, const char *what, uint32_t pid, uint32_t tid,
		 const char *name)
{
	jt_xout__printf(&c->o, "%s{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%u,\"tid\":%u,"
			"\"args\":{\"name\":", c->events++ ? ",\n" : "\n", what, pid, tid);
	jt_xout__json_str(&c->o, name, strlen(name));
	jt_xout__str(&c->o, "}}");
}

/*
 * Names for every process and thread that had calls or waits: a process "comm pid", a
 * thread its latest name in the log, or "comm tid" when the log never named it.
 */
static void metadata(struct chrome *c)
{
	uint32_t last_pid = 0;
	const char *tname;
	char name[64];
	size_t i;

	for (i = 0; i < c->calls.nr_order; i++) {
		uint32_t pid = c->calls.order[i] >> 32, tid = (uint32_t)c->calls.order[i];
		const struct jt_lv_proc *p = jt_lv__proc(c->src.lv, pid);
		const char *comm = p && p->comm[0] ? p->comm : "?";

		if (i == 0 || pid != last_pid) {
			snprintf(name, sizeof(name), "%s %u", comm, pid);
			meta(c, "process_name", pid, pid, name);
		}
		last_pid = pid;
		tname = jt_lv__thread(c->src.lv, tid);
		if (tname && tname[0]) {
			meta(c, "thread_name", pid, tid, tname);
		} else {
			snprintf(name, sizeof(name), "%s %u", comm, tid);
			meta(c, "thread_name", pid, tid, name);
		}
	}
}

int jt_export_chrome(FILE *out, const char *path, const struct jt_filter *filter)
{
	struct chrome c = { 0 };
	const struct jt_rec_hdr *rec;
	const char *base, *what;
	int err, ret = 1;
	unsigned flags;
	bool kept;

	if (jt_logsrc__open(&c.src, path, filter))
		return 1;
	flags = c.src.hdr->flags;
	if (!(flags & (JT_LOG_F_CALLS | JT_LOG_F_OFFCPU))) {	/* nothing to write: say so */
		jt_err("%s: no enter/leave or off-CPU records: record with --calls or --off-cpu",
		       path);
		jt_logsrc__close(&c.src);
		return 1;
	}
	if (jt_xout__init(&c.o, out)) {
		jt_err("%s: out of memory", path);
		jt_logsrc__close(&c.src);
		return 1;
	}
	jt_xout__str(&c.o, "{\"traceEvents\":[");
	while ((rec = jt_logsrc__next(&c.src, &kept))) {
		if (!kept || rec->type == JT_REC_SAMPLE)
			continue;
		if (rec->type == JT_REC_OFFCPU)
			err = wait_event(&c, (const void *)rec);
		else
			err = jt_xcalls__feed(&c.calls, (const void *)rec, event, &c);
		if (err) {
			jt_err("%s: out of memory", path);
			goto cleanup;
		}
	}
	if (jt_logsrc__finish(&c.src, "exported"))
		goto cleanup;
	if (jt_xcalls__finish(&c.calls, c.src.last_ts, event, &c)) {
		jt_err("%s: out of memory", path);
		goto cleanup;
	}
	jt_xcalls__report(&c.calls, path);
	if (!c.events) {
		if (!(flags & JT_LOG_F_OFFCPU))
			what = "calls";
		else if (!(flags & JT_LOG_F_CALLS))
			what = "off-CPU waits";
		else
			what = "calls or off-CPU waits";
		jt_err("%s: no %s to export%s", path, what,
		       c.src.filtered ? " (the filter left none)" : "");
	}
	metadata(&c);
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	jt_xout__str(&c.o, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":"
		     "\"jitrace\",\"log\":");
	jt_xout__json_str(&c.o, base, strlen(base));
	if (flags & JT_LOG_F_OFFCPU) {	/* the totals, short waits' time counted in */
		jt_xout__printf(&c.o, ",\"off_cpu_waits\":%llu,\"off_cpu_ns\":",
				(unsigned long long)c.waits);
		jt_xout__u64(&c.o, c.off_ns);
		jt_xout__str(&c.o, ",\"off_cpu_short_ns\":");
		jt_xout__u64(&c.o, c.short_ns);
	}
	jt_xout__str(&c.o, "}}\n");
	ret = 0;
cleanup:
	err = jt_xout__fini(&c.o);
	if (err && !ret) {
		jt_err("%s: writing the export: %s", path, strerror(err));
		ret = 1;
	}
	jt_xcalls__fini(&c.calls);
	jt_logsrc__close(&c.src);
	return ret;
}
