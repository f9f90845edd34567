// SPDX-License-Identifier: GPL-2.0
/*
 * Off-CPU waits (JT_REC_OFFCPU) in `jitrace export`: pprof's off_cpu sample type decoded
 * here value by value (and read by `go tool pprof` where Go is installed), speedscope's
 * samples and events of each wait at its time with its weight, chrome's X events' ts and
 * dur; short waits counted; the filter; the CPU view of a log unchanged by its waits; the
 * help. The logs are written with viewlog.h's vl_ helpers.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "scratch.h"
#include "viewlog.h"

#include "cmd/cmds.h"
#include "export/chrome.h"
#include "export/pprof.h"
#include "export/speedscope.h"
#include "log/filter.h"

/*
 * Process 100 "java": thread 101 "worker" calls main from 1 ms to 80 ms; spins (5 samples
 * at 1000 Hz from 10 ms), sleeps in Queue.take() (pthread_cond_wait, schedule) from 15 to
 * 45 ms, spins (3 samples from 45 ms), blocks in Disk.read() (read) from 48 to 60 ms,
 * sleeps in Queue.take() again from 61 to 69 ms, and sends a sum of 9 short waits, 700 us,
 * at 70 ms. Thread 102 (never named) is preempted in Hot.spin from 20 to 25 ms. Process 200
 * "node", thread 201, sleeps in its poll from 5 to 40 ms. Without waits: the same log less
 * the off-CPU records and flag.
 */
#define JAVA 100
#define NODE 200
#define OFF_TOTAL (38 * VL_MS + 12 * VL_MS + 700000 + 5 * VL_MS + 35 * VL_MS)

static void write_waits_log(const char *path, bool waits)
{
	const struct jt_frame spin[] = { M(1, 0x10), M(2, 0x20) };
	const struct jt_frame take[] = { S(2, 0x10), S(1, 0x20), M(3, 0x8), M(2, 0x20) };
	const struct jt_frame disk[] = { S(3, 0x4), M(4, 0x4), M(2, 0x20) };
	const struct jt_frame poll[] = { M(5, 0x8) };
	struct jt_log_header h = {
		.start_ns = VL_T0, .realtime_offset_ns = 1700000000LL * 1000000000LL,
		.ncpus = 2, .sample_hz = 1000, .hostname = "testhost", .kernel = "6.1.0-test",
		.flags = JT_LOG_F_CALLS | JT_LOG_F_KSTACK | (waits ? JT_LOG_F_OFFCPU : 0),
	};
	struct jt_log_writer *w = jt_logw__create(path, &h, true);
	uint64_t ts = 10 * VL_MS;

	assert_non_null(w);
	vl_proc(w, 0, JAVA, "java", "java Main");
	vl_proc(w, 0, NODE, "node", "node app.js");
	vl_thread(w, 0, JAVA, 101, "worker");
	vl_module(w, 0, 1, JAVA, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	vl_symbol(w, 0, 1, 1, JAVA, "pthread_cond_wait");
	vl_symbol(w, 0, 2, 0, 0, "schedule");
	vl_symbol(w, 0, 3, 1, JAVA, "read");
	vl_method(w, 0, 1, JAVA, "Hot.spin(int)");
	vl_method(w, 0, 2, JAVA, "Main.main(String[])");
	vl_method(w, 0, 3, JAVA, "Queue.take()");
	vl_method(w, 0, 4, JAVA, "Disk.read()");
	vl_method(w, 0, 5, NODE, "JS:*poll /app.js:3");
	vl_call(w, JT_REC_ENTER, 1 * VL_MS, JAVA, 101, 2);
	vl_tsamples(w, &ts, JAVA, 101, 5, spin, 2);				/* 10..14 ms */
	if (waits) {
		vl_offcpu(w, 25 * VL_MS, JAVA, 102, 5 * VL_MS, JT_OFF_PREEMPTED, 1, spin, 2);
		vl_offcpu(w, 40 * VL_MS, NODE, 201, 35 * VL_MS, JT_OFF_SLEEP, 1, poll, 1);
		vl_offcpu(w, 45 * VL_MS, JAVA, 101, 30 * VL_MS, JT_OFF_SLEEP, 1, take, 4);
	}
	ts = 45 * VL_MS;
	vl_tsamples(w, &ts, JAVA, 101, 3, spin, 2);				/* 45..47 ms */
	if (waits) {
		vl_offcpu(w, 60 * VL_MS, JAVA, 101, 12 * VL_MS, JT_OFF_BLOCKED, 1, disk, 3);
		vl_offcpu(w, 69 * VL_MS, JAVA, 101, 8 * VL_MS, JT_OFF_SLEEP, 1, take, 4);
		vl_offcpu(w, 70 * VL_MS, JAVA, 101, 700000, JT_OFF_SHORT, 9, NULL, 0);
	}
	vl_call(w, JT_REC_LEAVE, 80 * VL_MS, JAVA, 101, 2);
	assert_int_equal(jt_logw__close(w), 0);
}

struct tmp {
	char dir[256];
	char log[512];
};

static int tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t || scratch_make(t->dir, sizeof(t->dir), "export_offcpu")) {
		free(t);
		return -1;
	}
	snprintf(t->log, sizeof(t->log), "%s/w.jtl", t->dir);
	*state = t;
	return 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;

	scratch_remove(t->dir);
	free(t);
	return 0;
}

