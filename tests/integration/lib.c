// SPDX-License-Identifier: GPL-2.0
/* Integration-test helpers: processes, log loading and the checks of the log's promises. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "join/ucopy.h"
#include "jt_events.h"
#include "lib.h"
#include "log/log.h"

/*
 * JT_TEST_FILTER=PATTERN runs only the tests whose names match (cmocka's * and ? globs),
 * e.g. one test of a program inside a guest kernel (scripts/test-kernels.sh). Read before
 * main() so that every integration program honours it without a line of its own.
 */
__attribute__((constructor)) static void it_filter_from_env(void)
{
	const char *pattern = getenv("JT_TEST_FILTER");

	if (pattern && *pattern)
		cmocka_set_test_filter(pattern);
}

unsigned int it_scale(void)
{
	const char *s = getenv("JT_TEST_SCALE");
	unsigned long n;
	char *end;

	if (!s || !*s)
		return 1;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || n < 1 || n > 100)
		fail_msg("JT_TEST_SCALE=%s: want a whole number from 1 to 100", s);
	return n;
}

char *it_scaled(char *buf, size_t len, unsigned long v)
{
	snprintf(buf, len, "%lu", v * it_scale());
	return buf;
}

/* v[id] = rec, growing v as needed */
static void by_id_put(const void ***v, size_t *nr, uint64_t id, const void *rec)
{
	if (id >= *nr) {
		size_t n = id + 1024;

		*v = realloc(*v, n * sizeof(**v));
		assert_non_null(*v);
		memset(*v + *nr, 0, (n - *nr) * sizeof(**v));
		*nr = n;
	}
	(*v)[id] = rec;
}

void it_log_load(const char *path, struct it_log *log)
{
	struct jt_log_reader *r = jt_logr__open(path);
	const struct jt_rec_hdr *h;
	size_t cap = 0;

	memset(log, 0, sizeof(*log));
	assert_non_null(r);
	log->hdr = *jt_logr__header(r);
	while ((h = jt_logr__next(r))) {
		struct jt_rec_hdr *copy = malloc(h->size);

		assert_non_null(copy);
		memcpy(copy, h, h->size);
		if (log->n == cap) {
			cap = cap ? 2 * cap : 1024;
			log->recs = realloc(log->recs, cap * sizeof(*log->recs));
			assert_non_null(log->recs);
		}
		log->recs[log->n++] = copy;
		if (h->type == JT_REC_METHOD)
			by_id_put((const void ***)&log->methods, &log->nr_methods,
				  ((const struct jt_rec_method *)copy)->id, copy);
		if (h->type == JT_REC_SYMBOL)
			by_id_put((const void ***)&log->symbols, &log->nr_symbols,
				  ((const struct jt_rec_symbol *)copy)->id, copy);
		if (h->type == JT_REC_MODULE)
			by_id_put((const void ***)&log->modules, &log->nr_modules,
				  ((const struct jt_rec_module *)copy)->id, copy);
	}
	log->state = jt_logr__state(r);
	if (log->state != JT_LOGR_END)
		fprintf(stderr, "log %s: %s\n", path, jt_logr__why(r));
	jt_logr__close(r);
}

void it_log_free(struct it_log *log)
{
	size_t i;

	for (i = 0; i < log->n; i++)
		free(log->recs[i]);
	free(log->recs);
	free(log->methods);
	free(log->symbols);
	free(log->modules);
	memset(log, 0, sizeof(*log));
}

const struct jt_rec_method *it_method(const struct it_log *log, uint64_t id)
{
	return id < log->nr_methods ? log->methods[id] : NULL;
}

const struct jt_rec_symbol *it_symbol(const struct it_log *log, uint64_t id)
{
	return id < log->nr_symbols ? log->symbols[id] : NULL;
}

bool it_frame_is_kernel(const struct it_log *log, const struct jt_frame *f)
{
	const struct jt_rec_symbol *y;

	if (JT_FRAME_KIND(f->ref) == JT_FRAME_KERNEL)
		return true;
	y = JT_FRAME_KIND(f->ref) == JT_FRAME_SYMBOL ? it_symbol(log, JT_FRAME_ID(f->ref)) : NULL;
	return y && !y->module;
}

