// SPDX-License-Identifier: GPL-2.0
/* The options record and top share: one table, numbers and pids parsed strictly, said once. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cmd/liveopts.h"
#include "base/util.h"

/* ---- what was reported on stderr while a call ran ---- */

static FILE *err_file;
static int err_saved = -1;

static void errs_begin(void)
{
	fflush(stderr);
	err_file = tmpfile();
	err_saved = dup(STDERR_FILENO);
	assert_true(err_file && err_saved >= 0);
	dup2(fileno(err_file), STDERR_FILENO);
}

/* Everything reported since errs_begin(), NUL-terminated (the caller frees it). */
static char *errs_end(void)
{
	long len;
	char *text;

	fflush(stderr);
	dup2(err_saved, STDERR_FILENO);
	close(err_saved);
	len = ftell(err_file);
	assert_true(len >= 0);
	text = calloc(1, len + 1);
	assert_non_null(text);
	rewind(err_file);
	assert_int_equal(fread(text, 1, len, err_file), (size_t)len);
	fclose(err_file);
	return text;
}

/* ---- two commands shaped like record and top ---- */

struct own {
	const char *output;
	unsigned long count;
	int seen;
};

static int own_option(void *ctx, int c, const char *arg)
{
	struct own *own = ctx;

	own->seen++;
	if (c == 'o')
		own->output = arg;
	else if (c == 'c')
		return jt_parse_uint("-c", arg, 0, 100000, &own->count);
	return 0;
}

static const struct option record_longopts[] = {
	{ "output", required_argument, NULL, 'o' },
	{},
};

static const struct option top_longopts[] = {
	{ "count", required_argument, NULL, 'c' },
	{},
};

static struct own own;

static const struct jt_live_cli record_cli = {
	.name = "record", .usage = "usage: record\n", .command = true,
	.shared = JT_LIVE_OPT_FREQ | JT_LIVE_OPT_PID | JT_LIVE_OPT_DURATION | JT_LIVE_OPT_CALLS |
		  JT_LIVE_OPT_KSTACK | JT_LIVE_OPT_AGENT | JT_LIVE_OPT_RINGBUF |
		  JT_LIVE_OPT_WINDOW | JT_LIVE_OPT_NO_PERFMAP | JT_LIVE_OPT_NO_USDT |
		  JT_LIVE_OPT_UNWIND,
	.shortopts = "o:", .longopts = record_longopts, .option = own_option, .ctx = &own,
};

static const struct jt_live_cli top_cli = {
	.name = "top", .usage = "usage: top\n", .min_hz = 1,
	.shared = JT_LIVE_OPT_FREQ | JT_LIVE_OPT_AGENT | JT_LIVE_OPT_NO_PERFMAP,
	.shortopts = "c:", .longopts = top_longopts, .option = own_option, .ctx = &own,
};

#define ARGC(a) ((int)(sizeof(a) / sizeof((a)[0])) - 1)

/* Parse a NULL-terminated argv with cli into *o (freshly set up); stderr kept in *errs. */
static int parse(const struct jt_live_cli *cli, struct jt_live_opts *o, char **argv, int argc,
		 char **errs)
{
	int ret;

	memset(&own, 0, sizeof(own));
	jt_liveopts__init(o);
	errs_begin();
	ret = jt_liveopts__parse(o, cli, argc, argv);
	*errs = errs_end();
	return ret;
}

/* ---- tests ---- */

static void test_defaults_are_record_s(void **state)
{
	char *argv[] = { "record", "--no-agent", NULL };
	struct jt_live_opts o;
	char *errs;

	(void)state;
	assert_int_equal(parse(&record_cli, &o, argv, ARGC(argv), &errs), 0);
	assert_string_equal(errs, "");
	assert_int_equal(o.hz, 99);
	assert_int_equal(o.ringbuf_bytes, 64 << 20);
	assert_int_equal(o.window_ns, 100000000ULL);
	assert_true(o.duration == 0);
	assert_false(o.calls || o.kstack || o.no_perfmap || o.no_usdt || o.verbose);
	assert_false(o.calls_via_uprobe);
	assert_true(o.no_agent);
	assert_null(o.agent_path);
	assert_int_equal(o.nr_pids, 0);
	assert_null(o.command);
	free(errs);
}

