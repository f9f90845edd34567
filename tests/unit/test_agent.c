// SPDX-License-Identifier: GPL-2.0
/* libjitrace-agent: unique ids across threads, whole perf map lines written at once, no
 * writing through a planted link, FIFO or someone else's file, a map of its own after fork.
 * No root needed (the other-owner case runs only as root). Each case runs in a child
 * process so that it has a fresh /tmp/perf-PID.map. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "jitrace/agent.h"

#define THREADS 4
#define LOADS 5000
#define BASE 0x10000000UL

static void map_path(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/perf-%d.map", (int)pid);
}

/* Run fn in a child; returns its exit status (0: all its checks held). */
static int in_child(int (*fn)(void *), void *arg, pid_t *pid)
{
	int status;

	*pid = fork();
	assert_true(*pid >= 0);
	if (*pid == 0)
		_exit(fn(arg));
	assert_int_equal(waitpid(*pid, &status, 0), *pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc(n + 1);
	if (buf && fread(buf, 1, n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = 0;
	fclose(f);
	*len = n;
	return buf;
}

/* ---- ids unique and lines whole across threads ---- */

struct loader {
	int t;
	uint64_t ids[LOADS];
};

static void *load_many(void *arg)
{
	struct loader *l = arg;
	char name[32];
	int i;

	for (i = 0; i < LOADS; i++) {
		snprintf(name, sizeof(name), "t%d_%d", l->t, i);
		l->ids[i] = jitrace_code_load((void *)(BASE + (l->t * LOADS + i) * 0x40UL), 0x40,
					      name);
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int threads_child(void *arg)
{
	static struct loader l[THREADS];
	static uint64_t all[THREADS * LOADS];
	pthread_t th[THREADS];
	int t, i;

	(void)arg;
	for (t = 0; t < THREADS; t++) {
		l[t].t = t;
		pthread_create(&th[t], NULL, load_many, &l[t]);
	}
	for (t = 0; t < THREADS; t++) {
		pthread_join(th[t], NULL);
		memcpy(all + t * LOADS, l[t].ids, sizeof(l[t].ids));
	}
	qsort(all, THREADS * LOADS, sizeof(all[0]), cmp_u64);
	for (i = 0; i < THREADS * LOADS; i++)
		if (all[i] == 0 || (i && all[i] == all[i - 1]))
			return 1;	/* an id of 0, or one handed out twice */
	return 0;
}

static void ids_are_unique_and_lines_whole_across_threads(void **state)
{
	char path[64], *buf, *line, *save = NULL;
	int seen = 0;
	size_t len;
	pid_t pid;

	(void)state;
	assert_int_equal(in_child(threads_child, NULL, &pid), 0);
	map_path(pid, path, sizeof(path));
	buf = slurp(path, &len);
	assert_non_null(buf);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long addr, size;
		int t, i, n = -1;

		/* every line whole: address, size and the name that goes with that address */
		assert_int_equal(sscanf(line, "%lx %lx t%d_%d%n", &addr, &size, &t, &i, &n), 4);
		assert_int_equal((size_t)n, strlen(line));
		assert_int_equal(size, 0x40);
		assert_int_equal(addr, BASE + (t * LOADS + i) * 0x40UL);
		seen++;
	}
	assert_int_equal(seen, THREADS * LOADS);
	free(buf);
	unlink(path);
}

/* ---- the line is in the file when jitrace_code_load returns ---- */

static int line_now_child(void *arg)
{
	char path[64], want[64], *buf;
	size_t len;
	int ok;

	(void)arg;
	jitrace_code_load((void *)0x7f0000001000UL, 0x2a, "fresh fn(int)");
	map_path(getpid(), path, sizeof(path));
	buf = slurp(path, &len);
	snprintf(want, sizeof(want), "7f0000001000 2a fresh fn(int)\n");
	ok = buf && !strcmp(buf, want);
	free(buf);
	return !ok;
}

static void map_line_is_written_before_load_returns(void **state)
{
	char path[64];
	pid_t pid;

	(void)state;
	assert_int_equal(in_child(line_now_child, NULL, &pid), 0);
	map_path(pid, path, sizeof(path));
	unlink(path);
}

/* ---- a planted link is never written through ---- */

struct plant {
	char target[64];
	bool hard;		/* a hard link, else a symlink */
};

static int plant_child(void *arg)
{
	struct plant *pl = arg;
	char path[64], *buf;
	uint64_t id;
	size_t len;
	int ok;

	map_path(getpid(), path, sizeof(path));
	unlink(path);	/* a stale map of an earlier process with this pid */
	if (pl->hard ? link(pl->target, path) : symlink(pl->target, path))
		return 2;
	id = jitrace_code_load((void *)0x1000, 0x10, "must_not_land");
	buf = slurp(pl->target, &len);
	ok = id != 0 && buf && !strcmp(buf, "untouched\n");
	free(buf);
	unlink(path);
	return !ok;
}

static void planted_link_is_not_written_through(bool hard)
{
	struct plant pl = { .hard = hard };
	pid_t pid;
	int fd;

	snprintf(pl.target, sizeof(pl.target), "/tmp/jitrace-agent-target.XXXXXX");
	fd = mkstemp(pl.target);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "untouched\n", 10), 10);
	close(fd);
	assert_int_equal(in_child(plant_child, &pl, &pid), 0);
	unlink(pl.target);
}

static void planted_symlink_is_not_followed(void **state)
{
	(void)state;
	planted_link_is_not_written_through(false);
}

static void planted_hard_link_is_not_written(void **state)
{
	(void)state;
	planted_link_is_not_written_through(true);
}

/* ---- a planted FIFO never blocks the traced program ---- */

#define HANG_GUARD_S 5	/* a load that takes this long is a hang: SIGALRM kills the child */

/* Lines of the file at path that contain what. */
static int count_lines_with(const char *path, const char *what)
{
	char *buf, *line, *save = NULL;
	size_t len;
	int n = 0;

	buf = slurp(path, &len);
	if (!buf)
		return -1;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		n += strstr(line, what) != NULL;
	free(buf);
	return n;
}

static int fifo_child(void *arg)
{
	const char *errlog = arg;
	char path[64], byte;
	struct stat st;
	int fd, ok;

	map_path(getpid(), path, sizeof(path));
	if (mkfifo(path, 0666))
		return 2;
	fd = open(errlog, O_WRONLY | O_CREAT | O_TRUNC, 0600);	/* the agent's stderr */
	if (fd < 0 || dup2(fd, STDERR_FILENO) < 0)
		return 2;
	close(fd);
	alarm(HANG_GUARD_S);
	jitrace_code_load((void *)0x1000, 0x10, "first_fn");	/* blocked here before */
	jitrace_code_load((void *)0x2000, 0x10, "second_fn");
	alarm(0);
	/* still the FIFO, and nothing was written into it */
	fd = open(path, O_RDONLY | O_NONBLOCK);
	ok = !lstat(path, &st) && S_ISFIFO(st.st_mode) && fd >= 0 && read(fd, &byte, 1) <= 0;
	if (fd >= 0)
		close(fd);
	unlink(path);
	/* said once, naming the map */
	return !ok || count_lines_with(errlog, path) != 1;
}

static void planted_fifo_does_not_block_code_load(void **state)
{
	char errlog[] = "/tmp/jitrace-agent-stderr.XXXXXX", path[64];
	int fd, status;
	pid_t pid;

	(void)state;
	fd = mkstemp(errlog);
	assert_true(fd >= 0);
	close(fd);
	status = in_child(fifo_child, errlog, &pid);
	map_path(pid, path, sizeof(path));
	unlink(path);		/* left behind if the child hung */
	unlink(errlog);
	assert_int_equal(status, 0);
}

/* ---- a regular file owned by someone else is not written ---- */

static int foreign_child(void *arg)
{
	const char *target = arg;
	char path[64], *buf;
	uint64_t id;
	size_t len;
	int ok;

	map_path(getpid(), path, sizeof(path));
	if (link(target, path))
		return 2;
	unlink(target);		/* the planted file has one link: only its owner tells */
	id = jitrace_code_load((void *)0x1000, 0x10, "must_not_land");
	buf = slurp(path, &len);
	ok = id != 0 && buf && !strcmp(buf, "theirs\n");
	free(buf);
	unlink(path);
	return !ok;
}

static void foreign_owned_map_is_not_written(void **state)
{
	char target[] = "/tmp/jitrace-agent-foreign.XXXXXX";
	pid_t pid;
	int fd;

	(void)state;
	if (geteuid() != 0)
		skip();	/* only root can give a file to another uid */
	fd = mkstemp(target);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "theirs\n", 7), 7);
	assert_int_equal(fchown(fd, 65534, 65534), 0);	/* nobody */
	assert_int_equal(fchmod(fd, 0666), 0);
	close(fd);
	assert_int_equal(in_child(foreign_child, target, &pid), 0);
	unlink(target);
}