typedef int (*export_fn)(FILE *out, const char *path, const struct jt_filter *filter);

/* Run an export of t->log into DIR/name; its bytes (NUL-terminated), *len their count. */
static char *run_export(const struct tmp *t, export_fn fn, const struct jt_filter *filter,
			const char *name, int *ret, size_t *len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t->dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	*ret = fn(f, t->log, filter);
	assert_int_equal(fclose(f), 0);
	return slurp(path, len);
}

/* ---- a pprof profile decoded into what the tests look at ---- */

#define PB_MAX 64

struct plabel {
	uint64_t key, str, num;
};

struct psample {
	uint64_t locs[16], values[4];
	size_t nr_locs, nr_values;
	struct plabel labels[8];
	size_t nr_labels;
};

struct prof {
	uint64_t types[4];		/* sample types' type strings */
	size_t nr_types;
	struct psample samples[PB_MAX];
	size_t nr_samples;
	struct { uint64_t id, mapping, address, function; } locs[PB_MAX];
	size_t nr_locs;
	struct { uint64_t id, name; } funcs[PB_MAX];
	size_t nr_funcs;
	char *strings[PB_MAX];		/* malloc'd, NUL-terminated */
	size_t nr_strings;
	uint64_t default_type;
};

/* A span of a message's bytes. */
struct pbuf {
	const unsigned char *p, *end;
};

static uint64_t pb_varint(struct pbuf *b)
{
	uint64_t v = 0;
	int shift = 0;

	for (;;) {
		assert_true(b->p < b->end && shift < 64);
		v |= (uint64_t)(*b->p & 0x7f) << shift;
		shift += 7;
		if (!(*b->p++ & 0x80))
			return v;
	}
}

/*
 * The next field of message b: its number, and either its varint (*v; sub empty) or its
 * bytes (sub). false at the end.
 */
static bool pb_field(struct pbuf *b, unsigned *num, uint64_t *v, struct pbuf *sub)
{
	uint64_t key, len;

	if (b->p >= b->end)
		return false;
	key = pb_varint(b);
	*num = key >> 3;
	sub->p = sub->end = NULL;
	if ((key & 7) == 0) {
		*v = pb_varint(b);
		return true;
	}
	assert_int_equal(key & 7, 2);
	len = pb_varint(b);
	assert_true(len <= (uint64_t)(b->end - b->p));
	sub->p = b->p;
	sub->end = b->p += len;
	return true;
}

/* A repeated uint64 field, packed (sub) or not (v), appended to a[*n]. */
static void pb_repeated(uint64_t *a, size_t *n, size_t cap, uint64_t v, struct pbuf sub)
{
	if (!sub.p) {
		assert_true(*n < cap);
		a[(*n)++] = v;
		return;
	}
	while (sub.p < sub.end) {
		assert_true(*n < cap);
		a[(*n)++] = pb_varint(&sub);
	}
}

static void prof_sample(struct psample *s, struct pbuf b)
{
	struct pbuf sub, lsub;
	unsigned num, lnum;
	uint64_t v, lv;

	memset(s, 0, sizeof(*s));
	while (pb_field(&b, &num, &v, &sub)) {
		if (num == 1) {
			pb_repeated(s->locs, &s->nr_locs, JT_ARRAY_SIZE(s->locs), v, sub);
		} else if (num == 2) {
			pb_repeated(s->values, &s->nr_values, JT_ARRAY_SIZE(s->values), v, sub);
		} else if (num == 3) {
			struct plabel *l = &s->labels[s->nr_labels++];

			assert_true(s->nr_labels <= JT_ARRAY_SIZE(s->labels));
			while (pb_field(&sub, &lnum, &lv, &lsub))
				if (lnum == 1)
					l->key = lv;
				else if (lnum == 2)
					l->str = lv;
				else if (lnum == 3)
					l->num = lv;
		}
	}
}

static void prof_location(struct prof *pf, struct pbuf b)
{
	struct pbuf sub, lsub;
	unsigned num, lnum;
	uint64_t v, lv;

	assert_true(pf->nr_locs < PB_MAX);
	while (pb_field(&b, &num, &v, &sub)) {
		if (num == 1)
			pf->locs[pf->nr_locs].id = v;
		else if (num == 2)
			pf->locs[pf->nr_locs].mapping = v;
		else if (num == 3)
			pf->locs[pf->nr_locs].address = v;
		else if (num == 4)	/* line { function_id } */
			while (pb_field(&sub, &lnum, &lv, &lsub))
				if (lnum == 1)
					pf->locs[pf->nr_locs].function = lv;
	}
	pf->nr_locs++;
}

