/* SPDX-License-Identifier: GPL-2.0 */
/* A directory's bytes as `du -sb` counts them, for the tests of the flight recorder's bound. */
#ifndef JT_TEST_DIRBYTES_H
#define JT_TEST_DIRBYTES_H

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>

/* The directory's own size and every entry's (not followed); 0 if it cannot be read. */
static inline uint64_t test_dir_bytes(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	struct stat st;
	uint64_t n = 0;

	if (!d)
		return 0;
	if (!fstat(dirfd(d), &st))
		n += st.st_size;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    !fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			n += st.st_size;
	closedir(d);
	return n;
}

#endif
