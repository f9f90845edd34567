// SPDX-License-Identifier: GPL-2.0
/* top's model: innermost JIT frame is self, recursion counted once, intervals reset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "views/top.h"
#include "viewlog.h"

static void emit(struct jt_sink *s, union vl_buf *rb)
{
	assert_int_equal(jt_sink__emit(s, &rb->h), 0);
}

static void sample(struct jt_sink *sink, uint32_t pid, const struct jt_frame *f, unsigned nr)
{
	union vl_buf rb;
	struct jt_rec_sample *s = vl_rec(&rb, JT_REC_SAMPLE, sizeof(*s), nr * sizeof(*f), 0);

	s->pid = s->tid = pid;
	s->nr_frames = nr;
	memcpy(s->frames, f, nr * sizeof(*f));
	emit(sink, &rb);
}

static char *screen(struct jt_top *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(jt_top__render(t, f, 10, 200, 1.0, false), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_top_counts_innermost_jit_frames(void **state)
{
	struct jt_top *t = jt_top__new();
	struct jt_sink sink = jt_top__sink(t);
	const struct jt_frame in_native[] = { F(1, 0x10), M(1, 0x4), M(2, 0x8) };
	const struct jt_frame leaf[] = { M(2, 0x4), M(2, 0x8), M(3, 0x8) };
	const struct jt_frame none[] = { F(1, 0x10) };
	union vl_buf rb;
	struct jt_rec_proc *p;
	struct jt_rec_method *m;
	char *s;
	int i;

	(void)state;
	p = vl_rec(&rb, JT_REC_PROC, sizeof(*p), 3, 0);
	p->pid = 42;
	strcpy(p->comm, "app\x01");	/* shown as app? */
	p->cmdline_len = 3;
	memcpy(p->cmdline, "app", 3);
	emit(&sink, &rb);
	for (i = 1; i <= 3; i++) {
		const char *names[] = { "", "hot", "caller", "main" };

		m = vl_rec(&rb, JT_REC_METHOD, sizeof(*m), strlen(names[i]), 0);
		m->id = i;
		m->pid = 42;
		m->name_len = strlen(names[i]);
		memcpy(m->name, names[i], m->name_len);
		emit(&sink, &rb);
	}
	for (i = 0; i < 6; i++)
		sample(&sink, 42, in_native, 3);	/* hot self (via native), caller total */
	for (i = 0; i < 3; i++)
		sample(&sink, 42, leaf, 3);		/* caller self once, main total */
	sample(&sink, 42, none, 1);
	s = screen(t);
	assert_non_null(strstr(s, "10 samples/s  1 process  3 methods hot  10.0% outside JIT"));
	assert_non_null(strstr(s, "  60.0%   60.0%        6       42  app?             hot\n"));
	assert_non_null(strstr(s, "  30.0%   90.0%        3       42  app?             caller\n"));
	assert_non_null(strstr(s, "   0.0%   30.0%        0       42  app?             main\n"));
	assert_true(strstr(s, " hot\n") < strstr(s, " caller\n"));
	free(s);
	/* a new interval starts empty */
	s = screen(t);
	assert_non_null(strstr(s, "0 samples/s  0 processes  0 methods hot"));
	assert_null(strstr(s, " hot\n"));
	assert_int_equal(jt_top__samples(t), 10);
	free(s);
	jt_top__free(t);
}

/* Names are other processes' bytes and top writes to a terminal: controls come out escaped. */
static void test_top_escapes_control_bytes_in_names(void **state)
{
	static const char evil[] = "evil\x1b[2J\x1b]0;pwned\x07\xc2\x9b";
	struct jt_top *t = jt_top__new();
	struct jt_sink sink = jt_top__sink(t);
	const struct jt_frame leaf[] = { M(1, 0x4) };
	union vl_buf rb;
	struct jt_rec_proc *p;
	struct jt_rec_method *m;
	char *s;

	(void)state;
	p = vl_rec(&rb, JT_REC_PROC, sizeof(*p), 3, 0);
	p->pid = 42;
	strcpy(p->comm, "app");
	p->cmdline_len = 3;
	memcpy(p->cmdline, "app", 3);
	emit(&sink, &rb);
	m = vl_rec(&rb, JT_REC_METHOD, sizeof(*m), sizeof(evil) - 1, 0);
	m->id = 1;
	m->pid = 42;
	m->name_len = sizeof(evil) - 1;
	memcpy(m->name, evil, m->name_len);
	emit(&sink, &rb);
	sample(&sink, 42, leaf, 1);
	s = screen(t);
	assert_null(strchr(s, '\x1b'));
	assert_null(strchr(s, '\x07'));
	assert_null(strstr(s, "\xc2\x9b"));
	/* the log view already turned C0 controls into '?'; C1 passed through before */
	assert_non_null(strstr(s, "evil?[2J?]0;pwned?\\xc2\\x9b\n"));
	free(s);
	jt_top__free(t);
}

/* Display columns (UTF-8 characters) of s before at. */
static size_t columns(const char *s, const char *at)
{
	size_t n = 0;

	for (; s < at; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/*
 * COMM is 15 columns whatever a process calls itself: bytes that would come out escaped
 * (\xHH: not UTF-8, C1 controls, a backslash) show as '?', a multibyte character as one.
 */
static void test_top_comm_column_holds_its_width(void **state)
{
	static const char *const comms[] = {
		"plain",
		"x\xff\xc2\x9b\\caf\xc3\xa9",	/* not UTF-8, C1, backslash, é */
		"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",
	};
	struct jt_top *t = jt_top__new();
	struct jt_sink sink = jt_top__sink(t);
	union vl_buf rb;
	struct jt_rec_proc *p;
	struct jt_rec_method *m;
	const char *head, *at, *line;
	char *s, want[32];
	size_t i, col;

	(void)state;
	for (i = 0; i < 3; i++) {
		const struct jt_frame leaf[] = { M(i + 1, 0x4) };

		p = vl_rec(&rb, JT_REC_PROC, sizeof(*p), 1, 0);
		p->pid = 40 + i;
		memcpy(p->comm, comms[i], strlen(comms[i]));
		p->cmdline_len = 1;
		p->cmdline[0] = 'x';
		emit(&sink, &rb);
		m = vl_rec(&rb, JT_REC_METHOD, sizeof(*m), 4, 0);
		m->id = i + 1;
		m->pid = 40 + i;
		m->name_len = 4;
		snprintf(want, sizeof(want), "m%03zu", i);
		memcpy(m->name, want, 4);
		emit(&sink, &rb);
		sample(&sink, 40 + i, leaf, 1);
	}
	s = screen(t);
	head = strstr(s, "COMM");
	assert_non_null(head);
	for (line = head; line > s && line[-1] != '\n'; line--)
		;
	col = columns(line, strstr(head, "METHOD"));
	for (i = 0; i < 3; i++) {
		snprintf(want, sizeof(want), " m%03zu\n", i);
		at = strstr(s, want);
		assert_non_null(at);
		for (line = at; line[-1] != '\n'; line--)
			;
		if (columns(line, at + 1) != col)
			fail_msg("comm %zu: its method at column %zu, METHOD at %zu:\n%s", i,
				 columns(line, at + 1), col, s);
	}
	assert_non_null(strstr(s, "  x???caf\xc3\xa9         m001\n"));
	assert_non_null(strstr(s, "  ???????????????  m002\n"));
	free(s);
	jt_top__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_top_counts_innermost_jit_frames),
		cmocka_unit_test(test_top_escapes_control_bytes_in_names),
		cmocka_unit_test(test_top_comm_column_holds_its_width),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
