// SPDX-License-Identifier: GPL-2.0
/* Output files: never through a symlink, nor over a device or FIFO; 0600; put in place whole. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cmocka.h>

#include "scratch.h"

#include "base/outfile.h"

/* a uid that is neither root nor, when these tests run as root, the caller */
#define OTHER_UID 65534

/* ---- a temporary directory per test, removed with everything in it ---- */

struct tmp {
	char dir[256];
	char path[512];		/* scratch for tpath() */
	char err[512];		/* where stderr goes while captured */
	int saved_stderr;
};

static int tmp_setup(void **state)
{
	struct tmp *t = calloc(1, sizeof(*t));

	if (!t || scratch_make(t->dir, sizeof(t->dir), "outfile")) {
		free(t);
		return -1;
	}
	*state = t;
	return 0;
}

static int remove_nested(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type;
	return ftw->level ? remove(path) : 0;
}

static int tmp_teardown(void **state)
{
	struct tmp *t = *state;

	/*
	 * Subdirectories first, which scratch_remove() leaves; FTW_PHYS removes a symlink
	 * itself, never following it out of the directory.
	 */
	nftw(t->dir, remove_nested, 16, FTW_DEPTH | FTW_PHYS);
	scratch_remove(t->dir);
	free(t);
	return 0;
}

static const char *tpath(struct tmp *t, const char *name)
{
	snprintf(t->path, sizeof(t->path), "%s/%s", t->dir, name);
	return t->path;
}

static void spit(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	assert_int_equal(fchmod(fd, mode), 0);
	close(fd);
}

static void write_text(struct jt_outfile *of, const char *text)
{
	int fd = jt_outfile__fd(of);

	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
}

/* path written whole with text: 0, or what committing it returned. */
static int commit_text(const char *path, bool force, const char *text)
{
	struct jt_outfile *of = jt_outfile__open(path, force);

	assert_non_null(of);
	write_text(of, text);
	return jt_outfile__commit(of);
}

static void assert_file_is(const char *path, const char *text)
{
	size_t len;
	char *got = slurp(path, &len);

	assert_string_equal(got, text);
	free(got);
}