/* pprof's gzipped bytes decoded. */
static void prof_decode(const char *gz, size_t len, struct prof *pf)
{
	size_t cap = 1 << 20;
	unsigned char *raw = malloc(cap);
	struct pbuf b, sub, tsub;
	z_stream zs = { 0 };
	unsigned num, tnum;
	uint64_t v, tv;

	memset(pf, 0, sizeof(*pf));
	assert_non_null(raw);
	assert_int_equal(inflateInit2(&zs, 31), Z_OK);	/* gzip */
	zs.next_in = (unsigned char *)gz;
	zs.avail_in = len;
	zs.next_out = raw;
	zs.avail_out = cap;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	b = (struct pbuf){ raw, raw + zs.total_out };
	inflateEnd(&zs);
	while (pb_field(&b, &num, &v, &sub)) {
		switch (num) {
		case 1:		/* sample_type { type, unit } */
			assert_true(pf->nr_types < JT_ARRAY_SIZE(pf->types));
			while (pb_field(&sub, &tnum, &tv, &tsub))
				if (tnum == 1)
					pf->types[pf->nr_types] = tv;
			pf->nr_types++;
			break;
		case 2:
			assert_true(pf->nr_samples < PB_MAX);
			prof_sample(&pf->samples[pf->nr_samples++], sub);
			break;
		case 4:
			prof_location(pf, sub);
			break;
		case 5:		/* function { id, name, ... } */
			assert_true(pf->nr_funcs < PB_MAX);
			while (pb_field(&sub, &tnum, &tv, &tsub))
				if (tnum == 1)
					pf->funcs[pf->nr_funcs].id = tv;
				else if (tnum == 2)
					pf->funcs[pf->nr_funcs].name = tv;
			pf->nr_funcs++;
			break;
		case 6:		/* string_table */
			assert_true(pf->nr_strings < PB_MAX);
			pf->strings[pf->nr_strings] = strndup((const char *)sub.p, sub.end - sub.p);
			assert_non_null(pf->strings[pf->nr_strings++]);
			break;
		case 14:
			pf->default_type = v;
			break;
		default:
			break;
		}
	}
	free(raw);
}

static void prof_free(struct prof *pf)
{
	size_t i;

	for (i = 0; i < pf->nr_strings; i++)
		free(pf->strings[i]);
}

static const char *pstr(const struct prof *pf, uint64_t i)
{
	assert_true(i < pf->nr_strings);
	return pf->strings[i];
}

/* The index of the sample type named type, or -1. */
static int ptype(const struct prof *pf, const char *type)
{
	size_t i;

	for (i = 0; i < pf->nr_types; i++)
		if (!strcmp(pstr(pf, pf->types[i]), type))
			return i;
	return -1;
}

/* The function name of the k-th location of sample s (0: its leaf). */
static const char *pframe(const struct prof *pf, const struct psample *s, size_t k)
{
	size_t i, j;

	assert_true(k < s->nr_locs);
	for (i = 0; i < pf->nr_locs && pf->locs[i].id != s->locs[k]; i++)
		;
	assert_true(i < pf->nr_locs);
	for (j = 0; j < pf->nr_funcs && pf->funcs[j].id != pf->locs[i].function; j++)
		;
	assert_true(j < pf->nr_funcs);
	return pstr(pf, pf->funcs[j].name);
}