static void test_every_shared_option_is_read(void **state)
{
	char *argv[] = { "record", "-F", "999", "-d", "1.5", "-c", "-g", "--ringbuf", "16",
			 "--window", "50", "--no-perfmap", "--no-usdt", "-v",
			 "--agent", "/proc/self/exe", "-o", "x.jtl", "--", "cmd", "-F", "5", NULL };
	struct jt_live_opts o;
	char *errs;

	(void)state;
	assert_int_equal(parse(&record_cli, &o, argv, ARGC(argv), &errs), 0);
	assert_string_equal(errs, "");
	assert_int_equal(o.hz, 999);
	assert_true(o.duration == 1.5);
	assert_true(o.calls && o.kstack && o.no_perfmap && o.no_usdt && o.verbose);
	assert_int_equal(o.ringbuf_bytes, 16 << 20);
	assert_int_equal(o.window_ns, 50000000ULL);
	assert_string_equal(o.agent_path, "/proc/self/exe");	/* any readable file */
	assert_string_equal(own.output, "x.jtl");
	/* the command's own options are its own: -F 5 goes to cmd */
	assert_non_null(o.command);
	assert_string_equal(o.command[0], "cmd");
	assert_string_equal(o.command[1], "-F");
	assert_null(o.command[3]);
	free(errs);
}

/* --calls-via says how calls come and implies --calls; buffers by default. */
static void test_calls_via_picks_the_path(void **state)
{
	char *up[] = { "record", "--no-agent", "--calls-via", "uprobe", NULL };
	char *buf[] = { "record", "--no-agent", "--calls-via", "buffers", NULL };
	struct jt_live_opts o;
	char *errs;

	(void)state;
	assert_int_equal(parse(&record_cli, &o, up, ARGC(up), &errs), 0);
	assert_true(o.calls && o.calls_via_uprobe);
	free(errs);
	assert_int_equal(parse(&record_cli, &o, buf, ARGC(buf), &errs), 0);
	assert_true(o.calls && !o.calls_via_uprobe);
	free(errs);
}

/* --calls-min implies summary mode and --calls; summary mode needs the buffers. */
static void test_calls_summary_and_min(void **state)
{
	char *sum[] = { "record", "--no-agent", "--calls-summary", NULL };
	char *min[] = { "record", "--no-agent", "--calls-min", "250", NULL };
	char *zero[] = { "record", "--no-agent", "--calls-min", "0", NULL };
	char *up[] = { "record", "--no-agent", "--calls-summary", "--calls-via", "uprobe", NULL };
	struct jt_live_opts o;
	char *errs;

	(void)state;
	assert_int_equal(parse(&record_cli, &o, sum, ARGC(sum), &errs), 0);
	assert_true(o.calls && o.calls_summary && !o.calls_min_ns);
	free(errs);
	assert_int_equal(parse(&record_cli, &o, min, ARGC(min), &errs), 0);
	assert_true(o.calls && o.calls_summary);
	assert_int_equal(o.calls_min_ns, 250000);
	free(errs);
	assert_int_not_equal(parse(&record_cli, &o, zero, ARGC(zero), &errs), 0);
	free(errs);
	assert_int_not_equal(parse(&record_cli, &o, up, ARGC(up), &errs), 0);
	assert_non_null(strstr(errs, "--calls-summary"));
	free(errs);
}

/* Without --, the first word that is not an option begins the command. */
static void test_options_end_where_the_command_begins(void **state)
{
	char *argv[] = { "record", "--no-agent", "-F", "9", "ls", "-F", "5", NULL };
	struct jt_live_opts o;
	char *errs;

	(void)state;
	assert_int_equal(parse(&record_cli, &o, argv, ARGC(argv), &errs), 0);
	assert_int_equal(o.hz, 9);
	assert_string_equal(o.command[0], "ls");
	assert_string_equal(o.command[2], "5");
	free(errs);
}

/* A command takes only the shared options it names: top's -c is its count, not --calls. */
static void test_a_command_takes_only_its_shared_options(void **state)
{
	char *count[] = { "top", "--no-agent", "-c", "3", NULL };
	char *calls[] = { "top", "--calls", NULL };
	char *pid[] = { "top", "-p", "1", NULL };
	char *word[] = { "top", "--no-agent", "now", NULL };
	struct jt_live_opts o;
	char *errs;

	(void)state;
	assert_int_equal(parse(&top_cli, &o, count, ARGC(count), &errs), 0);
	assert_int_equal(own.count, 3);
	assert_false(o.calls);
	free(errs);

	assert_int_equal(parse(&top_cli, &o, calls, ARGC(calls), &errs), -EINVAL);
	assert_non_null(strstr(errs, "'--calls'"));
	assert_non_null(strstr(errs, "Try 'jitrace top --help'.\n"));
	free(errs);

	assert_int_equal(parse(&top_cli, &o, pid, ARGC(pid), &errs), -EINVAL);
	assert_non_null(strstr(errs, "Try 'jitrace top --help'.\n"));
	free(errs);

	assert_int_equal(parse(&top_cli, &o, word, ARGC(word), &errs), -EINVAL);
	assert_string_equal(errs, "jitrace: top takes no arguments ('now')\n");
	free(errs);
}

