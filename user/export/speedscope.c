// SPDX-License-Identifier: GPL-2.0
/*
 * speedscope export: frames shared, samples, off-CPU waits and balanced calls kept per
 * thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/common.h"
#include "export/speedscope.h"
#include "log/source.h"
#include "base/util.h"

#define SCHEMA "https://www.speedscope.app/file-format-schema.json"

struct ssample {
	size_t off;		/* into the thread's frames */
	uint32_t n;
	uint64_t weight;	/* ns */
};

struct sevent {
	uint64_t at;		/* ns since the recording began */
	uint32_t frame;
	char type;		/* 'O' or 'C' */
};

/* An off-CPU wait, for the calls profile: its state's frame from left to back. */
struct swait {
	uint64_t left, back;	/* ns since the recording began */
	uint32_t frame;
};

struct sthread {
	uint32_t pid, tid;
	char comm[16];
	uint64_t count;		/* samples */
	size_t order;		/* of first sight */
	uint32_t *frames;	/* every sample's stack, root first, one after another */
	size_t nr_frames, cap_frames;
	struct ssample *samples;
	size_t nr_samples, cap_samples;
	struct sevent *events;
	size_t nr_events, cap_events;
	struct swait *waits;
	size_t nr_waits, cap_waits;
};

struct sscope {
	struct jt_logsrc src;
	struct jt_xintern frames;	/* name '\0' file */
	struct jt_xintern raw;		/* struct jt_frame -> index into raw_frame */
	uint32_t *raw_frame;		/* frame index of each raw frame */
	size_t cap_raw;
	struct jt_hash methods;		/* method id -> frame index + 1 */
	struct jt_hash by_key;		/* pid << 32 | tid -> struct sthread */
	struct sthread **threads;	/* in order of first sight */
	size_t nr_threads, cap_threads;
	struct jt_xcalls calls;
	uint32_t *stack;		/* scratch: one sample, root first, and a wait's state */
	uint64_t period;
	uint32_t state_frame[JT_OFF_MAX];	/* "[off-CPU: STATE]"'s frame index + 1; 0: none */
};

static long frame_idx(struct sscope *s, const char *name, const char *file)
{
	return jt_xintern__pair(&s->frames, name, file, NULL);
}

static long raw_idx(struct sscope *s, const struct jt_frame *f)
{
	char buf[JT_LOGSRC_NAME_CAP];
	const char *name, *file;
	enum jt_lv_kind kind;
	bool added;
	long r, idx;

	r = jt_xintern__get(&s->raw, f, sizeof(*f), &added);
	if (r < 0 || !added)
		return r < 0 ? r : s->raw_frame[r];
	name = jt_logsrc__frame(&s->src, f, buf, &file, &kind);
	idx = frame_idx(s, name, file);
	if (idx < 0 || jt_array_grow(&s->raw_frame, &s->cap_raw, r + 1, sizeof(*s->raw_frame)))
		return -ENOMEM;
	s->raw_frame[r] = idx;
	return idx;
}

static struct sthread *thread(struct sscope *s, uint32_t pid, uint32_t tid)
{
	uint64_t key = (uint64_t)pid << 32 | tid;
	struct sthread *t = jt_hash__get(&s->by_key, key);
	const struct jt_lv_proc *p;

	if (t)
		return t;
	if (jt_array_grow(&s->threads, &s->cap_threads, s->nr_threads + 1, sizeof(*s->threads)))
		return NULL;
	t = calloc(1, sizeof(*t));
	if (!t || jt_hash__put(&s->by_key, key, t)) {
		free(t);
		return NULL;
	}
	t->pid = pid;
	t->tid = tid;
	p = jt_lv__proc(s->src.lv, pid);
	if (p)
		memcpy(t->comm, p->comm, sizeof(t->comm));
	t->order = s->nr_threads;
	s->threads[s->nr_threads++] = t;
	return t;
}

/*
 * s->stack, root first, from r's frames (leaf first), a frame for each method inlined
 * there after its own (jt_lv__expands: far fewer than the stack's room). Returns how many,
 * or -ENOMEM.
 */
