// SPDX-License-Identifier: GPL-2.0
/* Logs read as one recording: a directory of segments, or several logs, merged by time. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/hash.h"
#include "log/format.h"
#include "log/set.h"
#include "log/segment.h"
#include "base/util.h"

struct file {
	char *path;
	struct jt_log_header hdr;
	bool skip;			/* outside the time asked for: never opened */
	struct jt_log_reader *r;	/* while it is being read */
	const struct jt_rec_hdr *head;	/* its next record */
	uint64_t last_ts;		/* its latest record's time */
	size_t chain;			/* the recording it is part of */
};

/*
 * One recording: a log, or segments that follow each other. Its ids are the recorder's,
 * moved up by chain number times JT_LOGSET_ID_MAX so that no two recordings' ids meet. A
 * segment defines again what an earlier one did, with the same id: passed over here.
 */
struct chain {
	struct jt_hash defined[JT_FRAME_SYMBOL + 1];	/* ids defined so far, by frame kind */
	size_t tail;			/* its latest log */
	bool tail_done;			/* read to its end: the next segment may follow it */
};

struct jt_logset {
	struct file *f;			/* in order of start */
	size_t n, cap;
	bool single;			/* one log, read as it is */
	unsigned int flags;		/* jt_logr__open_flags' */
	struct jt_log_header hdr;
	size_t next;			/* the next log to open */
	size_t *active;			/* logs being read */
	size_t nr_active;
	long pending;			/* the log whose head was handed out last, or -1 */
	struct chain *chains;
	size_t nr_chains, cap_chains;
	size_t nr_read;
	enum jt_logr_state state;
	char why[512];
	unsigned char *buf;		/* a renumbered record */
	size_t buf_cap;
};

static int add_file(struct jt_logset *s, const char *path)
{
	struct file *f;

	if (jt_array_grow(&s->f, &s->cap, s->n + 1, sizeof(*s->f)))
		goto nomem;
	f = &s->f[s->n];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		goto nomem;
	s->n++;
	return 0;
nomem:
	jt_err("%s: out of memory", path);
	return -ENOMEM;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.jtl in dir (not hidden, not a segment still open), by name. */
static int add_dir(struct jt_logset *s, const char *dir)
{
	DIR *d = opendir(dir);
	char **names = NULL, *p;
	size_t nr = 0, cap = 0, i, len;
	struct dirent *de;
	struct stat st;
	int err = 0;

	if (!d) {
		jt_err("%s: %s", dir, strerror(errno));
		return -errno;
	}
	while (!err && (de = readdir(d))) {
		len = strlen(de->d_name);
		if (de->d_name[0] == '.' || len <= strlen(JT_SEGMENT_SUFFIX) ||
		    strcmp(de->d_name + len - strlen(JT_SEGMENT_SUFFIX), JT_SEGMENT_SUFFIX))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, 0) || !S_ISREG(st.st_mode))
			continue;
		if (asprintf(&p, "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
			     de->d_name) < 0) {
			err = -ENOMEM;
		} else if (jt_array_grow(&names, &cap, nr + 1, sizeof(*names))) {
			free(p);
			err = -ENOMEM;
		} else {
			names[nr++] = p;
		}
	}
	if (err)
		jt_err("%s: out of memory", dir);
	closedir(d);
	if (!err && !nr) {
		jt_err("%s: no logs (*" JT_SEGMENT_SUFFIX ") in it", dir);
		err = -ENOENT;
	}
	if (nr)
		qsort(names, nr, sizeof(*names), cmp_str);
	for (i = 0; i < nr; i++) {
		if (!err)
			err = add_file(s, names[i]);
		free(names[i]);
	}
	free(names);
	return err;
}

static int add_path(struct jt_logset *s, const char *path)
{
	struct stat st;

	if (!stat(path, &st) && S_ISDIR(st.st_mode))
		return add_dir(s, path);
	return add_file(s, path);
}

