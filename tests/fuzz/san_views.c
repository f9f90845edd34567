// SPDX-License-Identifier: GPL-2.0
/*
 * The jitrace program built with ASan and UBSan (build/san/jitrace) run as users run it over
 * crafted logs: the fuzz corpora's logs (tests/fuzz/corpus/log and views, read as the
 * fuzzers read them), an empty log, and mutants of each (bytes of the whole file changed,
 * or records changed under a right crc32 so that they reach the views). Every log goes
 * through dump, report (text and JSON), flamegraph (SVG and folded) and export (pprof,
 * speedscope, chrome), strict or --salvage. Any sanitizer report fails the test, naming
 * the command and keeping its input. Run from the repository root (make test does).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "log/log.h"
#include "wrap.h"

#ifndef SAN_JITRACE
#define SAN_JITRACE "build/san/jitrace"
#endif
#define CORPUS "tests/fuzz/corpus/"
#define MUTANTS 24		/* of each base log, each kind; JT_SAN_MUTANTS overrides */
#define SAN_EXIT 86		/* what a sanitizer exits with, told apart from jitrace's 1 */

extern char **environ;

struct base {
	uint8_t *raw;		/* a block's inflated records (mutated, then wrapped); or NULL */
	size_t raw_len;
	uint8_t *file;		/* the whole log */
	size_t len;
	char name[64];
};

struct run {
	char dir[256];
	char in[300], out[300], err[300];
	struct base bases[16];
	size_t nr_bases;
	unsigned int logs, runs, found;
	uint64_t seed;
};

static uint64_t rnd(struct run *r)
{
	r->seed ^= r->seed << 13;
	r->seed ^= r->seed >> 7;
	r->seed ^= r->seed << 17;
	return r->seed;
}

static void add_base(struct run *r, const char *name, const uint8_t *data, size_t size)
{
	struct base *b = &r->bases[r->nr_bases];
	const uint8_t *d = data;
	uint8_t *file = NULL;
	size_t i, len;

	assert_true(r->nr_bases < sizeof(r->bases) / sizeof(r->bases[0]));
	len = fuzz_input(&d, size, &file);
	if (!len)
		return;
	for (i = 0; i < r->nr_bases; i++)	/* the two corpora share their seeds */
		if (r->bases[i].len == len && !memcmp(r->bases[i].file, d, len)) {
			free(file);
			return;
		}
	memset(b, 0, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->len = len;
	b->file = malloc(len);
	assert_non_null(b->file);
	memcpy(b->file, d, len);
	if (data[0] & 1) {	/* records, which mutants change under a right crc32 */
		b->raw_len = size - 1;
		b->raw = malloc(b->raw_len);
		assert_non_null(b->raw);
		memcpy(b->raw, data + 1, b->raw_len);
	}
	free(file);
	r->nr_bases++;
}

static void add_corpus(struct run *r, const char *dir)
{
	struct dirent *de;
	char path[512];
	DIR *d = opendir(dir);
	size_t len;
	char *data;

	assert_non_null(d);
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		data = slurp(path, &len);
		add_base(r, de->d_name, (const uint8_t *)data, len);
		free(data);
	}
	closedir(d);
}

/* A log with nothing in it but its end: every view's "nothing to show" path. */
static void add_empty(struct run *r)
{
	struct jt_log_header h = { .start_ns = 1000, .ncpus = 2, .sample_hz = 99 };
	struct jt_log_writer *w;
	uint8_t *data;
	size_t len;
	char *file;

	snprintf(r->in, sizeof(r->in), "%s/empty.jtl", r->dir);
	w = jt_logw__create(r->in, &h, false);
	assert_non_null(w);
	assert_int_equal(jt_logw__close(w), 0);
	file = slurp(r->in, &len);
	unlink(r->in);
	data = malloc(len + 1);
	assert_non_null(data);
	data[0] = 0;	/* a whole file, as the fuzzers take one */
	memcpy(data + 1, file, len);
	add_base(r, "empty", data, len + 1);
	free(data);
	free(file);
}

/* Change a few bytes of buf: bits, whole bytes, or a length-like field made huge. */
static void mutate(struct run *r, uint8_t *buf, size_t len, size_t hot, size_t hot_len)
{
	unsigned int k, n = 1 + rnd(r) % 4;
	size_t at;

	for (k = 0; k < n && len; k++) {
		/* half where parsing decides most: the headers (or a record's first bytes) */
		at = (k % 2 && hot_len ? hot + rnd(r) % hot_len : rnd(r)) % len;
		switch (rnd(r) % 4) {
		case 0:
			buf[at] ^= 1U << rnd(r) % 8;
			break;
		case 1:
			buf[at] = rnd(r);
			break;
		case 2:
			buf[at] = 0xff;
			break;
		default:
			buf[at] = 0;
			break;
		}
	}
}

static void spit_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

static void write_in(struct run *r, const uint8_t *buf, size_t len)
{
	spit_file(r->in, buf, len);
}

/* Did a sanitizer speak? Its exit code, a signal, or its words on stderr. */
static bool sanitizer_spoke(const char *err, int status)
{
	if (WIFSIGNALED(status))
		return true;
	if (WIFEXITED(status) && WEXITSTATUS(status) == SAN_EXIT)
		return true;
	return strstr(err, "runtime error:") || strstr(err, "Sanitizer") ||
	       strstr(err, "==ERROR");
}

/*
 * Run jitrace with args (NULL-terminated), then --salvage if salvaging, then r->in. A
 * sanitizer report is said and counted, its input kept beside it as found-N.jtl.
 */
