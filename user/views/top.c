// SPDX-License-Identifier: GPL-2.0
/* The live view's counts: samples per innermost JIT method over one refresh interval. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/hash.h"
#include "log/view.h"
#include "base/text.h"
#include "views/top.h"
#include "base/util.h"

#define MAX_JIT_FRAMES 128	/* distinct JIT frames per sample counted towards total */

struct hot {
	uint64_t id;		/* method id */
	uint64_t self, total;
};

struct jt_top {
	struct jt_lv *lv;
	struct jt_hash idx;	/* method id -> 1 + index into hot */
	struct hot *hot;
	size_t n, cap;
	uint64_t samples, no_jit;	/* this interval */
	uint64_t samples_ever, lost, procs_seen;
	struct jt_hash pids;	/* pids with samples this interval */
};

struct jt_top *jt_top__new(void)
{
	struct jt_top *t = calloc(1, sizeof(*t));

	if (!t || !(t->lv = jt_lv__new())) {
		jt_err("out of memory starting top");
		free(t);
		return NULL;
	}
	return t;
}

void jt_top__free(struct jt_top *t)
{
	if (!t)
		return;
	jt_lv__free(t->lv);
	jt_hash__fini(&t->idx);
	jt_hash__fini(&t->pids);
	free(t->hot);
	free(t);
}

static struct hot *hot_get(struct jt_top *t, uint64_t id)
{
	uintptr_t i = (uintptr_t)jt_hash__get(&t->idx, id);

	if (i)
		return &t->hot[i - 1];
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct hot *v = realloc(t->hot, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->hot = v;
		t->cap = cap;
	}
	if (jt_hash__put(&t->idx, id, (void *)(uintptr_t)(t->n + 1)))
		return NULL;
	t->hot[t->n] = (struct hot){ .id = id };
	return &t->hot[t->n++];
}

static int on_sample(struct jt_top *t, const struct jt_rec_sample *s)
{
	uint64_t seen[MAX_JIT_FRAMES];
	unsigned int i, k, nseen = 0;
	struct hot *h;

	t->samples++;
	t->samples_ever++;
	if (!jt_hash__get(&t->pids, s->pid) && jt_hash__put(&t->pids, s->pid, (void *)1))
		return -ENOMEM;
	for (i = 0; i < s->nr_frames; i++) {
		uint64_t ref = s->frames[i].ref;

		if (JT_FRAME_KIND(ref) != JT_FRAME_METHOD)
			continue;
		for (k = 0; k < nseen && seen[k] != ref; k++)
			;
		if (k < nseen)
			continue;	/* recursion: once per sample */
		h = hot_get(t, JT_FRAME_ID(ref));
		if (!h)
			return -ENOMEM;
		if (!nseen)
			h->self++;
		h->total++;
		if (nseen < MAX_JIT_FRAMES)
			seen[nseen++] = ref;
	}
	if (!nseen)
		t->no_jit++;
	return 0;
}

static int on_record(void *ctx, const struct jt_rec_hdr *rec)
{
	struct jt_top *t = ctx;
	int err = 0;

	switch (rec->type) {
	case JT_REC_SAMPLE:
		err = on_sample(t, (const void *)rec);
		break;
	case JT_REC_DROP:
		t->lost += ((const struct jt_rec_drop *)rec)->count;
		break;
	case JT_REC_METHOD:
	case JT_REC_PROC:
	case JT_REC_EXEC:
		return jt_lv__add(t->lv, rec);
	default:
		break;
	}
	if (err)
		jt_err("out of memory counting samples");
	return err;
}

struct jt_sink jt_top__sink(struct jt_top *t)
{
	return (struct jt_sink){ .record = on_record, .ctx = t };
}

uint64_t jt_top__samples(const struct jt_top *t)
{
	return t->samples_ever;
}