static void capture_begin(struct tmp *t)
{
	int fd;

	snprintf(t->err, sizeof(t->err), "%s/stderr.txt", t->dir);
	fflush(stderr);
	t->saved_stderr = dup(2);
	fd = open(t->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(t->saved_stderr >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
}

/* What was reported since capture_begin(); the capture file is removed. */
static char *capture_end(struct tmp *t)
{
	size_t len;
	char *text;

	fflush(stderr);
	dup2(t->saved_stderr, 2);
	close(t->saved_stderr);
	text = slurp(t->err, &len);
	unlink(t->err);
	return text;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

/* Create path, expecting a refusal reported once, naming path and saying why. */
static void assert_refused(struct tmp *t, const char *path, bool force, const char *why)
{
	struct jt_outfile *of;
	char *err;

	capture_begin(t);
	of = jt_outfile__open(path, force);
	err = capture_end(t);
	jt_outfile__close(of);
	assert_null(of);
	assert_int_equal(count_lines(err), 1);
	if (!strstr(err, path) || !strstr(err, why))
		fail_msg("expected '%s' and '%s' in: %s", path, why, err);
	free(err);
}

/* ---- the file itself ---- */

static void symlink_at_path_is_never_written_through(void **state)
{
	struct tmp *t = *state;
	char elsewhere[512], precious[512], link[512], dangling[512];
	struct stat st;

	snprintf(elsewhere, sizeof(elsewhere), "%s/elsewhere", t->dir);
	assert_int_equal(mkdir(elsewhere, 0700), 0);
	snprintf(precious, sizeof(precious), "%s/elsewhere/precious", t->dir);
	spit(precious, "precious\n", 0600);
	snprintf(link, sizeof(link), "%s/out.svg", t->dir);
	assert_int_equal(symlink(precious, link), 0);
	snprintf(dangling, sizeof(dangling), "%s/dangling.svg", t->dir);
	assert_int_equal(symlink(tpath(t, "nowhere"), dangling), 0);

	assert_refused(t, link, false, "it is a symlink");
	assert_refused(t, dangling, false, "it is a symlink");
	assert_file_is(precious, "precious\n");
	assert_int_equal(lstat(tpath(t, "nowhere"), &st), -1);	/* not created through it */

	/* force replaces the link itself; its target keeps its contents and its mode */
	assert_int_equal(commit_text(link, true, "new\n"), 0);
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_file_is(link, "new\n");
	assert_file_is(precious, "precious\n");
	assert_int_equal(stat(precious, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
}

static void existing_file_is_refused_without_force_and_replaced_with_force(void **state)
{
	struct tmp *t = *state;
	char out[512], other[512];
	struct stat st;

	snprintf(out, sizeof(out), "%s/out.json", t->dir);
	snprintf(other, sizeof(other), "%s/other-name", t->dir);
	spit(out, "old\n", 0644);
	assert_int_equal(link(out, other), 0);

	assert_refused(t, out, false, "already exists (-f, --force replaces it)");
	assert_file_is(out, "old\n");

	/* replaced, not truncated: the file's other name still holds the old contents */
	assert_int_equal(commit_text(out, true, "new\n"), 0);
	assert_file_is(out, "new\n");
	assert_file_is(other, "old\n");
	assert_int_equal(lstat(out, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);	/* not the old file's 0644 */
	assert_int_equal(scratch_entries(t->dir), 2);	/* no temporary file left beside it */
}

static void fifo_is_refused_even_with_force(void **state)
{
	struct tmp *t = *state;
	struct stat st;
	int reader;

	assert_int_equal(mkfifo(tpath(t, "fifo"), 0600), 0);
	/* with a reader there, opening it to write would succeed (not hang) and feed it */
	reader = open(t->path, O_RDONLY | O_NONBLOCK);
	assert_true(reader >= 0);
	assert_refused(t, t->path, false, "it is a FIFO");
	assert_refused(t, t->path, true, "it is a FIFO");
	close(reader);
	assert_int_equal(lstat(t->path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
}

static void device_is_refused_even_with_force(void **state)
{
	struct tmp *t = *state;
	struct stat st;

	assert_refused(t, "/dev/null", false, "it is a character device");
	assert_int_equal(lstat("/dev/null", &st), 0);
	assert_true(S_ISCHR(st.st_mode));

	/* -f on a device node of our own, so that a failure cannot replace /dev/null */
	if (geteuid()) {
		print_message("skipped: -f over a device node needs root to mknod one\n");
		skip();
	}
	assert_int_equal(mknod(tpath(t, "null"), S_IFCHR | 0600, makedev(1, 3)), 0);
	assert_refused(t, t->path, true, "it is a character device");
	assert_int_equal(lstat(t->path, &st), 0);
	assert_true(S_ISCHR(st.st_mode));
}

static void directory_is_refused_even_with_force(void **state)
{
	struct tmp *t = *state;

	assert_int_equal(mkdir(tpath(t, "dir.svg"), 0700), 0);
	assert_refused(t, t->path, true, "it is a directory");
	assert_refused(t, tpath(t, "dir.svg/"), true, "does not end in a file name");
}

static void mode_is_0600_even_under_umask_000(void **state)
{
	struct tmp *t = *state;
	mode_t old = umask(0);
	struct stat st;
	int err;

	err = commit_text(tpath(t, "new.svg"), false, "svg\n");
	umask(old);
	assert_int_equal(err, 0);
	assert_int_equal(lstat(t->path, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(st.st_mode & 07777, 0600);
}

/* ---- the directories on the way ---- */

static void parent_symlink_owned_by_another_user_is_refused(void **state)
{
	struct tmp *t = *state;
	char real[512], evil[512], out[512];
	struct stat st;

	if (geteuid()) {
		print_message("skipped: needs root to chown a symlink to another uid\n");
		skip();
	}
	snprintf(real, sizeof(real), "%s/real", t->dir);
	assert_int_equal(mkdir(real, 0755), 0);
	snprintf(evil, sizeof(evil), "%s/evil", t->dir);
	assert_int_equal(symlink("real", evil), 0);
	assert_int_equal(lchown(evil, OTHER_UID, OTHER_UID), 0);

	snprintf(out, sizeof(out), "%s/evil/out.jtl", t->dir);
	assert_refused(t, out, true, "'evil' on the way is a symlink owned by uid 65534");
	assert_int_equal(scratch_entries(real), 0);

	/* a trusted link is followed, but its target is walked too: evil is still refused */
	assert_int_equal(symlink("evil", tpath(t, "mine")), 0);
	snprintf(out, sizeof(out), "%s/mine/out.jtl", t->dir);
	assert_refused(t, out, true, "'evil' on the way is a symlink owned by uid 65534");
	assert_int_equal(scratch_entries(real), 0);

	/* the same link is followed once it is root's */
	assert_int_equal(lchown(evil, 0, 0), 0);
	assert_int_equal(commit_text(out, false, ""), 0);
	snprintf(out, sizeof(out), "%s/real/out.jtl", t->dir);
	assert_int_equal(lstat(out, &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

static void own_parent_symlink_is_followed(void **state)
{
	struct tmp *t = *state;
	char out[512];

	assert_int_equal(mkdir(tpath(t, "real"), 0700), 0);
	assert_int_equal(symlink("real", tpath(t, "link")), 0);
	snprintf(out, sizeof(out), "%s/link/out.svg", t->dir);
	assert_int_equal(commit_text(out, false, "svg\n"), 0);
	assert_file_is(tpath(t, "real/out.svg"), "svg\n");
}

static void missing_or_file_parent_is_reported_once_with_the_path(void **state)
{
	struct tmp *t = *state;
	char out[512];

	snprintf(out, sizeof(out), "%s/no/such/dir/out.svg", t->dir);
	assert_refused(t, out, false, "'no': No such file or directory");
	spit(tpath(t, "file"), "x\n", 0600);
	snprintf(out, sizeof(out), "%s/file/out.svg", t->dir);
	assert_refused(t, out, false, "'file': Not a directory");
}

/* ---- put in place whole, or not at all ---- */

/* out made to hold "old\n", then opened with -f and text written: out still holds "old\n". */
static struct jt_outfile *open_over_old(const char *out, const char *text)
{
	struct jt_outfile *of;

	spit(out, "old\n", 0600);
	of = jt_outfile__open(out, true);
	assert_non_null(of);
	write_text(of, text);
	assert_file_is(out, "old\n");
	return of;
}

static void target_is_untouched_until_committed_and_after_a_drop(void **state)
{
	struct tmp *t = *state;
	struct jt_outfile *of;
	char out[512];

	snprintf(out, sizeof(out), "%s", tpath(t, "out.json"));
	of = open_over_old(out, "new, half written");
	assert_int_equal(scratch_entries(t->dir), 1);	/* nothing visible beside it */
	assert_int_equal(jt_outfile__close(of), 0);	/* dropped: a failed command */
	assert_file_is(out, "old\n");
	assert_int_equal(scratch_entries(t->dir), 1);

	of = jt_outfile__open(tpath(t, "new.json"), false);
	assert_non_null(of);
	write_text(of, "half");
	assert_int_equal(jt_outfile__close(of), 0);
	assert_int_equal(scratch_entries(t->dir), 1);	/* no new.json, no temporary file */
}

static void file_appearing_meanwhile_is_kept_without_force(void **state)
{
	struct tmp *t = *state;
	struct jt_outfile *of;
	char out[512], *err;

	snprintf(out, sizeof(out), "%s", tpath(t, "out.svg"));
	of = jt_outfile__open(out, false);	/* nothing there yet: accepted */
	assert_non_null(of);
	write_text(of, "ours\n");
	spit(out, "theirs\n", 0644);
	capture_begin(t);
	assert_int_equal(jt_outfile__commit(of), -EEXIST);
	err = capture_end(t);
	assert_int_equal(count_lines(err), 1);
	if (!strstr(err, out) || !strstr(err, "appeared while it was being written"))
		fail_msg("not said: %s", err);
	free(err);
	assert_file_is(out, "theirs\n");
	assert_int_equal(scratch_entries(t->dir), 1);

	/* with force, what appeared is replaced as what was there at the start would be */
	unlink(out);
	of = jt_outfile__open(out, true);
	assert_non_null(of);
	write_text(of, "ours\n");
	spit(out, "theirs\n", 0644);
	assert_int_equal(jt_outfile__commit(of), 0);
	assert_file_is(out, "ours\n");
	assert_int_equal(scratch_entries(t->dir), 1);
}

/*
 * The directory the file was made in is swapped for a symlink to another one holding a file
 * of the same name (issue 30): dropping the output, or committing it, acts in the directory
 * it was made in; the other directory's file is never removed nor replaced.
 */
static void swapped_directory_cannot_redirect_a_drop_or_a_commit(void **state)
{
	struct tmp *t = *state;
	char dir[400], moved[400], out[512], precious[512];
	struct jt_outfile *of;
	int force;

	snprintf(dir, sizeof(dir), "%s/reports", t->dir);
	snprintf(moved, sizeof(moved), "%s/reports.real", t->dir);
	snprintf(out, sizeof(out), "%s/k5.json", dir);
	assert_int_equal(mkdir(tpath(t, "secret"), 0700), 0);
	snprintf(precious, sizeof(precious), "%s", tpath(t, "secret/k5.json"));
	spit(precious, "precious\n", 0600);

	for (force = 0; force <= 1; force++) {
		assert_int_equal(mkdir(dir, 0755), 0);
		if (force)
			spit(out, "old\n", 0600);
		of = jt_outfile__open(out, force);
		assert_non_null(of);
		write_text(of, "dropped\n");
		assert_int_equal(rename(dir, moved), 0);
		assert_int_equal(symlink("secret", dir), 0);
		assert_int_equal(jt_outfile__close(of), 0);
		assert_file_is(precious, "precious\n");
		assert_int_equal(scratch_entries(moved), force);

		/* back, and again committed: the file lands where it was made */
		assert_int_equal(unlink(dir), 0);
		assert_int_equal(rename(moved, dir), 0);
		of = jt_outfile__open(out, force);
		assert_non_null(of);
		write_text(of, "new\n");
		assert_int_equal(rename(dir, moved), 0);
		assert_int_equal(symlink("secret", dir), 0);
		assert_int_equal(jt_outfile__commit(of), 0);
		assert_file_is(precious, "precious\n");
		snprintf(t->path, sizeof(t->path), "%s/k5.json", moved);
		assert_file_is(t->path, "new\n");
		assert_int_equal(scratch_entries(moved), 1);
		assert_int_equal(unlink(t->path), 0);
		assert_int_equal(rmdir(moved), 0);
		assert_int_equal(unlink(dir), 0);
	}
}

/* record's log: placed once the recording began, then written on under its name. */
static void placed_file_is_written_on_under_its_name(void **state)
{
	struct tmp *t = *state;
	struct jt_outfile *of;
	char out[512];

	snprintf(out, sizeof(out), "%s", tpath(t, "x.jtl"));
	of = open_over_old(out, "head|");
	assert_int_equal(jt_outfile__place(of), 0);
	assert_file_is(out, "head|");
	write_text(of, "tail\n");
	assert_int_equal(jt_outfile__place(of), 0);	/* again: only flushed */
	assert_int_equal(jt_outfile__close(of), 0);	/* placed: kept, not dropped */
	assert_file_is(out, "head|tail\n");
	assert_int_equal(scratch_entries(t->dir), 1);
}

/* A stream's buffered bytes are flushed before the file is put in place. */
static void stream_is_flushed_before_it_is_placed(void **state)
{
	struct tmp *t = *state;
	struct jt_outfile *of;
	FILE *f;

	f = jt_outfile__fopen(tpath(t, "out.folded"), false, &of);
	assert_non_null(f);
	fputs("a;b 1\n", f);		/* held in stdio's buffer */
	assert_int_equal(jt_outfile__finish(of, true), 0);
	assert_file_is(tpath(t, "out.folded"), "a;b 1\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
#define T(f) cmocka_unit_test_setup_teardown(f, tmp_setup, tmp_teardown)
		T(symlink_at_path_is_never_written_through),
		T(existing_file_is_refused_without_force_and_replaced_with_force),
		T(fifo_is_refused_even_with_force),
		T(device_is_refused_even_with_force),
		T(directory_is_refused_even_with_force),
		T(mode_is_0600_even_under_umask_000),
		T(parent_symlink_owned_by_another_user_is_refused),
		T(own_parent_symlink_is_followed),
		T(missing_or_file_parent_is_reported_once_with_the_path),
		T(target_is_untouched_until_committed_and_after_a_drop),
		T(file_appearing_meanwhile_is_kept_without_force),
		T(swapped_directory_cannot_redirect_a_drop_or_a_commit),
		T(placed_file_is_written_on_under_its_name),
		T(stream_is_flushed_before_it_is_placed),
#undef T
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