/* ---- after fork, the child's code goes to the child's map ---- */

static int fork_child(void *arg)
{
	char mine[64], its[64], *a, *b;
	size_t len;
	int status, ok;
	pid_t grandchild;

	(void)arg;
	jitrace_code_load((void *)0x2000, 0x10, "parent_fn");
	grandchild = fork();
	if (grandchild == 0) {
		jitrace_code_load((void *)0x3000, 0x10, "child_fn");
		_exit(0);
	}
	waitpid(grandchild, &status, 0);
	map_path(getpid(), mine, sizeof(mine));
	map_path(grandchild, its, sizeof(its));
	a = slurp(mine, &len);
	b = slurp(its, &len);
	ok = a && b && !strcmp(a, "2000 10 parent_fn\n") && !strcmp(b, "3000 10 child_fn\n");
	free(a);
	free(b);
	unlink(its);
	return !ok;
}

static void forked_child_writes_its_own_map(void **state)
{
	char path[64];
	pid_t pid;

	(void)state;
	assert_int_equal(in_child(fork_child, NULL, &pid), 0);
	map_path(pid, path, sizeof(path));
	unlink(path);
}

/* ---- a stale map left by an earlier process with our pid is not ours ---- */

static int stale_child(void *arg)
{
	char path[64], *buf;
	size_t len;
	int fd, ok;

	(void)arg;
	map_path(getpid(), path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);	/* as the dead process left it */
	if (fd < 0 || write(fd, "5000 10 dead_fn\n", 16) != 16)
		return 2;
	close(fd);
	jitrace_code_load((void *)0x6000, 0x10, "live_fn");
	buf = slurp(path, &len);
	ok = buf && !strcmp(buf, "6000 10 live_fn\n");
	free(buf);
	return !ok;
}