static int cmp_start(const void *a, const void *b)
{
	const struct file *x = a, *y = b;

	if (x->hdr.start_ns != y->hdr.start_ns)
		return x->hdr.start_ns < y->hdr.start_ns ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* Every log's header, read once (one log alone is kept open); then in order of start. */
static int read_headers(struct jt_logset *s)
{
	size_t i, kept = 0;

	for (i = 0; i < s->n; i++) {
		struct jt_log_reader *r = jt_logr__open_flags(s->f[i].path, s->flags);

		if (!r) {
			if (s->single || !(s->flags & JT_LOGR_SALVAGE))
				return -EINVAL;
			jt_err("%s: skipped (--salvage)", s->f[i].path);
			free(s->f[i].path);
			s->f[i].path = NULL;
			continue;
		}
		s->f[i].hdr = *jt_logr__header(r);
		if (s->single)
			s->f[i].r = r;
		else
			jt_logr__close(r);
		s->f[kept++] = s->f[i];
	}
	s->n = kept;
	if (!s->n)
		return -ENOENT;
	qsort(s->f, s->n, sizeof(*s->f), cmp_start);
	return 0;
}

/* The time of a log's last record (its start if it has none), reading it through. */
static uint64_t end_of(const struct jt_logset *s, const struct file *f)
{
	struct jt_log_reader *r = jt_logr__open_flags(f->path, s->flags);
	const struct jt_rec_hdr *rec;
	uint64_t end = f->hdr.start_ns;

	if (!r)
		return end;
	while ((rec = jt_logr__next(r)))
		if (rec->ts > end)
			end = rec->ts;
	jt_logr__close(r);
	return end;
}

/*
 * Whether b is the segment that follows a in one recording: both named as segments, of the
 * same host and clock offset (the recorder gives every segment its recording's), a first.
 */
static bool follows(const struct file *a, const struct file *b)
{
	const char *na = strrchr(a->path, '/'), *nb = strrchr(b->path, '/');

	na = na ? na + 1 : a->path;
	nb = nb ? nb + 1 : b->path;
	return jt_segment__is_name(na) && jt_segment__is_name(nb) && strcmp(na, nb) < 0 &&
	       a->hdr.realtime_offset_ns == b->hdr.realtime_offset_ns &&
	       !strncmp(a->hdr.hostname, b->hdr.hostname, sizeof(a->hdr.hostname));
}

/* Which logs the time asked for needs: a segment whose successor begins before it, not. */
static void choose(struct jt_logset *s, const struct jt_filter *f)
{
	size_t i;

	for (i = 0; i < s->n; i++) {
		struct file *x = &s->f[i];

		x->skip = (f->to_ns != UINT64_MAX && x->hdr.start_ns >= f->to_ns) ||
			  (i + 1 < s->n && follows(x, &s->f[i + 1]) &&
			   s->f[i + 1].hdr.start_ns < f->from_ns);
	}
}

struct jt_logset *jt_logset__open(const char *path, struct jt_filter *filter)
{
	struct jt_logset *s = calloc(1, sizeof(*s));
	int i;

	if (!s) {
		jt_err("%s: out of memory", path);
		return NULL;
	}
	s->pending = -1;
	s->flags = jt_filter__read_flags(filter);
	if (add_path(s, path))
		goto fail;
	for (i = 0; i < filter->nr_more; i++)
		if (add_path(s, filter->more[i]))
			goto fail;
	s->single = s->n == 1;
	if (read_headers(s))
		goto fail;
	s->hdr = s->f[0].hdr;
	for (i = 1; i < (int)s->n; i++)
		s->hdr.flags |= s->f[i].hdr.flags;
	if (filter->last >= 0)
		filter->end_ns = end_of(s, &s->f[s->n - 1]);
	jt_filter__start(filter, s->hdr.start_ns);
	if (!s->single)
		choose(s, filter);
	return s;
fail:
	jt_logset__close(s);
	return NULL;
}

void jt_logset__close(struct jt_logset *s)
{
	size_t i, k;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		jt_logr__close(s->f[i].r);
		free(s->f[i].path);
	}
	for (i = 0; i < s->nr_chains; i++)
		for (k = 0; k < JT_ARRAY_SIZE(s->chains[i].defined); k++)
			jt_hash__fini(&s->chains[i].defined[k]);
	free(s->chains);
	free(s->f);
	free(s->active);
	free(s->buf);
	free(s);
}

const struct jt_log_header *jt_logset__header(const struct jt_logset *s)
{
	return &s->hdr;
}

enum jt_logr_state jt_logset__state(const struct jt_logset *s)
{
	return s->single ? jt_logr__state(s->f[0].r) : s->state;
}

const char *jt_logset__why(const struct jt_logset *s)
{
	return s->single ? jt_logr__why(s->f[0].r) : s->why;
}

size_t jt_logset__logs(const struct jt_logset *s)
{
	return s->n;
}

size_t jt_logset__read(const struct jt_logset *s)
{
	return s->nr_read;
}