/* Sample s's stack as "leaf;caller;...;root". */
static const char *pstack(const struct prof *pf, const struct psample *s)
{
	static char buf[512];
	size_t k, n = 0;

	buf[0] = '\0';
	for (k = 0; k < s->nr_locs; k++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", k ? ";" : "", pframe(pf, s, k));
	return buf;
}

/* The string of label key on s, or NULL; the number of it in *num (num may be NULL). */
static const char *plabel(const struct prof *pf, const struct psample *s, const char *key,
			  uint64_t *num)
{
	size_t i;

	for (i = 0; i < s->nr_labels; i++) {
		if (strcmp(pstr(pf, s->labels[i].key), key))
			continue;
		if (num)
			*num = s->labels[i].num;
		return s->labels[i].str ? pstr(pf, s->labels[i].str) : "";
	}
	return NULL;
}

/*
 * The one sample of thread tid in state ("" for CPU samples) with stack ("leaf;...;root");
 * fails if there is none or several.
 */
static const struct psample *pfind(const struct prof *pf, uint64_t tid, const char *state,
				   const char *stack)
{
	const struct psample *found = NULL;
	const char *st;
	uint64_t t;
	size_t i;

	for (i = 0; i < pf->nr_samples; i++) {
		const struct psample *s = &pf->samples[i];

		st = plabel(pf, s, "state", NULL);
		if (!plabel(pf, s, "tid", &t) || t != tid || strcmp(st ? st : "", state) ||
		    strcmp(pstack(pf, s), stack))
			continue;
		if (found)
			fail_msg("two samples of tid %llu %s %s", (unsigned long long)tid, state,
				 stack);
		found = s;
	}
	if (!found)
		fail_msg("no sample of tid %llu %s %s", (unsigned long long)tid, state, stack);
	return found;
}

static void export_prof(const struct tmp *t, const struct jt_filter *filter, struct prof *pf)
{
	size_t len;
	char *gz;
	int ret;

	gz = run_export(t, jt_export_pprof, filter, "p.pb.gz", &ret, &len);
	assert_int_equal(ret, 0);
	prof_decode(gz, len, pf);
	free(gz);
}

/* ---- pprof ---- */

#define TAKE "schedule;pthread_cond_wait;Queue.take();Main.main(String[])"
#define DISK "read;Disk.read();Main.main(String[])"
#define SPIN "Hot.spin(int);Main.main(String[])"

/*
 * An off_cpu sample type in nanoseconds after samples and cpu, samples still the default:
 * each wait a sample of the stack it left with and its time there, merged by thread, state
 * and stack (the two sleeps in Queue.take(): 30 + 8 ms), labelled with its thread and
 * state; a sum of short waits the one location "[short waits]", in no mapping; CPU samples
 * 0 in off_cpu and waits 0 in samples and cpu; the waits' times add up to the log's.
 */
static void test_pprof_off_cpu_values(void **state)
{
	struct tmp *t = *state;
	const struct psample *s;
	struct prof pf;
	uint64_t sum = 0, pid;
	size_t i;

	write_waits_log(t->log, true);
	export_prof(t, NULL, &pf);
	assert_int_equal(pf.nr_types, 3);
	assert_int_equal(ptype(&pf, "samples"), 0);
	assert_int_equal(ptype(&pf, "cpu"), 1);
	assert_int_equal(ptype(&pf, "off_cpu"), 2);
	assert_string_equal(pstr(&pf, pf.default_type), "samples");

	s = pfind(&pf, 101, "sleep", TAKE);
	assert_int_equal(s->nr_values, 3);
	assert_int_equal(s->values[0], 0);
	assert_int_equal(s->values[1], 0);
	assert_int_equal(s->values[2], 38 * VL_MS);
	assert_string_equal(plabel(&pf, s, "thread", NULL), "worker");
	assert_string_equal(plabel(&pf, s, "comm", NULL), "java");
	assert_non_null(plabel(&pf, s, "pid", &pid));
	assert_int_equal(pid, JAVA);
	s = pfind(&pf, 101, "blocked", DISK);
	assert_int_equal(s->values[2], 12 * VL_MS);
	s = pfind(&pf, 101, "short", "[short waits]");
	assert_int_equal(s->values[0], 0);
	assert_int_equal(s->values[2], 700000);
	for (i = 0; i < pf.nr_locs && pf.locs[i].id != s->locs[0]; i++)
		;
	assert_int_equal(pf.locs[i].mapping, 0);
	assert_int_equal(pf.locs[i].address, 0);
	s = pfind(&pf, 102, "preempted", SPIN);
	assert_int_equal(s->values[2], 5 * VL_MS);
	assert_null(plabel(&pf, s, "thread", NULL));	/* never named */
	s = pfind(&pf, 201, "sleep", "JS:*poll /app.js:3");
	assert_int_equal(s->values[2], 35 * VL_MS);
	assert_string_equal(plabel(&pf, s, "comm", NULL), "node");
	/* the CPU samples: 8 at 1000 Hz, nothing off the CPU */
	s = pfind(&pf, 101, "", SPIN);
	assert_int_equal(s->values[0], 8);
	assert_int_equal(s->values[1], 8 * VL_MS);
	assert_int_equal(s->values[2], 0);
	assert_int_equal(pf.nr_samples, 6);
	for (i = 0; i < pf.nr_samples; i++)
		sum += pf.samples[i].values[2];
	assert_int_equal(sum, OFF_TOTAL);
	prof_free(&pf);
}

/*
 * The CPU view is the one the log without its waits gives: the same CPU samples with the
 * same counts and times, first; a log recorded without --off-cpu has no off_cpu type.
 */
static void test_pprof_cpu_view_unchanged_by_waits(void **state)
{
	struct tmp *t = *state;
	struct prof with, without;
	size_t i, j;

	write_waits_log(t->log, false);
	export_prof(t, NULL, &without);
	assert_int_equal(without.nr_types, 2);
	assert_int_equal(ptype(&without, "off_cpu"), -1);
	for (i = 0; i < without.nr_strings; i++)
		assert_null(strstr(without.strings[i], "short waits"));
	unlink(t->log);
	write_waits_log(t->log, true);
	export_prof(t, NULL, &with);
	assert_true(without.nr_samples > 0);
	for (i = 0; i < without.nr_samples; i++) {
		const struct psample *a = &without.samples[i], *b = &with.samples[i];

		assert_string_equal(pstack(&with, b), pstack(&without, a));
		assert_null(plabel(&with, b, "state", NULL));
		for (j = 0; j < 2; j++)
			assert_int_equal(b->values[j], a->values[j]);
		assert_int_equal(b->values[2], 0);
	}
	for (; i < with.nr_samples; i++) {	/* then the waits, none counted as CPU */
		assert_non_null(plabel(&with, &with.samples[i], "state", NULL));
		assert_int_equal(with.samples[i].values[0], 0);
		assert_int_equal(with.samples[i].values[1], 0);
	}
	assert_string_equal(pstr(&with, with.default_type), "samples");
	prof_free(&with);
	prof_free(&without);
}

/* --pid and --to keep the waits of their process and time (when the thread ran again). */
static void test_pprof_off_cpu_filtered(void **state)
{
	struct tmp *t = *state;
	struct jt_filter f;
	const struct psample *s;
	struct prof pf;

	write_waits_log(t->log, true);
	jt_filter__init(&f);
	assert_int_equal(jt_filter__parse(&f, "--pid", "200"), 0);
	export_prof(t, &f, &pf);
	assert_int_equal(pf.nr_samples, 1);
	s = pfind(&pf, 201, "sleep", "JS:*poll /app.js:3");
	assert_int_equal(s->values[2], 35 * VL_MS);
	prof_free(&pf);

	jt_filter__init(&f);
	assert_int_equal(jt_filter__parse(&f, "--to", "0.030"), 0);	/* 30 ms */
	export_prof(t, &f, &pf);
	assert_int_equal(pf.nr_samples, 2);
	assert_int_equal(pfind(&pf, 102, "preempted", SPIN)->values[2], 5 * VL_MS);
	assert_int_equal(pfind(&pf, 101, "", SPIN)->values[0], 5);
	prof_free(&pf);
}

/* ---- speedscope ---- */

/* The index of the frame named name in the shared frames of a speedscope file. */
static unsigned ss_frame(const char *json, const char *name)
{
	const char *frames = strstr(json, "\"shared\":{\"frames\":["), *end, *hit, *p;
	char want[256];
	unsigned i = 0;

	assert_non_null(frames);
	end = strstr(frames, "]},");
	assert_non_null(end);
	snprintf(want, sizeof(want), "{\"name\":\"%s\",", name);
	hit = strstr(frames, want);
	if (!hit || hit > end)
		fail_msg("no frame %s", name);
	for (p = strstr(frames, "{\"name\":"); p < hit; p = strstr(p + 1, "{\"name\":"))
		i++;
	return i;
}

/* The profile named name ("type","name" and what follows, up to the next profile). */
static char *ss_profile(const char *json, const char *type, const char *name)
{
	char want[256];
	const char *p, *next;
	char *prof;
	size_t at;

	snprintf(want, sizeof(want), "{\"type\":\"%s\",\"name\":\"%s\",", type, name);
	p = strstr(json, want);
	if (!p)
		fail_msg("no %s profile %s", type, name);
	at = p - json;
	next = strstr(json + at + 1, "\n{\"type\":\"sampled\"");
	if (!next)
		next = strstr(json + at + 1, "\n{\"type\":\"evented\"");
	prof = strndup(p, next ? (size_t)(next - p) : strlen(p));
	assert_non_null(prof);
	return prof;
}

/*
 * Each wait in its thread's sampled profile, in time order with the CPU samples, as the
 * stack it left with, root first, and its state's frame as the leaf, weighing its time
 * off the CPU (a CPU sample 1 ms at 1000 Hz); a sum of short waits its frame alone; the
 * profile's range the sum of both.
 */
static void test_speedscope_waits_in_time_order(void **state)
{
	struct tmp *t = *state;
	unsigned m, s, q, c, k, r, d, z, b, x, p, n;
	char want[512], *json, *prof;
	size_t len;
	int ret;

	write_waits_log(t->log, true);
	json = run_export(t, jt_export_speedscope, NULL, "s.json", &ret, &len);
	assert_int_equal(ret, 0);
	m = ss_frame(json, "Main.main(String[])");
	s = ss_frame(json, "Hot.spin(int)");
	q = ss_frame(json, "Queue.take()");
	c = ss_frame(json, "pthread_cond_wait");
	k = ss_frame(json, "schedule");
	r = ss_frame(json, "read");
	d = ss_frame(json, "Disk.read()");
	z = ss_frame(json, "[off-CPU: sleep]");
	b = ss_frame(json, "[off-CPU: blocked]");
	x = ss_frame(json, "[off-CPU: short waits]");
	p = ss_frame(json, "[off-CPU: preempted]");
	n = ss_frame(json, "JS:*poll /app.js:3");
	assert_non_null(strstr(json, "{\"name\":\"[off-CPU: sleep]\",\"file\":\"\"}"));

	prof = ss_profile(json, "sampled", "java 100/101 worker");
	snprintf(want, sizeof(want), "\"endValue\":%llu,\n\"samples\":[[%u,%u],[%u,%u,%u,%u,%u],"
		 "[%u,%u],[%u,%u,%u,%u],[%u,%u,%u,%u,%u],[%u]],\n\"weights\":[5000000,30000000,"
		 "3000000,12000000,8000000,700000]}", 58700000ULL, m, s, m, q, c, k, z, m, s, m,
		 d, r, b, m, q, c, k, z, x);
	if (!strstr(prof, want))
		fail_msg("thread 101's sampled profile:\n%s\nwanted:\n%s", prof, want);
	free(prof);
	prof = ss_profile(json, "sampled", "java 100/102");
	snprintf(want, sizeof(want), "\"endValue\":5000000,\n\"samples\":[[%u,%u,%u]],\n"
		 "\"weights\":[5000000]}", m, s, p);
	assert_non_null(strstr(prof, want));
	free(prof);
	prof = ss_profile(json, "sampled", "node 200/201");
	snprintf(want, sizeof(want), "\"samples\":[[%u,%u]],\n\"weights\":[35000000]}", n, z);
	assert_non_null(strstr(prof, want));
	free(prof);
	free(json);
}

/*
 * In a thread's calls profile each wait is its state's frame, open from when the thread
 * left the CPU to when it ran again, atop the calls open then; no short waits there.
 */
static void test_speedscope_waits_in_calls_profile(void **state)
{
	struct tmp *t = *state;
	char want[1024], *json, *prof;
	unsigned m, z, b;
	size_t len;
	int ret;

	write_waits_log(t->log, true);
	json = run_export(t, jt_export_speedscope, NULL, "s.json", &ret, &len);
	assert_int_equal(ret, 0);
	m = ss_frame(json, "Main.main(String[])");
	z = ss_frame(json, "[off-CPU: sleep]");
	b = ss_frame(json, "[off-CPU: blocked]");
	prof = ss_profile(json, "evented", "java 100/101 worker calls");
	snprintf(want, sizeof(want),
		 "\"events\":[{\"type\":\"O\",\"frame\":%u,\"at\":1000000},\n"
		 "{\"type\":\"O\",\"frame\":%u,\"at\":15000000},\n"
		 "{\"type\":\"C\",\"frame\":%u,\"at\":45000000},\n"
		 "{\"type\":\"O\",\"frame\":%u,\"at\":48000000},\n"
		 "{\"type\":\"C\",\"frame\":%u,\"at\":60000000},\n"
		 "{\"type\":\"O\",\"frame\":%u,\"at\":61000000},\n"
		 "{\"type\":\"C\",\"frame\":%u,\"at\":69000000},\n"
		 "{\"type\":\"C\",\"frame\":%u,\"at\":80000000}]}", m, z, z, b, b, z, z, m);
	if (!strstr(prof, want))
		fail_msg("thread 101's calls profile:\n%s\nwanted:\n%s", prof, want);
	free(prof);
	/* threads without calls have no calls profile */
	assert_null(strstr(json, "\"name\":\"java 100/102 calls\""));
	free(json);
}

/* ---- chrome ---- */

/*
 * Each wait an X event on its thread from when it left (ts, us) for as long as it was off
 * (dur), named for its state, args the innermost user frame and the stack leaf first; a
 * sum of short waits an instant event; threads with waits only named too; the totals,
 * short waits in them, in otherData.
 */
static void test_chrome_waits_as_complete_events(void **state)
{
	struct tmp *t = *state;
	size_t len;
	char *json;
	int ret;

	write_waits_log(t->log, true);
	json = run_export(t, jt_export_chrome, NULL, "c.json", &ret, &len);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(json, "\n{\"ph\":\"X\",\"pid\":100,\"tid\":101,\"ts\":15000.000,"
				     "\"dur\":30000.000,\"cat\":\"off-cpu\",\"name\":\"off-CPU: "
				     "sleep\",\"args\":{\"blocked in\":\"pthread_cond_wait\","
				     "\"stack\":[\"schedule\",\"pthread_cond_wait\",\"Queue.take()\","
				     "\"Main.main(String[])\"]}},\n"));
	assert_non_null(strstr(json, "\n{\"ph\":\"X\",\"pid\":100,\"tid\":101,\"ts\":48000.000,"
				     "\"dur\":12000.000,\"cat\":\"off-cpu\",\"name\":\"off-CPU: "
				     "blocked\",\"args\":{\"blocked in\":\"read\",\"stack\":["
				     "\"read\",\"Disk.read()\",\"Main.main(String[])\"]}},\n"));
	assert_non_null(strstr(json, "\n{\"ph\":\"X\",\"pid\":100,\"tid\":101,\"ts\":61000.000,"
				     "\"dur\":8000.000,\"cat\":\"off-cpu\",\"name\":\"off-CPU: "
				     "sleep\","));
	assert_non_null(strstr(json, "\n{\"ph\":\"X\",\"pid\":100,\"tid\":102,\"ts\":20000.000,"
				     "\"dur\":5000.000,\"cat\":\"off-cpu\",\"name\":\"off-CPU: "
				     "preempted\",\"args\":{\"blocked in\":\"Hot.spin(int)\","));
	assert_non_null(strstr(json, "\n{\"ph\":\"X\",\"pid\":200,\"tid\":201,\"ts\":5000.000,"
				     "\"dur\":35000.000,"));
	assert_non_null(strstr(json, "\n{\"ph\":\"i\",\"pid\":100,\"tid\":101,\"ts\":70000.000,"
				     "\"s\":\"t\",\"cat\":\"off-cpu\",\"name\":\"off-CPU: short "
				     "waits\",\"args\":{\"waits\":9,\"off_ns\":700000}},\n"));
	/* the calls as before */
	assert_non_null(strstr(json, "{\"ph\":\"B\",\"pid\":100,\"tid\":101,\"ts\":1000.000,"
				     "\"cat\":\"jit\",\"name\":\"Main.main(String[])\"}"));
	assert_non_null(strstr(json, "{\"ph\":\"E\",\"pid\":100,\"tid\":101,\"ts\":80000.000,"));
	assert_non_null(strstr(json, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":100,"
				     "\"tid\":102,\"args\":{\"name\":\"java 102\"}}"));
	assert_non_null(strstr(json, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":200,"
				     "\"tid\":200,\"args\":{\"name\":\"node 200\"}}"));
	assert_non_null(strstr(json, "\"off_cpu_waits\":14,\"off_cpu_ns\":90700000,"
				     "\"off_cpu_short_ns\":700000}}\n"));
	free(json);
}

