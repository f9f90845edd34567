// SPDX-License-Identifier: GPL-2.0
/*
 * The recorder's bounds under load: a flight recorder's directory within --max-size at
 * every moment (the open segment included), -d ending the recording on time while perf
 * maps pour in, and the recorder's memory within --max-memory with what it dropped counted
 * in the log. Needs root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
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

#include "jt_events.h"
#include "lib.h"
#include "log.h"

/* The directory's bytes as `du -sb` counts them: its own size and each entry's. */
static uint64_t dir_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;
	uint64_t n = 0;

	if (!d)
		return 0;	/* not made yet */
	if (!fstat(dirfd(d), &st))
		n += st.st_size;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    !fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			n += st.st_size;
	closedir(d);
	return n;
}

/*
 * --rotate 2 --max-size 1 while a toy JIT's every call is traced (megabytes of log a
 * second): the directory, polled every 2 ms through the recording, is never over 1 MB,
 * though segments close and the oldest go all along.
 */
static void test_max_size_holds_at_every_moment(void **state)
{
	char *dir = it_path_dup("flight"), *err = it_path_dup("flight.err");
	char *rec[] = { IT_JITRACE, "record", "-a", "-c", "-F", "999", "--rotate", "2",
			"--max-size", "1", "-d", "10", "-o", dir, NULL };
	char *toy[] = { IT_TOYJIT, "many", "--methods", "1000", "-i", "--ms", "9000", NULL };
	const uint64_t bound = 1000000;	/* --max-size 1: MB of 10^6 bytes */
	uint64_t polls = 0, over = 0, peak = 0, b;
	pid_t rec_pid, toy_pid;
	int status;
	char *text;

	(void)state;
	rec_pid = it_spawn(rec, NULL, err);
	assert_true(it_wait_for_text(err, "jitrace: recording", 20000));
	toy_pid = it_spawn(toy, "/dev/null", "/dev/null");
	while (waitpid(rec_pid, &status, WNOHANG) == 0) {
		b = dir_bytes(dir);
		polls++;
		over += b > bound;
		peak = b > peak ? b : peak;
		usleep(2000);
	}
	kill(toy_pid, SIGTERM);
	it_wait(toy_pid);
	text = it_slurp(err);
	fputs(text, stderr);
	print_message("%llu polls, %llu over %llu bytes, peak %llu\n", (unsigned long long)polls,
		      (unsigned long long)over, (unsigned long long)bound,
		      (unsigned long long)peak);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the load filled the bound many times over: segments were deleted to keep it */
	assert_non_null(strstr(text, " deleted"));
	assert_true(peak > bound / 2);
	assert_int_equal(over, 0);
	free(text);
	free(dir);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_max_size_holds_at_every_moment),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