static long root_first(struct sscope *s, const struct jt_rec_sample *r)
{
	unsigned int i, n = r->nr_frames, user = 0, k, nr;
	struct jt_lv_scope sc[JT_LV_DEPTH_MAX];
	char buf[JT_LOGSRC_NAME_CAP];
	long at = 0;

	if (jt_lv__has_lines(s->src.lv))
		user = jt_lv__user_leaf(s->src.lv, r);
	for (i = 0; i < n; i++) {
		const struct jt_frame *f = &r->frames[n - 1 - i];
		long idx = raw_idx(s, f);

		if (idx < 0)
			return -ENOMEM;
		s->stack[at++] = idx;
		if (!jt_lv__expands(r))
			continue;
		nr = jt_lv__frame_scopes(s->src.lv, f, n - 1 - i > user, sc, JT_LV_DEPTH_MAX);
		if (nr < 2)
			continue;
		for (k = nr - 1; k-- > 0;) {
			idx = frame_idx(s, jt_lv__inlined_name(sc[k].name, buf, sizeof(buf)),
					jt_lv__file(s->src.lv, sc[k].file));
			if (idx < 0)
				return -ENOMEM;
			s->stack[at++] = idx;
		}
	}
	return at;
}

/* The n frames of s->stack as t's next sample, weighing weight ns; 0 or -ENOMEM. */
static int push_sample(struct sscope *s, struct sthread *t, unsigned n, uint64_t weight)
{
	struct ssample *last;

	/*
	 * The same stack as the thread's last sample: one longer sample. A sample without
	 * frames stores none, and t->frames may still be NULL: memcmp and memcpy are not
	 * called with it, even for 0 bytes (undefined).
	 */
	last = t->nr_samples ? &t->samples[t->nr_samples - 1] : NULL;
	if (last && last->n == n &&
	    (!n || !memcmp(t->frames + last->off, s->stack, n * sizeof(*s->stack)))) {
		last->weight += weight;
		return 0;
	}
	if (jt_array_grow(&t->frames, &t->cap_frames, t->nr_frames + n, sizeof(*t->frames)) ||
	    jt_array_grow(&t->samples, &t->cap_samples, t->nr_samples + 1, sizeof(*t->samples)))
		return -ENOMEM;
	if (n)
		memcpy(t->frames + t->nr_frames, s->stack, n * sizeof(*s->stack));
	t->samples[t->nr_samples++] = (struct ssample){ t->nr_frames, n, weight };
	t->nr_frames += n;
	return 0;
}

static int add_sample(struct sscope *s, const struct jt_rec_sample *r)
{
	struct sthread *t = thread(s, r->pid, r->tid);
	long n = t ? root_first(s, r) : -ENOMEM;

	if (n < 0)
		return -ENOMEM;
	t->count++;
	return push_sample(s, t, n, s->period);
}

/*
 * An off-CPU wait on its thread's timeline: in its sampled profile, where the log has it
 * (in time order with the samples: it ran again at its time), a sample of the stack it
 * left with and its state as the leaf ("[off-CPU: sleep]"), weighing its time off the CPU
 * as a CPU sample weighs its period; kept for the calls profile too. A sum of short waits
 * has no stack: its sample is its state's frame alone, and it has no single interval.
 */
static int add_wait(struct sscope *s, const struct jt_rec_offcpu *r)
{
	struct sthread *t = thread(s, r->smp.pid, r->smp.tid);
	char name[JT_XOFF_NAME_CAP], buf[JT_XOFF_NAME_CAP + 2];
	long n = r->state == JT_OFF_SHORT ? 0 : r->smp.nr_frames;
	long f = (long)s->state_frame[r->state] - 1;	/* the reader checked the state */

	if (t && n)
		n = root_first(s, &r->smp);
	if (!t || n < 0)
		return -ENOMEM;
	if (f < 0) {
		snprintf(buf, sizeof(buf), "[%s]", jt_xoff__name(r->state, name));
		f = frame_idx(s, buf, "");
		if (f < 0)
			return -ENOMEM;
		s->state_frame[r->state] = f + 1;
	}
	s->stack[n] = f;
	if (push_sample(s, t, n + 1, r->off_ns))
		return -ENOMEM;
	if (r->state == JT_OFF_SHORT)
		return 0;
	if (jt_array_grow(&t->waits, &t->cap_waits, t->nr_waits + 1, sizeof(*t->waits)))
		return -ENOMEM;
	t->waits[t->nr_waits++] = (struct swait){ jt_logsrc__rel(&s->src, r->smp.h.ts),
						  jt_logsrc__rel(&s->src, r->h.ts), f };
	return 0;
}

