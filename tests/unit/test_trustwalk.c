// SPDX-License-Identifier: GPL-2.0
/* base/trustwalk: the one walk outputs and trusted reads share, on a scratch tree. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "base/trustwalk.h"

#define OTHER_UID 65534

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/jt-trustwalk-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	return chdir(dir);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return chdir("/") || system(cmd);
}

static int walk(const char *path, bool want_dir, struct jt_trustwalk *w)
{
	memset(w, 0, sizeof(*w));
	w->uid = geteuid();
	return jt_trustwalk__open(w, AT_FDCWD, path, want_dir);
}

static void files_and_directories(void **state)
{
	struct jt_trustwalk w;
	int fd;
	char c;

	(void)state;
	assert_int_equal(mkdir("d", 0755), 0);
	fd = open("d/f", O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "x", 1), 1);
	close(fd);

	fd = walk("d//f", false, &w);	/* a file, read */
	assert_true(fd >= 0);
	assert_int_equal(read(fd, &c, 1), 1);
	assert_int_equal(c, 'x');
	close(fd);
	fd = walk("d/", true, &w);	/* a directory, as O_PATH */
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_PATH, O_PATH);
	close(fd);
	/* a file where a directory must be: ENOTDIR, naming it */
	assert_int_equal(walk("d/f/g", false, &w), -1);
	assert_int_equal(errno, ENOTDIR);
	assert_string_equal(w.comp, "f");
	assert_int_equal(walk("d/missing/f", false, &w), -1);
	assert_int_equal(errno, ENOENT);
	assert_string_equal(w.comp, "missing");
}

static void symlinks(void **state)
{
	char longname[NAME_MAX + 8];
	struct jt_trustwalk w;
	int fd;

	(void)state;
	assert_int_equal(mkdir("e", 0755), 0);
	assert_int_equal(symlink("e", "mine"), 0);
	fd = walk("mine", true, &w);	/* our own link: followed */
	assert_true(fd >= 0);
	close(fd);
	/* a loop ends in ELOOP after the kernel's 40 links, not in a hang */
	assert_int_equal(symlink("loop", "loop"), 0);
	assert_int_equal(walk("loop/x", false, &w), -1);
	assert_int_equal(errno, ELOOP);
	assert_int_equal(w.links, 41);
	/* the last component too is followed when the link is ours, and read */
	fd = open("e/f", O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(symlink("e/f", "last"), 0);
	fd = walk("last", false, &w);
	assert_true(fd >= 0);
	assert_int_equal(fcntl(fd, F_GETFL) & O_ACCMODE, O_RDONLY);
	close(fd);
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	assert_int_equal(walk(longname, false, &w), -1);
	assert_int_equal(errno, ENAMETOOLONG);
	if (geteuid()) {
		print_message("skipped: needs root to chown a symlink to another uid\n");
		return;
	}
	assert_int_equal(symlink("e", "theirs"), 0);
	assert_int_equal(lchown("theirs", OTHER_UID, OTHER_UID), 0);
	assert_int_equal(walk("theirs/", true, &w), -1);
	assert_int_equal(errno, EPERM);
	assert_true(w.refused);
	assert_int_equal(w.owner, OTHER_UID);
	assert_string_equal(w.comp, "theirs");
	/* and so is a foreign link as the file read */
	assert_int_equal(symlink("e/f", "theirs2"), 0);
	assert_int_equal(lchown("theirs2", OTHER_UID, OTHER_UID), 0);
	assert_int_equal(walk("theirs2", false, &w), -1);
	assert_true(w.refused);
	assert_string_equal(w.comp, "theirs2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(files_and_directories, setup, teardown),
		cmocka_unit_test_setup_teardown(symlinks, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