/* A log recorded with --off-cpu and without --calls: waits only, no longer refused. */
static void test_chrome_waits_without_calls(void **state)
{
	struct tmp *t = *state;
	const struct jt_frame poll[] = { M(1, 0x8) };
	struct jt_log_header h = { .start_ns = VL_T0, .sample_hz = 99, .flags = JT_LOG_F_OFFCPU };
	struct jt_log_writer *w = jt_logw__create(t->log, &h, true);
	size_t len;
	char *json;
	int ret;

	assert_non_null(w);
	vl_proc(w, 0, NODE, "node", "node app.js");
	vl_method(w, 0, 1, NODE, "JS:*poll /app.js:3");
	vl_offcpu(w, 3 * VL_MS + 250, NODE, 201, 2 * VL_MS, JT_OFF_OTHER, 1, poll, 1);
	assert_int_equal(jt_logw__close(w), 0);
	json = run_export(t, jt_export_chrome, NULL, "c.json", &ret, &len);
	assert_int_equal(ret, 0);
	assert_non_null(strstr(json, "{\"ph\":\"X\",\"pid\":200,\"tid\":201,\"ts\":1000.250,"
				     "\"dur\":2000.000,\"cat\":\"off-cpu\",\"name\":\"off-CPU: "
				     "other\",\"args\":{\"blocked in\":\"JS:*poll /app.js:3\","
				     "\"stack\":[\"JS:*poll /app.js:3\"]}}"));
	assert_null(strstr(json, "\"ph\":\"B\""));
	free(json);
}