static int cmp_hot(const void *pa, const void *pb)
{
	const struct hot *a = pa, *b = pb;

	if (a->self != b->self)
		return a->self > b->self ? -1 : 1;
	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/*
 * One line, cut at cols (counting bytes of ASCII; a name's multibyte tail may end early),
 * its controls escaped: names and comms are other processes' bytes, and this is a terminal.
 */
static void put_line(FILE *out, const char *raw, unsigned int cols, bool term)
{
	char line[1024];
	size_t n = jt_text__escape(line, sizeof(line), raw, strlen(raw));

	if (n > cols) {
		n = cols;
		while (n > 0 && ((unsigned char)line[n] & 0xc0) == 0x80)
			n--;	/* never split a UTF-8 character */
	}
	fwrite(line, 1, n, out);
	/* on a terminal, clear what the previous screen left on this line */
	fputs(term ? "\033[K\n" : "\n", out);
}

#define COMM_COLS 15	/* a comm's bytes at most: its column's width */

/*
 * A comm as its column shows it, COMM_COLS wide (cell holds 2 * COMM_COLS + 1 bytes):
 * a UTF-8 character as itself, one column; what the line's escaping would widen to \xHH
 * (bytes that are not UTF-8, controls, a backslash) as one '?', so the columns after it
 * stay in line.
 */
static void comm_cell(char *cell, const char *comm)
{
	size_t len = jt_text__clean(cell, comm, strnlen(comm, COMM_COLS)), i, cols = 0;

	for (i = 0; i < len; i++) {
		if (cell[i] == '\\')
			cell[i] = '?';
		cols += ((unsigned char)cell[i] & 0xc0) != 0x80;	/* not a continuation */
	}
	while (cols++ < COMM_COLS)
		cell[len++] = ' ';
	cell[len] = '\0';
}

int jt_top__render(struct jt_top *t, FILE *out, unsigned int rows, unsigned int cols,
		   double secs, bool term)
{
	char line[512], when[16];
	time_t now = time(NULL);
	struct tm tm;
	size_t i;

	if (t->n)	/* t->hot is NULL before the first sample: not for qsort */
		qsort(t->hot, t->n, sizeof(*t->hot), cmp_hot);
	if (!localtime_r(&now, &tm) || !strftime(when, sizeof(when), "%H:%M:%S", &tm))
		when[0] = '\0';
	snprintf(line, sizeof(line), "jitrace top %s  %.0f samples/s  %zu process%s  %zu methods "
		 "hot  %.1f%% outside JIT code  lost %" PRIu64 "%s", when,
		 secs > 0 ? t->samples / secs : 0, t->pids.count, t->pids.count == 1 ? "" : "es",
		 t->n,
		 t->samples ? 100.0 * t->no_jit / t->samples : 0, t->lost,
		 term ? "  (q quits)" : "");
	put_line(out, line, cols, term);
	put_line(out, "", cols, term);
	snprintf(line, sizeof(line), "%7s %7s %8s %8s  %-15s  %s", "SELF%", "TOTAL%", "SAMPLES",
		 "PID", "COMM", "METHOD");
	put_line(out, line, cols, term);
	for (i = 0; i < t->n && i < rows; i++) {
		const struct hot *h = &t->hot[i];
		const struct jt_lv_method *m = jt_lv__method(t->lv, h->id);
		const struct jt_lv_proc *p = m ? jt_lv__proc(t->lv, m->pid) : NULL;
		char comm[2 * COMM_COLS + 1];
		size_t k;

		comm_cell(comm, p ? p->comm : "?");	/* a comm is the process's to choose */
		snprintf(line, sizeof(line), "%6.1f%% %6.1f%% %8" PRIu64 " %8u  %s  %s",
			 100.0 * h->self / t->samples, 100.0 * h->total / t->samples, h->self,
			 m ? m->pid : 0, comm, m ? m->name : "?");
		for (k = 0; line[k]; k++)
			if ((unsigned char)line[k] < 0x20 || line[k] == 0x7f)
				line[k] = '?';
		put_line(out, line, cols, term);
	}
	if (term)
		fputs("\033[J", out);	/* and below the last line */
	else
		fputc('\n', out);
	/* a new interval */
	jt_hash__fini(&t->idx);
	jt_hash__fini(&t->pids);
	t->n = 0;
	t->samples = t->no_jit = 0;
	return ferror(out) ? -EIO : 0;
}