int it_frame_name(const struct it_log *log, const struct jt_frame *f, char *buf, size_t len)
{
	uint64_t id = JT_FRAME_ID(f->ref);
	const struct jt_rec_module *mod;
	const struct jt_rec_method *m;
	const struct jt_rec_symbol *y;

	switch (JT_FRAME_KIND(f->ref)) {
	case JT_FRAME_USER:	/* in anonymous executable memory: named by it */
		mod = id && id < log->nr_modules ? log->modules[id] : NULL;
		if (mod)
			return snprintf(buf, len, "%.*s", mod->path_len, mod->path), 0;
		break;
	case JT_FRAME_METHOD:
		m = it_method(log, JT_FRAME_ID(f->ref));
		if (m)
			return snprintf(buf, len, "%.*s", m->name_len, m->name), 0;
		break;
	case JT_FRAME_SYMBOL:
		y = it_symbol(log, JT_FRAME_ID(f->ref));
		if (y)
			return snprintf(buf, len, "%.*s", y->name_len, y->name), 0;
		break;
	}
	snprintf(buf, len, "0x%llx", (unsigned long long)f->off);
	return -1;
}

bool it_name_is(const struct jt_rec_method *m, const char *name)
{
	return m && m->name_len == strlen(name) && !memcmp(m->name, name, m->name_len);
}

uint64_t it_count_leaf(const struct it_log *log, uint32_t pid, uint64_t after, const char *name)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];

		if (s->h.type == JT_REC_SAMPLE && s->pid == pid && s->h.ts >= after)
			n += it_name_is(it_leaf_method(log, s), name);
	}
	return n;
}

uint64_t it_count_leaf_with(const struct it_log *log, uint32_t pid, const char *part)
{
	const struct jt_rec_method *m;
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];

		if (s->h.type != JT_REC_SAMPLE || s->pid != pid)
			continue;
		m = it_leaf_method(log, s);
		n += m && memmem(m->name, m->name_len, part, strlen(part));
	}
	return n;
}

const struct jt_rec_method *it_leaf_method(const struct it_log *log,
					   const struct jt_rec_sample *s)
{
	unsigned int i;

	for (i = 0; i < s->nr_frames; i++) {
		uint64_t ref = s->frames[i].ref;

		if (JT_FRAME_KIND(ref) == JT_FRAME_KERNEL)
			continue;
		if (JT_FRAME_KIND(ref) != JT_FRAME_METHOD)
			return NULL;
		return it_method(log, JT_FRAME_ID(ref));
	}
	return NULL;
}

/* A bitmap of ids seen so far. */
struct seen {
	uint8_t *bits;
	size_t n;
};

static bool seen_test(const struct seen *s, uint64_t id)
{
	return id < s->n * 8 && (s->bits[id / 8] >> (id % 8)) & 1;
}

static void seen_set(struct seen *s, uint64_t id)
{
	if (id >= s->n * 8) {
		size_t n = id / 8 + 4096;

		s->bits = realloc(s->bits, n);
		assert_non_null(s->bits);
		memset(s->bits + s->n, 0, n - s->n);
		s->n = n;
	}
	s->bits[id / 8] |= 1 << (id % 8);
}

/* promise 2 for a sample's (or off-CPU record's) frames: each defined before it */
static void check_frames(size_t i, const struct jt_rec_sample *s, const struct seen *methods,
			 const struct seen *modules, const struct seen *symbols)
{
	unsigned int k;

	for (k = 0; k < s->nr_frames; k++) {
		uint64_t ref = s->frames[k].ref, id = JT_FRAME_ID(ref);

		if (JT_FRAME_KIND(ref) == JT_FRAME_METHOD && !seen_test(methods, id))
			fail_msg("record %zu references method %llu before its definition", i,
				 (unsigned long long)id);
		if ((JT_FRAME_KIND(ref) == JT_FRAME_MODULE ||
		     (JT_FRAME_KIND(ref) == JT_FRAME_USER && id)) && !seen_test(modules, id))
			fail_msg("record %zu references module %llu before its definition", i,
				 (unsigned long long)id);
		if (JT_FRAME_KIND(ref) == JT_FRAME_SYMBOL && !seen_test(symbols, id))
			fail_msg("record %zu references symbol %llu before its definition", i,
				 (unsigned long long)id);
		if (JT_FRAME_KIND(ref) == JT_FRAME_TRUNCATED && k != s->nr_frames - 1U)
			fail_msg("record %zu is cut at frame %u of %u", i, k, s->nr_frames);
	}
}