/* A call opens (O) or closes (C). */
static int event(void *ctx, bool open, uint32_t pid, uint32_t tid, uint64_t id, uint64_t ts)
{
	struct sscope *s = ctx;
	struct sthread *t = thread(s, pid, tid);
	uintptr_t idx = (uintptr_t)jt_hash__get(&s->methods, id);
	char buf[JT_LOGSRC_NAME_CAP];

	if (!t)
		return -ENOMEM;
	if (!idx) {
		long f = frame_idx(s, jt_logsrc__method(&s->src, id, buf), "[jit]");

		if (f < 0 || jt_hash__put(&s->methods, id, (void *)(uintptr_t)(f + 1)))
			return -ENOMEM;
		idx = f + 1;
	}
	if (jt_array_grow(&t->events, &t->cap_events, t->nr_events + 1, sizeof(*t->events)))
		return -ENOMEM;
	t->events[t->nr_events++] = (struct sevent){ jt_logsrc__rel(&s->src, ts), idx - 1,
						    open ? 'O' : 'C' };
	return 0;
}

/*
 * A profile up to its samples or events: its type, name ("comm pid/tid", then the thread's
 * latest name when the log has one other than comm, + what) and range.
 */
static void profile_head(const struct sscope *s, struct jt_xout *o, const struct sthread *t,
			 bool *first, const char *type, const char *what, uint64_t end)
{
	const char *tname = jt_lv__thread(s->src.lv, t->tid);
	char name[128];

	if (!tname || !strncmp(tname, t->comm, sizeof(t->comm)))
		tname = "";
	jt_xout__printf(o, "%s{\"type\":\"%s\",\"name\":", *first ? "\n" : ",\n", type);
	*first = false;
	snprintf(name, sizeof(name), "%.16s %u/%u%s%.16s%s", t->comm, t->pid, t->tid,
		 tname[0] ? " " : "", tname, what);
	jt_xout__json_str(o, name, strlen(name));
	jt_xout__str(o, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":");
	jt_xout__u64(o, end);
}

/* Sampled profiles: the most samples first (speedscope opens the first), then first seen. */
static int cmp_busiest(const void *pa, const void *pb)
{
	const struct sthread *a = *(struct sthread *const *)pa;
	const struct sthread *b = *(struct sthread *const *)pb;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	return (a->order > b->order) - (a->order < b->order);
}

static void write_event(struct jt_xout *o, bool first, char type, uint32_t frame, uint64_t at)
{
	jt_xout__printf(o, "%s{\"type\":\"%c\",\"frame\":%u,\"at\":", first ? "" : ",\n", type,
			frame);
	jt_xout__u64(o, at);
	jt_xout__str(o, "}");
}

/*
 * A thread's calls and, between them, its waits: each its state's frame opened when the
 * thread left and closed when it ran again, atop the calls open then. No call begins or
 * ends while a thread is off the CPU; if a log says one did, the wait is closed there.
 */
static void write_events(const struct sthread *t, struct jt_xout *o)
{
	size_t j = 0, k = 0, n = 0;
	uint64_t last = 0, open, close;

	while (j < t->nr_events || k < t->nr_waits) {
		const struct sevent *e = j < t->nr_events ? &t->events[j] : NULL;
		const struct swait *w = k < t->nr_waits ? &t->waits[k] : NULL;

		if (!w || (e && e->at <= w->left)) {
			write_event(o, !n++, e->type, e->frame, e->at);
			last = e->at;
			j++;
			continue;
		}
		open = w->left > last ? w->left : last;
		close = w->back > open ? w->back : open;
		if (e && e->at < close)
			close = e->at;
		write_event(o, !n++, 'O', w->frame, open);
		write_event(o, !n++, 'C', w->frame, close);
		last = close;
		k++;
	}
}

