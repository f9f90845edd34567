// SPDX-License-Identifier: GPL-2.0
/*
 * What isolation does to jitrace: a JIT in its own pid and mount namespaces (its own
 * /tmp) still gets its names; without root, jitrace says what it needs; and the collector
 * itself runs clean under valgrind on a short recording.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "lib.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 1 << 20);

	assert_non_null(f);
	assert_non_null(buf);
	if (fread(buf, 1, (1 << 20) - 1, f) == 0 && ferror(f))
		fail_msg("reading %s", path);
	fclose(f);
	return buf;
}

/* The pid whose proc record has comm, or 0. */
static uint32_t pid_of_comm(const struct it_log *log, const char *comm)
{
	size_t i;

	for (i = 0; i < log->n; i++) {
		const struct jt_rec_proc *p = (const void *)log->recs[i];

		if (p->h.type == JT_REC_PROC && !strncmp(p->comm, comm, sizeof(p->comm)))
			return p->pid;
	}
	return 0;
}

/* ---- a container: own pid namespace, own mount namespace, own /tmp ---- */

static void test_container_gets_its_names(void **state)
{
	char *log_path = it_path_dup("ns.jtl"), *out = it_path_dup("ns.out");
	char *build = realpath("build", NULL);
	/*
	 * perf map names only (--no-agent): found through /proc/PID/root and NStgid. The
	 * build directory is bound to /mnt first: the checkout may itself be under /tmp.
	 */
	char *argv[] = { IT_JITRACE, "record", "-f", "-F", "999", "--no-agent", "-o", log_path,
			 "--", "unshare", "--pid", "--mount", "--fork", "--mount-proc", "sh", "-c",
			 "mount --bind \"$0\" /mnt && mount -t tmpfs tmpfs /tmp && "
			 "exec /mnt/toyjit split --ms 2000", build, NULL };
	struct it_toy toy;
	struct it_log log;
	uint32_t host_pid;
	uint64_t a, b;

	(void)state;
	assert_int_equal(it_run(argv, out, NULL), 0);
	it_toy_parse(out, &toy);
	it_log_load(log_path, &log);
	it_check_promises(&log);
	host_pid = pid_of_comm(&log, "toyjit");
	print_message("toy JIT: pid %d inside, %u on the host\n", toy.pid, host_pid);
	assert_true(host_pid != 0);
	assert_int_not_equal((uint32_t)toy.pid, host_pid);	/* really in its own namespace */
	a = it_count_leaf(&log, host_pid, 0, "hot_a");
	b = it_count_leaf(&log, host_pid, 0, "hot_b");
	print_message("named from the container's own /tmp/perf-%d.map: hot_a %llu, hot_b %llu\n",
		      toy.pid, (unsigned long long)a, (unsigned long long)b);
	assert_true(a > 500 && b > 150);
	it_log_free(&log);
	free(build);
	free(log_path);
	free(out);
}

/* ---- without root, a clear error that names what is needed ---- */

static void test_unprivileged_error_names_capabilities(void **state)
{
	char *err = it_path_dup("noroot.err"), *dir = it_path_dup("noroot"), *text;
	char log_path[512];
	char *argv[] = { IT_JITRACE, "record", "-d", "1", "-o", log_path, NULL };
	int status;
	pid_t pid;

	(void)state;
	/* a directory nobody may write to, so that only the missing privileges stop it */
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(chmod(it_dir(), 0711), 0);
	snprintf(log_path, sizeof(log_path), "%s/out.jtl", dir);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		FILE *f = freopen(err, "w", stderr);

		if (!f || setgroups(0, NULL) || setgid(65534) || setuid(65534))
			_exit(99);
		execv(argv[0], argv);
		_exit(98);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_not_equal(WEXITSTATUS(status), 0);
	assert_true(WEXITSTATUS(status) < 98);
	text = slurp(err);
	print_message("as nobody: %s", text);
	assert_non_null(strstr(text, "root"));
	assert_non_null(strstr(text, "CAP_BPF"));
	assert_non_null(strstr(text, "CAP_PERFMON"));
	assert_int_equal(access(log_path, F_OK), -1);	/* no log left behind */
	free(text);
	free(err);
	free(dir);
}

