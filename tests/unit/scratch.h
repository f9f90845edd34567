/* SPDX-License-Identifier: GPL-2.0 */
/* Test helpers: a scratch directory under $TMPDIR and its entries; a file read whole. */
#ifndef JT_TEST_SCRATCH_H
#define JT_TEST_SCRATCH_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Include after <cmocka.h>. */

/* Make dir (cap bytes) a new directory named after name. Returns 0 or -1. */
static inline int scratch_make(char *dir, size_t cap, const char *name)
{
	const char *base = getenv("TMPDIR");

	snprintf(dir, cap, "%s/jt_test_%s.XXXXXX", base ? base : "/tmp", name);
	return mkdtemp(dir) ? 0 : -1;
}

/* Remove dir and the files in it. */
static inline void scratch_remove(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);

	while (d && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

/* How many entries dir holds, besides "." and "..". Fails the test if it cannot be read. */
static inline int scratch_entries(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		fail_msg("cannot open %s", dir);
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

/* The whole file, NUL-terminated; *len gets its size. Fails the test if it cannot. */
static inline char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		fail_msg("cannot open %s", path);
	assert_int_equal(fstat(fd, &st), 0);
	buf = malloc(st.st_size + 1);
	assert_non_null(buf);
	assert_int_equal(read(fd, buf, st.st_size), st.st_size);
	buf[st.st_size] = '\0';
	close(fd);
	*len = st.st_size;
	return buf;
}

#endif