/* ---- go tool pprof, the real consumer, where Go is installed ---- */

static const char *find_go(void)
{
	static const char *const where[] = { "/usr/bin/go", "/usr/lib/go/bin/go",
					     "/usr/local/go/bin/go" };
	size_t k;

	for (k = 0; k < JT_ARRAY_SIZE(where); k++)
		if (!access(where[k], X_OK))
			return where[k];
	return NULL;
}

/* `go tool pprof ARGS pb` (ARGS NULL-terminated): its stdout; its stderr must be empty. */
static char *go_pprof(const struct tmp *t, const char *go, const char *pb, ...)
{
	char *argv[16], out[512], err[512], *text, *errs;
	int argc = 0, status, fd;
	size_t len;
	va_list ap;
	pid_t pid;

	argv[argc++] = (char *)go;
	argv[argc++] = "tool";
	argv[argc++] = "pprof";
	va_start(ap, pb);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	argv[argc++] = (char *)pb;
	argv[argc] = NULL;
	snprintf(out, sizeof(out), "%s/go.out", t->dir);
	snprintf(err, sizeof(err), "%s/go.err", t->dir);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(126);
		fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 2) < 0)
			_exit(126);
		execv(go, argv);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	errs = slurp(err, &len);
	if (!WIFEXITED(status) || WEXITSTATUS(status) || len)
		fail_msg("go tool pprof %s: status %d, stderr:\n%s", argv[3], status, errs);
	free(errs);
	text = slurp(out, &len);
	return text;
}