/*
 * With CAP_BPF and CAP_PERFMON but not root, jitrace records, and says once what it cannot
 * read: root's toy JIT's perf map (behind /proc/PID/root) and its files (map_files), each
 * with the capability that is missing, instead of leaving raw addresses without a word.
 */
static void test_capabilities_alone_say_what_is_missing(void **state)
{
	char *err = it_path_dup("caps.err"), *dir = it_path_dup("caps"), *text, *at;
	char log_path[512], pid_arg[16];
	char *toy[] = { IT_TOYJIT, "split", "--ms", "2500", NULL };
	char *argv[] = { "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
			 "--inh-caps=+bpf,+perfmon", "--ambient-caps=+bpf,+perfmon", IT_JITRACE,
			 "record", "--no-agent", "--no-usdt", "-p", pid_arg, "-d", "1", "-o",
			 log_path, NULL };
	pid_t toy_pid, pid;

	(void)state;
	if (access(argv[0], X_OK)) {
		print_message("%s is missing: capability test skipped\n", argv[0]);
		skip();
	}
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(chmod(dir, 01777), 0);
	assert_int_equal(chmod(it_dir(), 0711), 0);
	snprintf(log_path, sizeof(log_path), "%s/out.jtl", dir);
	toy_pid = it_spawn(toy, NULL, NULL);
	usleep(300000);		/* its code is loaded and its map written */
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)toy_pid);
	pid = it_spawn(argv, NULL, err);
	assert_int_equal(it_wait(pid), 0);
	assert_int_equal(it_wait(toy_pid), 0);
	text = slurp(err);
	print_message("with CAP_BPF and CAP_PERFMON as nobody: %s", text);
	at = strstr(text, "CAP_SYS_PTRACE");
	assert_non_null(at);				/* the perf map */
	assert_non_null(strstr(text, "perf-"));
	assert_non_null(strstr(text, "CAP_CHECKPOINT_RESTORE"));	/* its files */
	assert_null(strstr(strstr(at, "\n") ?: at, "perf maps of"));	/* said once */
	assert_int_equal(access(log_path, R_OK), 0);
	free(text);
	free(err);
	free(dir);
}

/* ---- the collector under valgrind: no memory error, no leak ---- */

static void test_collector_clean_under_valgrind(void **state)
{
	char *log_path = it_path_dup("vg.jtl"), *err = it_path_dup("vg.err"), *text;
	char *argv[] = { "/usr/bin/valgrind", "--error-exitcode=99", "--leak-check=full",
			 "--suppressions=tests/integration/valgrind.supp",
			 "--errors-for-leak-kinds=definite,indirect", "--show-leak-kinds=definite,indirect",
			 IT_JITRACE, "record", "-f", "-F", "999", "-g", "--calls", "-o", log_path,
			 "--", IT_TOYJIT, "split", "-i", "--ms", "1500", NULL };
	struct it_log log;
	size_t i, samples = 0, calls = 0, symbols = 0;
	int status;

	(void)state;
	if (access("/usr/bin/valgrind", X_OK))
		skip();		/* deps.sh installs it for `make test` */
	status = it_run(argv, "/dev/null", err);
	text = slurp(err);
	if (status)
		print_message("%s", text);
	assert_int_equal(status, 0);
	assert_non_null(strstr(text, "ERROR SUMMARY: 0 errors"));
	it_log_load(log_path, &log);
	it_check_promises(&log);
	for (i = 0; i < log.n; i++) {
		samples += log.recs[i]->type == JT_REC_SAMPLE;
		calls += log.recs[i]->type == JT_REC_ENTER;
		symbols += log.recs[i]->type == JT_REC_SYMBOL;
	}
	print_message("under valgrind: %zu samples, %zu calls, %zu symbols; 0 errors\n", samples,
		      calls, symbols);
	assert_true(samples > 100 && calls > 100 && symbols > 0);
	it_log_free(&log);
	free(text);
	free(log_path);
	free(err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_container_gets_its_names),
		cmocka_unit_test(test_unprivileged_error_names_capabilities),
		cmocka_unit_test(test_capabilities_alone_say_what_is_missing),
		cmocka_unit_test(test_collector_clean_under_valgrind),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
