// SPDX-License-Identifier: GPL-2.0
/* host/procfs: numbers read from /proc texts, whatever a process names itself. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>
#include <cmocka.h>

#include "host/procfs.h"

/* A stat line as the kernel writes it: pid (comm) state ppid ... field 22 starttime. */
#define TAIL " S 41 7 7 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 987654 1000 10"

static void test_stat_fields_after_any_name(void **state)
{
	/* names holding ") ", spaces, digits and '(' must not shift the fields */
	const char *names[] = { "app", "a) 1 2 3 (b", ") ) )", "x y z", "" };
	unsigned long long v;
	char line[256];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(line, sizeof(line), "42 (%s)" TAIL "\n", names[i]);
		assert_int_equal(jt_procfs__stat_num(line, 4, &v), 0);
		assert_int_equal(v, 41);
		assert_int_equal(jt_procfs__stat_num(line, 22, &v), 0);
		assert_int_equal(v, 987654);
	}
}

static void test_stat_fields_missing_or_not_numbers(void **state)
{
	unsigned long long v = 5;

	(void)state;
	assert_int_equal(jt_procfs__stat_num("42 (app" TAIL, 4, &v), -EINVAL);	/* no ')' */
	assert_int_equal(jt_procfs__stat_num("42 (app) S 41", 22, &v), -EINVAL);	/* cut */
	assert_int_equal(jt_procfs__stat_num("42 (app)" TAIL, 3, &v), -EINVAL);	/* 'S' */
	assert_int_equal(jt_procfs__stat_num("42 (app)" TAIL, 2, &v), -EINVAL);	/* the name */
	assert_int_equal(v, 5);
}

/* Our own stat: field 4 is our parent, as getppid says. */
static void test_stat_of_this_process(void **state)
{
	unsigned long long v;
	char buf[1024];

	(void)state;
	assert_true(jt_procfs__read_raw("/proc", getpid(), "stat", buf, sizeof(buf)) > 0);
	assert_int_equal(jt_procfs__stat_num(buf, 4, &v), 0);
	assert_int_equal(v, getppid());
	assert_int_equal(jt_procfs__stat_num(buf, 22, &v), 0);
	assert_true(v > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stat_fields_after_any_name),
		cmocka_unit_test(test_stat_fields_missing_or_not_numbers),
		cmocka_unit_test(test_stat_of_this_process),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