/* The -top row of name: its flat and cum columns as printed ("38ms"); fails if none. */
static void go_row(const char *top, const char *name, char *flat, char *cum)
{
	const char *p = top, *nl;
	char line[256], got[128];

	for (; (nl = strchr(p, '\n')); p = nl + 1) {
		snprintf(line, sizeof(line), "%.*s", (int)(nl - p), p);
		/* "      38ms 41.90% 41.90%       38ms 41.90%  schedule" */
		if (sscanf(line, " %15s %*s %*s %15s %*s %127[^\n]", flat, cum, got) == 3 &&
		    !strcmp(got, name))
			return;
	}
	fail_msg("no row %s in:\n%s", name, top);
}

/*
 * go tool pprof -sample_index=off_cpu -top lists where the threads waited, with their
 * times (the kernel frame the leaf of the sleeps, the methods in cum); the default view
 * is the CPU samples, as printed for the same log without its waits.
 */
static void test_go_tool_pprof_reads_off_cpu(void **state)
{
	struct tmp *t = *state;
	const char *go = find_go();
	char pb[512], flat[16], cum[16], *top, *plain, *cpu;
	size_t len;
	int ret;

	if (!go) {
		print_message("go is missing (Debian's golang-go): go tool pprof not run\n");
		skip();
	}
	snprintf(pb, sizeof(pb), "%s/p.pb.gz", t->dir);
	write_waits_log(t->log, false);
	free(run_export(t, jt_export_pprof, NULL, "p.pb.gz", &ret, &len));
	assert_int_equal(ret, 0);
	plain = go_pprof(t, go, pb, "-top", NULL);
	unlink(t->log);
	write_waits_log(t->log, true);
	free(run_export(t, jt_export_pprof, NULL, "p.pb.gz", &ret, &len));
	assert_int_equal(ret, 0);

	top = go_pprof(t, go, pb, "-sample_index=off_cpu", "-top", NULL);
	print_message("go tool pprof -sample_index=off_cpu -top:\n%s", top);
	assert_non_null(strstr(top, "\nType: off_cpu\n"));
	assert_non_null(strstr(top, "Showing nodes accounting for 90.70ms, 100% of 90.70ms "
				    "total\n"));
	go_row(top, "schedule", flat, cum);
	assert_string_equal(flat, "38ms");
	go_row(top, "Queue.take()", flat, cum);
	assert_string_equal(flat, "0");
	assert_string_equal(cum, "38ms");
	go_row(top, "JS:*poll /app.js:3", flat, cum);
	assert_string_equal(flat, "35ms");
	go_row(top, "read", flat, cum);
	assert_string_equal(flat, "12ms");
	go_row(top, "Disk.read()", flat, cum);
	assert_string_equal(cum, "12ms");
	go_row(top, "Hot.spin(int)", flat, cum);
	assert_string_equal(flat, "5ms");
	go_row(top, "[short waits]", flat, cum);
	assert_string_equal(flat, "0.70ms");
	go_row(top, "Main.main", flat, cum);	/* pprof drops the parameters */
	assert_string_equal(cum, "55ms");
	free(top);

	cpu = go_pprof(t, go, pb, "-top", NULL);
	print_message("go tool pprof -top (the default, samples):\n%s", cpu);
	assert_non_null(strstr(cpu, "\nType: samples\n"));
	assert_string_equal(cpu, plain);
	free(cpu);
	free(plain);
}