static void write_json(struct sscope *s, struct jt_xout *o)
{
	const char *base = strrchr(s->src.path, '/');
	uint64_t end = jt_logsrc__rel(&s->src, s->src.last_ts), total;
	size_t i, j, k, len, nlen;
	bool first = true;

	base = base ? base + 1 : s->src.path;
	jt_xout__str(o, "{\"$schema\":\"" SCHEMA "\",\"exporter\":\"jitrace\",\"name\":");
	jt_xout__json_str(o, base, strlen(base));
	jt_xout__str(o, ",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[");
	for (i = 0; i < s->frames.n; i++) {
		const char *key = jt_xintern__key(&s->frames, i, &len);

		nlen = strlen(key);
		jt_xout__str(o, i ? ",\n{\"name\":" : "\n{\"name\":");
		jt_xout__json_str(o, key, nlen);
		jt_xout__str(o, ",\"file\":");
		jt_xout__json_str(o, key + nlen + 1, len - nlen - 1);
		jt_xout__str(o, "}");
	}
	jt_xout__str(o, "]},\n\"profiles\":[");
	qsort(s->threads, s->nr_threads, sizeof(*s->threads), cmp_busiest);
	for (i = 0; i < s->nr_threads; i++) {
		const struct sthread *t = s->threads[i];

		if (!t->nr_samples)
			continue;
		for (j = 0, total = 0; j < t->nr_samples; j++)
			total += t->samples[j].weight;
		profile_head(s, o, t, &first, "sampled", "", total);
		jt_xout__str(o, ",\n\"samples\":[");
		for (j = 0; j < t->nr_samples; j++) {
			const struct ssample *sm = &t->samples[j];

			jt_xout__str(o, j ? ",[" : "[");
			for (k = 0; k < sm->n; k++)
				jt_xout__printf(o, k ? ",%u" : "%u", t->frames[sm->off + k]);
			jt_xout__str(o, "]");
		}
		jt_xout__str(o, "],\n\"weights\":[");
		for (j = 0; j < t->nr_samples; j++) {
			if (j)
				jt_xout__str(o, ",");
			jt_xout__u64(o, t->samples[j].weight);
		}
		jt_xout__str(o, "]}");
	}
	for (i = 0; i < s->nr_threads; i++) {
		const struct sthread *t = s->threads[i];

		if (!t->nr_events)
			continue;
		profile_head(s, o, t, &first, "evented", " calls", end);
		jt_xout__str(o, ",\n\"events\":[");
		write_events(t, o);
		jt_xout__str(o, "]}");
	}
	jt_xout__str(o, "]}\n");
}

int jt_export_speedscope(FILE *out, const char *path, const struct jt_filter *filter)
{
	struct sscope s = { 0 };
	const struct jt_rec_hdr *rec;
	struct jt_xout o = { 0 };
	int err, ret = 1;
	size_t i;
	bool kept;

	if (jt_logsrc__open(&s.src, path, filter))
		return 1;
	if (s.src.hdr->sample_hz)
		s.period = 1000000000ULL / s.src.hdr->sample_hz;
	/* a stack's frames, or 512 expanded to 64 each (jt_lv__expands), + a wait's state */
	s.stack = malloc((UINT16_MAX + 1) * sizeof(*s.stack));
	if (!s.stack)
		goto nomem;
	while ((rec = jt_logsrc__next(&s.src, &kept))) {
		if (!kept)
			continue;
		if (rec->type == JT_REC_SAMPLE)
			err = add_sample(&s, (const void *)rec);
		else if (rec->type == JT_REC_OFFCPU)
			err = add_wait(&s, (const void *)rec);
		else
			err = jt_xcalls__feed(&s.calls, (const void *)rec, event, &s);
		if (err)
			goto nomem;
	}
	if (jt_logsrc__finish(&s.src, "exported"))
		goto cleanup;
	if (jt_xcalls__finish(&s.calls, s.src.last_ts, event, &s))
		goto nomem;
	jt_xcalls__report(&s.calls, path);
	/* speedscope opens the profile activeProfileIndex names: an empty list does not load */
	if (!s.nr_threads) {
		jt_err("%s: no samples%s or calls to export%s", path,
		       s.src.hdr->flags & JT_LOG_F_OFFCPU ? ", off-CPU waits" : "",
		       s.src.filtered ? " (the filter left none)" : "");
		goto cleanup;
	}
	if (jt_xout__init(&o, out))
		goto nomem;
	write_json(&s, &o);
	err = jt_xout__fini(&o);
	if (err)
		jt_err("%s: writing the export: %s", path, strerror(err));
	else
		ret = 0;
	goto cleanup;
nomem:
	jt_err("%s: out of memory", path);
cleanup:
	for (i = 0; i < s.nr_threads; i++) {
		free(s.threads[i]->frames);
		free(s.threads[i]->samples);
		free(s.threads[i]->events);
		free(s.threads[i]->waits);
		free(s.threads[i]);
	}
	free(s.threads);
	free(s.stack);
	free(s.raw_frame);
	jt_hash__fini(&s.by_key);
	jt_hash__fini(&s.methods);
	jt_xintern__fini(&s.frames);
	jt_xintern__fini(&s.raw);
	jt_xcalls__fini(&s.calls);
	jt_logsrc__close(&s.src);
	return ret;
}