void it_check_promises(const struct it_log *log)
{
	struct seen methods = { 0 }, modules = { 0 }, symbols = { 0 };
	bool drop_seen[JT_DROP_MAX] = { 0 };
	uint64_t last_ts = 0;
	size_t i;
	unsigned int k;

	assert_int_equal(log->state, JT_LOGR_END);
	assert_true(log->n > 0);
	assert_int_equal(log->recs[log->n - 1]->type, JT_REC_END);
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_hdr *h = log->recs[i];

		/* promise 1: nondecreasing time */
		if (h->ts < last_ts)
			fail_msg("record %zu (type %u) at %llu precedes the one before it at %llu",
				 i, h->type, (unsigned long long)h->ts,
				 (unsigned long long)last_ts);
		last_ts = h->ts;
		switch (h->type) {
		case JT_REC_METHOD: {
			const struct jt_rec_method *m = (const void *)h;

			/* promise 3: defined once */
			if (seen_test(&methods, m->id))
				fail_msg("method %llu defined twice", (unsigned long long)m->id);
			seen_set(&methods, m->id);
			break;
		}
		case JT_REC_MODULE: {
			const struct jt_rec_module *m = (const void *)h;

			if (seen_test(&modules, m->id))
				fail_msg("module %llu defined twice", (unsigned long long)m->id);
			seen_set(&modules, m->id);
			break;
		}
		case JT_REC_SYMBOL: {
			const struct jt_rec_symbol *y = (const void *)h;

			if (seen_test(&symbols, y->id))
				fail_msg("symbol %llu defined twice", (unsigned long long)y->id);
			if (y->module && !seen_test(&modules, y->module))
				fail_msg("symbol %llu names module %llu before its definition",
					 (unsigned long long)y->id, (unsigned long long)y->module);
			seen_set(&symbols, y->id);
			break;
		}
		case JT_REC_ENTER:
		case JT_REC_LEAVE:
		case JT_REC_UNLOAD: {
			const struct jt_rec_call *c = (const void *)h;

			/* promise 2: defined before referenced */
			if (!seen_test(&methods, c->id))
				fail_msg("record %zu references method %llu before its definition",
					 i, (unsigned long long)c->id);
			break;
		}
		case JT_REC_SAMPLE:
			check_frames(i, (const void *)h, &methods, &modules, &symbols);
			break;
		case JT_REC_OFFCPU: {
			const struct jt_rec_offcpu *o = (const void *)h;

			assert_int_equal(o->smp.h.type, JT_REC_SAMPLE);
			assert_true(o->smp.h.ts <= o->h.ts);
			check_frames(i, &o->smp, &methods, &modules, &symbols);
			break;
		}
		case JT_REC_DROP: {
			const struct jt_rec_drop *d = (const void *)h;

			assert_true(d->what < JT_DROP_MAX);
			drop_seen[d->what] = true;
			break;
		}
		}
	}
	/* promise 4: every kind of loss is accounted for, zero or not */
	for (k = 0; k < JT_DROP_MAX; k++)
		if (!drop_seen[k])
			fail_msg("no drop record of kind %u", k);
	free(methods.bits);
	free(modules.bits);
	free(symbols.bits);
}

uint64_t it_drops_total(const struct it_log *log)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_drop *d = (const void *)log->recs[i];

		/* frames left unnamed and stacks cut are counted, but their samples are kept */
		if (d->h.type == JT_REC_DROP && d->what != JT_DROP_UNSURE_FRAME &&
		    d->what != JT_DROP_BROKEN_STACK)
			n += d->count;
	}
	return n;
}

uint64_t it_drops_of(const struct it_log *log, unsigned int what)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_drop *d = (const void *)log->recs[i];

		if (d->h.type == JT_REC_DROP && d->what == what)
			n += d->count;
	}
	return n;
}

/* 4.5 standard errors: a share this far from the truth by chance alone once in ~150,000. */
#define IT_Z 4.5

static double share_error(double p, uint64_t n)
{
	return IT_Z * sqrt(p * (1 - p) / (double)n);
}

void it_assert_share_near(const char *what, uint64_t k, uint64_t n, double want,
			  double systematic)
{
	double got = n ? (double)k / n : 0, tol = systematic + share_error(want, n ? n : 1);

	print_message("%s: %llu of %llu = %.1f%%, want %.1f%% +- %.1f (%.1f systematic + "
		      "%.1f for %llu samples)\n", what, (unsigned long long)k,
		      (unsigned long long)n, 100 * got, 100 * want, 100 * tol, 100 * systematic,
		      100 * (tol - systematic), (unsigned long long)n);
	assert_true(n >= IT_MIN_SAMPLES);
	if (got < want - tol || got > want + tol)
		fail_msg("%s: %.1f%% is outside %.1f%% +- %.1f", what, 100 * got, 100 * want,
			 100 * tol);
}