static const struct jt_rec_hdr *stop(struct jt_logset *s, const char *path, const char *why)
{
	s->state = JT_LOGR_CORRUPT;
	snprintf(s->why, sizeof(s->why), "%s: %s", path, why);
	return NULL;
}

/* A log's records have all been read: it is done with, its ids' range taken. */
static int end_file(struct jt_logset *s, size_t idx)
{
	struct file *f = &s->f[idx];
	size_t i;

	switch (jt_logr__state(f->r)) {
	case JT_LOGR_CORRUPT:
		stop(s, f->path, jt_logr__why(f->r));
		return -1;
	case JT_LOGR_TRUNCATED:
		jt_err("%s: truncated: %s; read up to its last whole block", f->path,
		       jt_logr__why(f->r));
		break;
	default:
		break;
	}
	jt_logr__close(f->r);
	f->r = NULL;
	s->chains[f->chain].tail_done = true;
	for (i = 0; i < s->nr_active && s->active[i] != idx; i++)
		;
	if (i < s->nr_active)
		s->active[i] = s->active[--s->nr_active];
	return 0;
}

/*
 * Read the next record of log idx into its head, passing over what an earlier segment of
 * its recording defined already; at its end, done with it.
 */
static int advance(struct jt_logset *s, size_t idx)
{
	struct file *f = &s->f[idx];
	struct chain *c = &s->chains[f->chain];
	unsigned int kind;
	uint64_t id;

	for (;;) {
		f->head = jt_logr__next(f->r);
		if (!f->head)
			return end_file(s, idx);
		f->last_ts = f->head->ts;
		id = jt_logfmt__defines(f->head, &kind);
		if (!kind || kind >= JT_ARRAY_SIZE(c->defined))
			return 0;
		if (id >= JT_LOGSET_ID_MAX) {
			stop(s, f->path, "an id too large to read this log with others");
			return -1;
		}
		if (jt_hash__get(&c->defined[kind], id))
			continue;	/* the same thing, defined again in a later segment */
		if (jt_hash__put(&c->defined[kind], id, (void *)1)) {
			jt_err("%s: out of memory", f->path);
			stop(s, f->path, "out of memory");
			return -1;
		}
		return 0;
	}
}

/* The recording log idx is part of: the one whose latest segment it follows, or a new one. */
static int find_chain(struct jt_logset *s, size_t idx)
{
	struct file *f = &s->f[idx];
	size_t i;

	for (i = 0; i < s->nr_chains; i++) {
		struct chain *c = &s->chains[i];
		struct file *t = &s->f[c->tail];

		/* a segment begins at the time of the last record of the one before it */
		if (c->tail_done && t->last_ts == f->hdr.start_ns && follows(t, f)) {
			c->tail = idx;
			c->tail_done = false;
			f->chain = i;
			return 0;
		}
	}
	if (s->nr_chains == (1ULL << 56) / JT_LOGSET_ID_MAX ||
	    jt_array_grow(&s->chains, &s->cap_chains, s->nr_chains + 1, sizeof(*s->chains))) {
		stop(s, f->path, "too many logs");
		return -1;
	}
	memset(&s->chains[s->nr_chains], 0, sizeof(*s->chains));
	s->chains[s->nr_chains].tail = idx;
	f->chain = s->nr_chains++;
	return 0;
}

static int open_file(struct jt_logset *s, size_t idx)
{
	struct file *f = &s->f[idx];

	f->r = jt_logr__open_flags(f->path, s->flags);
	if (!f->r) {
		stop(s, f->path, "cannot be read");
		return -1;
	}
	f->last_ts = f->hdr.start_ns;
	if (find_chain(s, idx))
		return -1;
	if (!s->active) {
		s->active = calloc(s->n, sizeof(*s->active));
		if (!s->active) {
			jt_err("%s: out of memory", f->path);
			stop(s, f->path, "out of memory");
			return -1;
		}
	}
	s->active[s->nr_active++] = idx;
	s->nr_read++;
	return advance(s, idx);
}

/* A stack's references moved up by b (a user address's, the anonymous memory it lies in,
 * too); -1 if one is too large for that. */