static void run_one(struct run *r, const char *what, bool salvage, ...)
{
	const char *argv[16] = { SAN_JITRACE };
	posix_spawn_file_actions_t fa;
	char *err, *in, keep[400];
	size_t len, argc = 1;
	va_list ap;
	pid_t pid;
	int status;

	va_start(ap, salvage);
	while ((argv[argc] = va_arg(ap, const char *)))
		argc++;
	va_end(ap);
	if (salvage)
		argv[argc++] = "--salvage";
	argv[argc++] = r->in;
	argv[argc] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, r->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_int_equal(posix_spawn(&pid, SAN_JITRACE, &fa, NULL, (char **)argv, environ), 0);
	posix_spawn_file_actions_destroy(&fa);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	r->runs++;
	unlink(r->out);
	err = slurp(r->err, &len);
	if (sanitizer_spoke(err, status)) {
		snprintf(keep, sizeof(keep), "%s/found-%u.jtl", r->dir, r->found++);
		in = slurp(r->in, &len);
		spit_file(keep, in, len);
		free(in);
		print_error("%s: jitrace %s%s, exit status 0x%x; its input kept as %s:\n%.4000s\n",
			    what, argv[1], salvage ? " --salvage" : "", status, keep, err);
	}
	free(err);
}

/* Every offline command over r->in, strict or salvaging. */
static void every_view(struct run *r, const char *what, bool salvage)
{
	r->logs++;
	run_one(r, what, salvage, "dump", NULL);
	run_one(r, what, salvage, "report", NULL);
	run_one(r, what, salvage, "report", "--json", NULL);
	run_one(r, what, salvage, "flamegraph", "--folded", "-o", r->out, NULL);
	run_one(r, what, salvage, "flamegraph", "-o", r->out, NULL);
	run_one(r, what, salvage, "export", "--format", "pprof", "-o", r->out, NULL);
	run_one(r, what, salvage, "export", "--format", "speedscope", "-o", r->out, NULL);
	run_one(r, what, salvage, "export", "--format", "chrome", "-o", r->out, NULL);
}

static void sanitized_jitrace_survives_crafted_logs(void **state)
{
	struct run *r = calloc(1, sizeof(*r));
	const char *env = getenv("JT_SAN_MUTANTS");
	unsigned int mutants = env ? (unsigned int)atoi(env) : MUTANTS, m;
	char what[128];
	uint8_t *buf;
	size_t i, len, cap;
	time_t t0 = time(NULL);

	(void)state;
	if (access(SAN_JITRACE, X_OK)) {
		print_message("%s not built (make %s)\n", SAN_JITRACE, SAN_JITRACE);
		skip();
	}
	assert_non_null(r);
	assert_int_equal(scratch_make(r->dir, sizeof(r->dir), "san_views"), 0);
	snprintf(r->in, sizeof(r->in), "%s/in.jtl", r->dir);
	snprintf(r->out, sizeof(r->out), "%s/out", r->dir);
	snprintf(r->err, sizeof(r->err), "%s/stderr", r->dir);
	/* a sanitizer's own exit code; leaks are reports too */
	setenv("ASAN_OPTIONS", "exitcode=86:detect_leaks=1:abort_on_error=0", 1);
	setenv("UBSAN_OPTIONS", "exitcode=86:halt_on_error=1:print_stacktrace=1", 1);
	r->seed = 0x9e3779b97f4a7c15ULL;
	add_corpus(r, CORPUS "log");
	add_corpus(r, CORPUS "views");
	add_empty(r);
	assert_true(r->nr_bases >= 4);

	for (i = 0; i < r->nr_bases; i++) {
		struct base *b = &r->bases[i];

		write_in(r, b->file, b->len);
		every_view(r, b->name, i % 2);
		cap = b->len > b->raw_len ? b->len : b->raw_len;
		buf = malloc(cap);
		assert_non_null(buf);
		for (m = 0; m < mutants; m++) {
			/* the file's bytes: header, block headers, compressed data */
			memcpy(buf, b->file, b->len);
			mutate(r, buf, b->len, 0, JT_LOG_HEADER_SIZE + sizeof(struct jt_log_block));
			write_in(r, buf, b->len);
			snprintf(what, sizeof(what), "%s, file mutant %u", b->name, m);
			every_view(r, what, m % 2);
			if (!b->raw)
				continue;
			/* its records, under a right crc32: what reaches the views */
			memcpy(buf, b->raw, b->raw_len);
			mutate(r, buf, b->raw_len, 0, 64);
			{
				uint8_t *file = NULL;

				len = fuzz_wrap(buf, b->raw_len, &file);
				assert_true(len > 0);
				write_in(r, file, len);
				free(file);
			}
			snprintf(what, sizeof(what), "%s, record mutant %u", b->name, m);
			every_view(r, what, m % 2);
		}
		free(buf);
	}
	print_message("%u logs (%zu bases), %u runs of %s in %ld s, %u sanitizer reports\n",
		      r->logs, r->nr_bases, r->runs, SAN_JITRACE, (long)(time(NULL) - t0),
		      r->found);
	if (r->found)
		fail_msg("%u sanitizer reports; their inputs are kept in %s", r->found, r->dir);
	unlink(r->in);
	scratch_remove(r->dir);
	for (i = 0; i < r->nr_bases; i++) {
		free(r->bases[i].file);
		free(r->bases[i].raw);
	}
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sanitized_jitrace_survives_crafted_logs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