void it_assert_share_at_least(const char *what, uint64_t k, uint64_t n, double floor,
			      const char *why)
{
	double got = n ? (double)k / n : 0, least = floor - share_error(floor, n ? n : 1);

	print_message("%s: %llu of %llu = %.1f%%, at least %.1f%% (%.0f%% less %.1f for %llu "
		      "samples: %s)\n", what, (unsigned long long)k, (unsigned long long)n,
		      100 * got, 100 * least, 100 * floor, 100 * (floor - least),
		      (unsigned long long)n, why);
	assert_true(n > 0);
	if (got < least)
		fail_msg("%s: %.1f%% is under %.1f%%", what, 100 * got, 100 * least);
}

/* Whether the method the log defines as id is called name. */
static bool method_named(const struct it_log *log, uint64_t id, const char *name)
{
	const struct jt_rec_method *m = it_method(log, id);

	return m && m->name_len == strlen(name) && !memcmp(m->name, name, m->name_len);
}

uint64_t it_count_calls(const struct it_log *log, uint32_t pid, uint16_t type, const char *name)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_call *c = (const void *)log->recs[i];

		n += c->h.type == type && c->pid == pid && method_named(log, c->id, name);
	}
	return n;
}

uint64_t it_summed_calls(const struct it_log *log, uint32_t pid, const char *name,
			 uint64_t *incl, uint64_t *excl)
{
	uint64_t n = 0;
	size_t i;

	*incl = *excl = 0;
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_callsum *c = (const void *)log->recs[i];

		if (c->h.type != JT_REC_CALLSUM || c->pid != pid || !method_named(log, c->id, name))
			continue;
		n += c->calls;
		*incl += c->incl_ns;
		*excl += c->excl_ns;
	}
	return n;
}

void it_toy_parse(const char *path, struct it_toy *t)
{
	FILE *f = fopen(path, "r");
	char line[512];

	memset(t, 0, sizeof(*t));
	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		char name[64];
		unsigned long long v;
		int pid;

		if (sscanf(line, "pid %d", &pid) == 1)
			t->pid = pid;
		else if (sscanf(line, "calls %63[^=]=%llu", name, &v) == 2 && t->nr_calls < 64) {
			snprintf(t->names[t->nr_calls], sizeof(t->names[0]), "%s", name);
			t->calls[t->nr_calls++] = v;
		} else if (sscanf(line, "switch begin_ns=%llu", &v) == 1)
			t->switch_begin = v;
		else if (sscanf(line, "switch end_ns=%llu", &v) == 1)
			t->switch_end = v;
		else if (!strcmp(line, "done\n"))
			t->done = true;
	}
	fclose(f);
}

int it_shares_left(const char *kind, pid_t pid)
{
	char prefix[48];
	struct dirent *de;
	DIR *d = opendir("/run/jitrace");
	int n = 0;

	snprintf(prefix, sizeof(prefix), "%s-%d-", kind, (int)pid);
	while (d && (de = readdir(d)))
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

char *it_slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, n, f), n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

const char *it_dir(void)
{
	static char dir[64];

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/jitrace-itest.XXXXXX");
		if (!mkdtemp(dir))
			fail_msg("mkdtemp: %s", strerror(errno));
	}
	return dir;
}

char *it_path_dup(const char *name)
{
	char *p;

	if (asprintf(&p, "%s/%s", it_dir(), name) < 0)
		fail_msg("out of memory");
	return p;
}

char *it_path_ext(const char *name, const char *ext)
{
	char *p;

	if (asprintf(&p, "%s/%s.%s", it_dir(), name, ext) < 0)
		fail_msg("out of memory");
	return p;
}

pid_t it_spawn(char *const argv[], const char *out, const char *err)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		int fd;

		if (out) {
			fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || dup2(fd, 1) < 0)
				_exit(126);
			close(fd);
		}
		if (err) {
			fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || dup2(fd, 2) < 0)
				_exit(126);
			close(fd);
		}
		execv(argv[0], argv);
		_exit(127);
	}
	return pid;
}

