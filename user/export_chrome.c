// SPDX-License-Identifier: GPL-2.0
/* Chrome Trace Event export: balanced B/E pairs written as the log is read. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export_chrome.h"
#include "export_common.h"
#include "logsrc.h"
#include "util.h"

struct chrome {
	struct jt_logsrc src;
	struct jt_xcalls calls;
	struct jt_xout o;
	uint64_t events;
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

static void meta(struct chrome *c, const char *what, uint32_t pid, uint32_t tid,
		 const char *name)
{
	jt_xout__printf(&c->o, "%s{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%u,\"tid\":%u,"
			"\"args\":{\"name\":", c->events++ ? ",\n" : "\n", what, pid, tid);
	jt_xout__json_str(&c->o, name, strlen(name));
	jt_xout__str(&c->o, "}}");
}

/*
 * Names for every process and thread that had calls: a process "comm pid", a thread its
 * latest name in the log, or "comm tid" when the log never named it.
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
	const char *base;
	int err, ret = 1;
	bool kept;

	if (jt_logsrc__open(&c.src, path, filter))
		return 1;
	if (!(c.src.hdr->flags & JT_LOG_F_CALLS)) {	/* nothing to write: say so, write nothing */
		jt_err("%s: no enter/leave records: record with --calls", path);
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
		if (jt_xcalls__feed(&c.calls, (const void *)rec, event, &c)) {
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
	if (!c.events)
		jt_err("%s: no calls to export%s", path,
		       c.src.filtered ? " (the filter left none)" : "");
	metadata(&c);
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	jt_xout__str(&c.o, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"exporter\":"
		     "\"jitrace\",\"log\":");
	jt_xout__json_str(&c.o, base, strlen(base));
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