static int renumber_frames(struct jt_rec_sample *smp, uint64_t b)
{
	unsigned int i;

	for (i = 0; i < smp->nr_frames; i++) {
		uint64_t ref = smp->frames[i].ref, id = JT_FRAME_ID(ref);
		unsigned int kind = JT_FRAME_KIND(ref);

		if (kind != JT_FRAME_METHOD && kind != JT_FRAME_MODULE &&
		    kind != JT_FRAME_SYMBOL && (kind != JT_FRAME_USER || !id))
			continue;
		if (id >= JT_LOGSET_ID_MAX)
			return -1;
		smp->frames[i].ref = JT_FRAME_REF(kind, id + b);
	}
	return 0;
}

/* rec with its ids moved up by b, in s->buf; NULL if an id is too large for that. */
static const struct jt_rec_hdr *renumber(struct jt_logset *s, const struct file *f,
					 const struct jt_rec_hdr *rec, uint64_t b)
{
	__u64 *ids[2] = { NULL, NULL };
	struct jt_rec_hdr *c;
	unsigned int i;

	if (rec->size > s->buf_cap) {
		unsigned char *n = realloc(s->buf, rec->size);

		if (!n) {
			jt_err("%s: out of memory", f->path);
			return stop(s, f->path, "out of memory");
		}
		s->buf = n;
		s->buf_cap = rec->size;
	}
	memcpy(s->buf, rec, rec->size);
	c = (struct jt_rec_hdr *)s->buf;
	switch (c->type) {
	case JT_REC_METHOD:
		ids[0] = &((struct jt_rec_method *)c)->id;
		break;
	case JT_REC_MODULE:
		ids[0] = &((struct jt_rec_module *)c)->id;
		break;
	case JT_REC_SYMBOL:
		ids[0] = &((struct jt_rec_symbol *)c)->id;
		if (((struct jt_rec_symbol *)c)->module)
			ids[1] = &((struct jt_rec_symbol *)c)->module;
		break;
	case JT_REC_LINES:
		ids[0] = &((struct jt_rec_lines *)c)->method;
		break;
	case JT_REC_INLINE:
		ids[0] = &((struct jt_rec_inline *)c)->method;
		break;
	case JT_REC_LATE:
		ids[0] = &((struct jt_rec_late *)c)->method;
		break;
	case JT_REC_ENTER:
	case JT_REC_LEAVE:
	case JT_REC_UNLOAD:
	case JT_REC_CALLSUM:	/* the same head: id, pid, tid */
	case JT_REC_SPAN:
		ids[0] = &((struct jt_rec_call *)c)->id;
		break;
	case JT_REC_SAMPLE:
		if (renumber_frames((void *)c, b))
			goto too_large;
		break;
	case JT_REC_OFFCPU:
		if (renumber_frames(&((struct jt_rec_offcpu *)c)->smp, b))
			goto too_large;
		break;
	default:
		break;
	}
	for (i = 0; i < 2; i++) {
		if (!ids[i])
			continue;
		if (*ids[i] >= JT_LOGSET_ID_MAX)
			goto too_large;
		*ids[i] += b;
	}
	return c;
too_large:
	return stop(s, f->path, "an id too large to read this log with others");
}

const struct jt_rec_hdr *jt_logset__next(struct jt_logset *s)
{
	struct file *f;
	uint64_t min;
	size_t i, pick;

	if (s->single) {
		s->nr_read = 1;
		return jt_logr__next(s->f[0].r);
	}
	if (s->state == JT_LOGR_CORRUPT)
		return NULL;
	if (s->pending >= 0 && advance(s, s->pending))
		return NULL;
	s->pending = -1;
	/* open each log once the merge reaches its start; skip those not needed */
	while (s->next < s->n) {
		f = &s->f[s->next];
		if (f->skip) {
			s->next++;
			continue;
		}
		min = UINT64_MAX;
		for (i = 0; i < s->nr_active; i++)
			if (s->f[s->active[i]].head->ts < min)
				min = s->f[s->active[i]].head->ts;
		/* a segment begins where the one before ends: that one first, then this */
		if (s->nr_active && f->hdr.start_ns >= min)
			break;
		if (open_file(s, s->next++))
			return NULL;
	}
	if (!s->nr_active) {
		s->state = JT_LOGR_END;
		return NULL;
	}
	pick = s->active[0];
	for (i = 1; i < s->nr_active; i++) {
		size_t a = s->active[i];

		if (s->f[a].head->ts < s->f[pick].head->ts ||
		    (s->f[a].head->ts == s->f[pick].head->ts && a < pick))
			pick = a;
	}
	s->pending = pick;
	f = &s->f[pick];
	return f->chain ? renumber(s, f, f->head, f->chain * JT_LOGSET_ID_MAX) : f->head;
}