/* -F 0 turns record's sampling off; top has nothing to show without samples. */
static void test_least_frequency_is_the_command_s(void **state)
{
	char *rec[] = { "record", "--no-agent", "-F", "0", NULL };
	char *top[] = { "top", "--no-agent", "-F", "0", NULL };
	struct jt_live_opts o;
	char *errs;

	(void)state;
	assert_int_equal(parse(&record_cli, &o, rec, ARGC(rec), &errs), 0);
	assert_int_equal(o.hz, 0);
	free(errs);
	assert_int_equal(parse(&top_cli, &o, top, ARGC(top), &errs), -EINVAL);
	assert_string_equal(errs, "jitrace: -F: '0' is not a whole number from 1 to 100000\n");
	free(errs);
}

static void test_help_is_printed_not_an_error(void **state)
{
	char *argv[] = { "top", "--help", NULL };
	struct jt_live_opts o;
	char *errs;

	(void)state;
	assert_int_equal(parse(&top_cli, &o, argv, ARGC(argv), &errs), 1);
	assert_string_equal(errs, "");
	free(errs);
}

/* Each bad value: rejected with one line that names the option and the value. */
static void test_bad_values_are_said_once(void **state)
{
	static const struct {
		const char *opt, *val, *said;
	} bad[] = {
		{ "-F", "x", "jitrace: -F: 'x' is not a whole number from 0 to 100000\n" },
		{ "-F", "-1", "jitrace: -F: '-1' is not a whole number from 0 to 100000\n" },
		{ "-F", "100001", "jitrace: -F: '100001' is not a whole number from 0 to 100000\n" },
		{ "-F", "", "jitrace: -F: '' is not a whole number from 0 to 100000\n" },
		{ "-F", "12x", "jitrace: -F: '12x' is not a whole number from 0 to 100000\n" },
		{ "-d", "0", "jitrace: -d: '0' is not a positive number of seconds\n" },
		{ "-d", "-2", "jitrace: -d: '-2' is not a positive number of seconds\n" },
		{ "-d", "nan", "jitrace: -d: 'nan' is not a positive number of seconds\n" },
		{ "-d", "inf", "jitrace: -d: 'inf' is not a positive number of seconds\n" },
		{ "-d", "1s", "jitrace: -d: '1s' is not a positive number of seconds\n" },
		{ "--ringbuf", "3", "jitrace: --ringbuf: 3 MB is not a power of two\n" },
		{ "--ringbuf", "0", "jitrace: --ringbuf: 0 MB is not a power of two\n" },
		{ "--ringbuf", "8192",
		  "jitrace: --ringbuf: '8192' is not a whole number from 0 to 4096\n" },
		{ "--window", "0", "jitrace: --window: give 1 to 60000 ms\n" },
		{ "--calls-via", "ring", "jitrace: --calls-via: 'ring' is neither buffers nor uprobe\n" },
		{ "--agent", "/nonexistent/libjitrace-agent.so",
		  "jitrace: --agent /nonexistent/libjitrace-agent.so: No such file or directory\n" },
	};
	struct jt_live_opts o;
	size_t i;
	char *errs;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = { "record", (char *)bad[i].opt, (char *)bad[i].val, NULL };

		assert_int_equal(parse(&record_cli, &o, argv, ARGC(argv), &errs), -EINVAL);
		assert_string_equal(errs, bad[i].said);
		free(errs);
	}
}

/*
 * --max-memory bounds the whole recorder: what it leaves for what grows is the bound less
 * the ring buffer, the reorder buffer and the program; one that leaves too little is
 * refused, saying how much would do.
 */