/* ---- the command ---- */

/* `jitrace export --help` says how off-CPU time is exported, with an example. */
static void test_help_tells_off_cpu(void **state)
{
	struct tmp *t = *state;
	char *argv[] = { "jitrace export", "--help", NULL }, path[600], *help;
	int saved, fd, ret;
	size_t len;

	snprintf(path, sizeof(path), "%s/help.txt", t->dir);
	fflush(stdout);
	saved = dup(1);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 1);
	close(fd);
	ret = jt_cmd_export(2, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	assert_int_equal(ret, 0);
	help = slurp(path, &len);
	assert_non_null(strstr(help, "Off-CPU time (a log recorded with --off-cpu)"));
	assert_non_null(strstr(help, "sample type off_cpu/nanoseconds"));
	assert_non_null(strstr(help, "[short waits]"));
	assert_non_null(strstr(help, "\"[off-CPU: STATE]\""));
	assert_non_null(strstr(help, "needs a log recorded with --calls or --off-cpu"));
	assert_non_null(strstr(help, "  go tool pprof -sample_index=off_cpu -top waits.pb.gz"));
	free(help);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pprof_off_cpu_values, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_pprof_cpu_view_unchanged_by_waits, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_pprof_off_cpu_filtered, tmp_setup, tmp_teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_waits_in_time_order, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_speedscope_waits_in_calls_profile, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_waits_as_complete_events, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_chrome_waits_without_calls, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_go_tool_pprof_reads_off_cpu, tmp_setup,
						tmp_teardown),
		cmocka_unit_test_setup_teardown(test_help_tells_off_cpu, tmp_setup, tmp_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