static void stale_map_of_a_reused_pid_is_emptied(void **state)
{
	char path[64];
	pid_t pid;

	(void)state;
	assert_int_equal(in_child(stale_child, NULL, &pid), 0);
	map_path(pid, path, sizeof(path));
	unlink(path);
}

/* ---- a map the runtime writes itself is not written twice ---- */

/* The runtime opened its map first (as .NET does when asked over IPC): left whole. */
static int runtime_map_child(void *arg)
{
	char path[64], *buf;
	size_t len;
	int fd, ok;

	(void)arg;
	map_path(getpid(), path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);	/* the runtime's, kept open */
	if (fd < 0 || write(fd, "5000 10 runtime_fn\n", 19) != 19)
		return 2;
	jitrace_code_load((void *)0x6000, 0x10, "agent_fn");
	buf = slurp(path, &len);
	ok = buf && !strcmp(buf, "5000 10 runtime_fn\n");
	free(buf);
	close(fd);
	return !ok;
}

/* The glue says the runtime will write it (its own flag): the agent writes none at all. */
static int perfmap_off_child(void *arg)
{
	char path[64];

	(void)arg;
	map_path(getpid(), path, sizeof(path));
	unlink(path);	/* a dead process's of the same pid, left behind (seen on a busy machine) */
	jitrace_perfmap_off();
	jitrace_code_load((void *)0x6000, 0x10, "agent_fn");
	return access(path, F_OK) == 0;
}

static void map_the_runtime_writes_is_not_written_twice(void **state)
{
	char path[64];
	pid_t pid;

	(void)state;
	assert_int_equal(in_child(runtime_map_child, NULL, &pid), 0);
	map_path(pid, path, sizeof(path));
	unlink(path);
	assert_int_equal(in_child(perfmap_off_child, NULL, &pid), 0);
	map_path(pid, path, sizeof(path));
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ids_are_unique_and_lines_whole_across_threads),
		cmocka_unit_test(map_line_is_written_before_load_returns),
		cmocka_unit_test(planted_symlink_is_not_followed),
		cmocka_unit_test(planted_hard_link_is_not_written),
		cmocka_unit_test(planted_fifo_does_not_block_code_load),
		cmocka_unit_test(foreign_owned_map_is_not_written),
		cmocka_unit_test(forked_child_writes_its_own_map),
		cmocka_unit_test(stale_map_of_a_reused_pid_is_emptied),
		cmocka_unit_test(map_the_runtime_writes_is_not_written_twice),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