static void test_max_memory_leaves_room_for_what_grows(void **state)
{
	char *deflt[] = { "record", "--no-agent", NULL };
	char *given[] = { "record", "--no-agent", "--ringbuf", "8", "--max-memory", "100", NULL };
	char *small[] = { "record", "--no-agent", "--max-memory", "120", NULL };
	struct jt_live_opts o;
	char *errs;

	(void)state;
	assert_int_equal(parse(&record_cli, &o, deflt, ARGC(deflt), &errs), 0);
	assert_int_equal(o.max_memory, (uint64_t)JT_MAX_MEMORY_MB << 20);
	assert_true(o.max_memory <= 256ULL << 20);	/* the README's DaemonSet */
	assert_int_equal(jt_live__mem_limit(&o), (200ULL - 64 - 16 - 32) << 20);
	free(errs);
	assert_int_equal(parse(&record_cli, &o, given, ARGC(given), &errs), 0);
	assert_int_equal(jt_live__mem_limit(&o), (100ULL - 8 - 16 - 32) << 20);
	free(errs);
	assert_int_equal(parse(&record_cli, &o, small, ARGC(small), &errs), -EINVAL);
	assert_string_equal(errs, "jitrace: --max-memory: 120 MB leaves less than 16 MB for "
			    "methods and maps beside the ring buffer (--ringbuf 64 MB), the reorder "
			    "buffer (16 MB) and the program (32 MB): give at least 128 MB, or a "
			    "smaller --ringbuf\n");
	free(errs);
}

/* --unwind cfi copies 8 KiB of stack a sample, --stack-copy sets how much (and means cfi);
 * fp, the default, copies none; what is not a mode or a size in bounds is refused. */
static void test_unwind_modes_and_stack_copy(void **state)
{
	static const struct {
		const char *args[4];
		int ret;
		uint32_t bytes;
	} cases[] = {
		{ { NULL }, 0, 0 },
		{ { "--unwind", "fp" }, 0, 0 },
		{ { "--unwind", "cfi" }, 0, JT_USTACK_DEFAULT },
		{ { "--stack-copy", "4096" }, 0, 4096 },
		{ { "--stack-copy", "1001", "--unwind", "cfi" }, 0, 1000 },
		{ { "--unwind", "cfi", "--unwind", "fp" }, 0, 0 },
		{ { "--unwind", "dwarf" }, -EINVAL, 0 },
		{ { "--stack-copy", "100" }, -EINVAL, 0 },
		{ { "--stack-copy", "8200" }, -EINVAL, 0 },
	};
	struct jt_live_opts o;
	size_t i, j;
	char *errs;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[6] = { "record" };

		for (j = 0; j < 4 && cases[i].args[j]; j++)
			argv[j + 1] = (char *)cases[i].args[j];
		assert_int_equal(parse(&record_cli, &o, argv, (int)j + 1, &errs), cases[i].ret);
		if (!cases[i].ret)
			assert_int_equal(o.ustack_bytes, cases[i].bytes);
		assert_true(!cases[i].ret == !errs[0]);	/* an error is said, once */
		free(errs);
	}
}

static void test_calls_need_a_source(void **state)
{
	char *none[] = { "record", "--calls", "--no-agent", "--no-usdt", NULL };
	char *usdt[] = { "record", "--calls", "--no-agent", NULL };
	struct jt_live_opts o;
	char *errs;

	(void)state;
	assert_int_equal(parse(&record_cli, &o, none, ARGC(none), &errs), -EINVAL);
	assert_non_null(strstr(errs, "--calls with --no-agent and --no-usdt"));
	free(errs);
	/* HotSpot's probes alone are a source */
	assert_int_equal(parse(&record_cli, &o, usdt, ARGC(usdt), &errs), 0);
	free(errs);
}

static void test_jvm_attach_options(void **state)
{
	char *off[] = { "record", "--no-attach", "--no-agent", NULL };
	char *agent[] = { "record", "--jvm-agent", "--agent", "/proc/self/exe", NULL };
	char *no_agent[] = { "record", "--jvm-agent", "--no-agent", NULL };
	char *both[] = { "record", "--jvm-agent", "--no-attach", "--agent", "/proc/self/exe",
			 NULL };
	struct jt_live_opts o;
	char *errs;

	(void)state;
	assert_int_equal(parse(&record_cli, &o, off, ARGC(off), &errs), 0);
	assert_true(o.no_attach && !o.jvm_agent);
	free(errs);
	assert_int_equal(parse(&record_cli, &o, agent, ARGC(agent), &errs), 0);
	assert_true(o.jvm_agent && !o.no_attach);
	free(errs);
	/* the JVMTI agent reports through the agent, and is loaded by attaching */
	assert_int_equal(parse(&record_cli, &o, no_agent, ARGC(no_agent), &errs), -EINVAL);
	assert_non_null(strstr(errs, "--jvm-agent with --no-agent"));
	free(errs);
	assert_int_equal(parse(&record_cli, &o, both, ARGC(both), &errs), -EINVAL);
	assert_non_null(strstr(errs, "--jvm-agent with --no-attach"));
	free(errs);
	/* top takes them too */
	assert_int_equal(parse(&top_cli, &o, off, ARGC(off), &errs), 0);
	assert_true(o.no_attach);
	free(errs);
}