int it_wait(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int it_run(char *const argv[], const char *out, const char *err)
{
	return it_wait(it_spawn(argv, out, err));
}

bool it_wait_for_text(const char *file, const char *text, int timeout_ms)
{
	int waited;

	for (waited = 0; waited <= timeout_ms; waited += 20) {
		char buf[8192];
		FILE *f = fopen(file, "r");
		size_t n = 0;

		if (f) {
			n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
		}
		buf[n] = 0;
		if (strstr(buf, text))
			return true;
		usleep(20000);
	}
	return false;
}

/* Whether frame i of s is called name (a symbol or a method); "*PART": its name holds PART. */
bool it_frame_is(const struct it_log *log, const struct jt_rec_sample *s, unsigned int i,
		 const char *name)
{
	char buf[512];

	if (i >= s->nr_frames || it_frame_name(log, &s->frames[i], buf, sizeof(buf)))
		return false;
	return name[0] == '*' ? strstr(buf, name + 1) != NULL : !strcmp(buf, name);
}

/* The first frame of s at or after from called name, or s->nr_frames. */
unsigned int it_find_frame(const struct it_log *log, const struct jt_rec_sample *s,
			   unsigned int from, const char *name)
{
	for (; from < s->nr_frames && !it_frame_is(log, s, from, name); from++)
		;
	return from;
}

void it_count_chains(const struct it_log *log, uint32_t pid, const char *leaf,
		     const char *const *chain, unsigned int nr, bool adjacent, uint64_t *n,
		     uint64_t *whole)
{
	it_count_chains_of(log, JT_REC_SAMPLE, pid, leaf, chain, nr, adjacent, n, whole);
}

void it_count_chains_of(const struct it_log *log, uint16_t type, uint32_t pid, const char *leaf,
			const char *const *chain, unsigned int nr, bool adjacent, uint64_t *n,
			uint64_t *whole)
{
	size_t i;

	*n = *whole = 0;
	for (i = 0; i < log->n; i++) {
		const struct jt_rec_sample *s = (const void *)log->recs[i];
		unsigned int at = 0, k;

		if (log->recs[i]->type != type)
			continue;
		if (type == JT_REC_OFFCPU)
			s = &((const struct jt_rec_offcpu *)log->recs[i])->smp;
		if (s->pid != pid || !it_frame_is(log, s, 0, leaf))
			continue;
		(*n)++;
		for (k = 0; k < nr; k++) {
			unsigned int next = adjacent ? at + 1 :
					    it_find_frame(log, s, at + 1, chain[k]);

			if (!it_frame_is(log, s, next, chain[k]))
				break;
			at = next;
		}
		*whole += k == nr;
	}
}

/* What jitrace said (err) of the samples' stack copies into *said (it_record_copies). */
static void copies_read(const char *err, struct it_copies *said)
{
	unsigned long long bytes, over, grown;
	const char *at = strstr(err, "user stack copies: ");

	memset(said, 0, sizeof(*said));
	if (!at)
		return;
	if (sscanf(at, "user stack copies: %llu walked, %llu bytes each on average, %llu with the "
		   "kernel's frame-pointer walk; cut %llu times below %*u bytes to what threads' "
		   "walks needed, grown again %llu times; larger than their thread's cut: %llu",
		   &said->walked, &bytes, &said->fp_walks, &said->cuts, &grown, &over) != 6)
		fail_msg("cannot read jitrace's line on the stack copies");
	print_message("copies walked %llu (%llu bytes each on average, %llu with the kernel's "
		      "walk), cut %llu times, %llu larger than their thread's cut\n", said->walked,
		      bytes, said->fp_walks, said->cuts, over);
	assert_int_equal(over, 0);
	assert_true(said->fp_walks <= said->walked);
}

void it_record_copies(char *const argv[], const char *log_path, struct it_copies *said)
{
	char err_path[PATH_MAX], *err;
	int status;

	snprintf(err_path, sizeof(err_path), "%s.err", log_path);
	status = it_run(argv, "/dev/null", err_path);
	err = it_slurp(err_path);
	print_message("%s", err);
	assert_int_equal(status, 0);
	copies_read(err, said);
	free(err);
}

/*
 * A thread whose walks over its copy reach its stack's end (whole of them, UCOPY_QUICK at
 * least) is told to leave the kernel's frame-pointer walk out: only its first window's
 * samples, and those before the sampler is told, have it (at 999 Hz, a reorder window and a
 * tick: about 110): fewer than half of the walks.
 */
void it_assert_fp_walk_dropped(const struct it_copies *said, uint64_t whole)
{
	if (whole < UCOPY_QUICK)
		return;
	if (said->fp_walks * 2 >= said->walked)
		fail_msg("%llu of %llu walks had the kernel's frame-pointer walk, though %llu "
			 "were whole by the copy", said->fp_walks, said->walked,
			 (unsigned long long)whole);
}