static void test_numbers_within_bounds(void **state)
{
	unsigned long v = 7;
	double d = 7;
	char *errs;

	(void)state;
	errs_begin();
	assert_int_equal(jt_parse_uint("-n", "0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(jt_parse_uint("-n", "10", 0, 10, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(jt_parse_uint("-n", "4", 5, 10, &v), -EINVAL);
	assert_int_equal(jt_parse_uint("-n", "99999999999999999999999", 0, 10, &v), -EINVAL);
	assert_int_equal(v, 10);	/* unchanged by a rejected value */
	assert_int_equal(jt_parse_double("0.25", &d), 0);
	assert_true(d == 0.25);
	assert_int_equal(jt_parse_double("", &d), -EINVAL);
	assert_int_equal(jt_parse_double("1e999", &d), -EINVAL);
	assert_int_equal(jt_parse_double("0.5x", &d), -EINVAL);
	assert_true(d == 0.25);
	errs = errs_end();
	/* the whole-number parser says why; the other leaves that to its caller */
	assert_string_equal(errs, "jitrace: -n: '4' is not a whole number from 5 to 10\n"
				  "jitrace: -n: '99999999999999999999999' is not a whole number "
				  "from 0 to 10\n");
	free(errs);
}

static void *idle_thread(void *arg)
{
	pid_t *tid = arg;

	__atomic_store_n(tid, gettid(), __ATOMIC_RELEASE);
	pause();
	return NULL;
}

/* Our own process, named twice and by a thread of it, is one pid; a gone one is an error. */
static void test_pids_are_processes_named_once(void **state)
{
	struct jt_live_opts o;
	pthread_t th;
	pid_t tid = 0, gone;
	char list[128], *errs;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, idle_thread, &tid), 0);
	while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	snprintf(list, sizeof(list), "%d,%d,%d", (int)getpid(), (int)tid, (int)getpid());
	jt_liveopts__init(&o);
	errs_begin();
	assert_int_equal(jt_liveopts__add_pids(&o, list, "/proc"), 0);
	errs = errs_end();
	assert_int_equal(o.nr_pids, 1);
	assert_int_equal(o.pids[0], getpid());
	snprintf(list, sizeof(list), "jitrace: --pid: %d is a thread of process %d: recording "
		 "process %d\n", (int)tid, (int)getpid(), (int)getpid());
	assert_string_equal(errs, list);
	free(errs);
	pthread_cancel(th);
	pthread_join(th, NULL);

	gone = fork();
	if (!gone)
		_exit(0);
	assert_true(gone > 0);
	waitpid(gone, NULL, 0);
	snprintf(list, sizeof(list), "%d", (int)gone);
	errs_begin();
	assert_int_equal(jt_liveopts__add_pids(&o, list, "/proc"), -EINVAL);
	assert_int_equal(jt_liveopts__add_pids(&o, "0", "/proc"), -EINVAL);
	assert_int_equal(jt_liveopts__add_pids(&o, "12ab", "/proc"), -EINVAL);
	errs = errs_end();
	assert_int_equal(o.nr_pids, 1);
	snprintf(list, sizeof(list), "jitrace: --pid: no process %d\n", (int)gone);
	assert_non_null(strstr(errs, list));
	assert_non_null(strstr(errs, "jitrace: --pid: no process 0\n"));
	assert_non_null(strstr(errs, "jitrace: --pid: '12ab' is not a whole number from 0 to "));
	free(errs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_are_record_s),
		cmocka_unit_test(test_every_shared_option_is_read),
		cmocka_unit_test(test_calls_via_picks_the_path),
		cmocka_unit_test(test_calls_summary_and_min),
		cmocka_unit_test(test_options_end_where_the_command_begins),
		cmocka_unit_test(test_a_command_takes_only_its_shared_options),
		cmocka_unit_test(test_least_frequency_is_the_command_s),
		cmocka_unit_test(test_help_is_printed_not_an_error),
		cmocka_unit_test(test_bad_values_are_said_once),
		cmocka_unit_test(test_max_memory_leaves_room_for_what_grows),
		cmocka_unit_test(test_calls_need_a_source),
		cmocka_unit_test(test_jvm_attach_options),
		cmocka_unit_test(test_unwind_modes_and_stack_copy),
		cmocka_unit_test(test_numbers_within_bounds),
		cmocka_unit_test(test_pids_are_processes_named_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
