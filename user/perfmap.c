// SPDX-License-Identifier: GPL-2.0
/* Perf map parsing, and following one map file that an untrusted process writes. */
#ifndef _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "perfmap.h"

/* Bytes per pread; several of these make up one poll's JT_PERFMAP_READ_MAX budget. */
#define JT_PERFMAP_CHUNK (64 * 1024)

struct jt_perfmap_parser {
	uint64_t bad;
	size_t part_len;	/* bytes of an unfinished line kept in part */
	bool skipping;		/* dropping the rest of an over-long line up to its newline */
	char part[JT_PERFMAP_LINE_MAX];
};

struct jt_perfmap_file {
	int fd;
	off_t off;		/* file offset of the next byte to read */
	bool at_end;		/* the last poll read everything there was */
	struct jt_perfmap_parser parser;
	char buf[JT_PERFMAP_CHUNK];
};

struct jt_perfmap_parser *jt_perfmap_parser__new(void)
{
	return calloc(1, sizeof(struct jt_perfmap_parser));
}

void jt_perfmap_parser__free(struct jt_perfmap_parser *p)
{
	free(p);
}

void jt_perfmap_parser__reset(struct jt_perfmap_parser *p)
{
	p->part_len = 0;
	p->skipping = false;
}

uint64_t jt_perfmap_parser__bad_lines(const struct jt_perfmap_parser *p)
{
	return p->bad;
}

static inline bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static inline int hex_value(char c)
{
	unsigned char u = (unsigned char)c;

	if ((unsigned int)(u - '0') < 10)
		return u - '0';
	u |= 0x20;	/* ASCII lower case */
	if ((unsigned int)(u - 'a') < 6)
		return u - 'a' + 10;
	return -1;
}

/*
 * Parse one hex number, optionally 0x-prefixed, that must end at end or at a blank.
 * Returns the first byte after it, or NULL if it is empty, not hex, or wider than 64 bits.
 */
static const char *parse_hex(const char *s, const char *end, uint64_t *out)
{
	const char *digits;
	uint64_t v = 0;
	int d;

	if (end - s >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	for (digits = s; s < end && (d = hex_value(*s)) >= 0; s++) {
		if (v >> 60)
			return NULL;
		v = v << 4 | (uint64_t)d;
	}
	if (s == digits || (s < end && !is_blank(*s)))
		return NULL;
	*out = v;
	return s;
}

static const char *skip_blanks(const char *s, const char *end)
{
	while (s < end && is_blank(*s))
		s++;
	return s;
}

/* Parse one line without its newline. Returns 1 if it produced an entry. */
static size_t parse_line(struct jt_perfmap_parser *p, const char *s, size_t len,
			 jt_perfmap_cb cb, void *ctx)
{
	const char *end = s + len;
	struct jt_perfmap_entry e;

	while (end > s && (is_blank(end[-1]) || end[-1] == '\r'))
		end--;
	if (end == s)
		return 0;	/* blank lines are allowed and mean nothing */

	s = parse_hex(s, end, &e.start);
	if (!s || s == end)
		goto bad;
	s = parse_hex(skip_blanks(s, end), end, &e.size);
	if (!s || s == end)
		goto bad;
	s = skip_blanks(s, end);
	/* end[-1] is not blank, so the name is non-empty */
	if (!e.size || e.size > UINT64_MAX - e.start)
		goto bad;
	e.name = s;
	e.name_len = (size_t)(end - s);
	cb(ctx, &e);
	return 1;
bad:
	p->bad++;
	return 0;
}

size_t jt_perfmap_parser__feed(struct jt_perfmap_parser *p, const char *buf, size_t len,
			       jt_perfmap_cb cb, void *ctx)
{
	const char *end = buf + len;
	size_t n = 0;

	while (buf < end) {
		const char *nl = memchr(buf, '\n', (size_t)(end - buf));
		size_t line_len;

		if (p->skipping) {
			if (!nl)
				break;
			p->skipping = false;
			buf = nl + 1;
			continue;
		}
		if (!nl) {
			/* keep the unfinished line for the next feed, if it can still fit */
			line_len = (size_t)(end - buf);
			if (line_len > JT_PERFMAP_LINE_MAX - p->part_len) {
				p->bad++;
				p->part_len = 0;
				p->skipping = true;
			} else {
				memcpy(p->part + p->part_len, buf, line_len);
				p->part_len += line_len;
			}
			break;
		}
		line_len = (size_t)(nl - buf);
		if (p->part_len) {
			if (line_len > JT_PERFMAP_LINE_MAX - p->part_len) {
				p->bad++;
			} else {
				memcpy(p->part + p->part_len, buf, line_len);
				n += parse_line(p, p->part, p->part_len + line_len, cb, ctx);
			}
			p->part_len = 0;
		} else if (line_len > JT_PERFMAP_LINE_MAX) {
			p->bad++;
		} else {
			n += parse_line(p, buf, line_len, cb, ctx);
		}
		buf = nl + 1;
	}
	return n;
}

/* The NStgid of pid (its pid inside its own namespace), or pid if the kernel has none. */
static int read_nstgid(int pid_dir, pid_t pid, pid_t *out)
{
	char *line = NULL;
	size_t cap = 0;
	int err = 0;
	FILE *fp;
	int fd;

	*out = pid;
	fd = openat(pid_dir, "status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fp = fdopen(fd, "r");
	if (!fp) {
		err = -errno;
		close(fd);
		return err;
	}
	errno = 0;
	while (getline(&line, &cap, fp) > 0) {
		/* "NStgid:\t<pid in each namespace, outermost first>\n": we want the last */
		char *s, *end;
		long v = 0;

		if (strncmp(line, "NStgid:", 7))
			continue;
		end = line + strlen(line);
		while (end > line + 7 && (end[-1] == '\n' || is_blank(end[-1])))
			end--;
		for (s = end; s > line + 7 && s[-1] >= '0' && s[-1] <= '9'; s--)
			;
		/* an exiting process has left its namespaces: "NStgid:" with no number */
		if (end == line + 7) {
			err = -ESRCH;
			break;
		}
		if (s == end || (s > line + 7 && !is_blank(s[-1])) || end - s > 10) {
			err = -EINVAL;
			break;
		}
		for (; s < end; s++)
			v = v * 10 + (*s - '0');
		if (v <= 0 || v > INT32_MAX)
			err = -EINVAL;
		else
			*out = (pid_t)v;
		break;
	}
	if (!err && ferror(fp))
		err = errno ? -errno : -EIO;	/* e.g. ESRCH: the process exited */
	free(line);
	fclose(fp);
	return err;
}

static int open_pid_dir(pid_t pid)
{
	char path[32];

	if (pid <= 0) {
		errno = EINVAL;
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

int jt_perfmap__path(pid_t pid, char *buf, size_t len)
{
	pid_t nstgid;
	int dir, err, n;

	dir = open_pid_dir(pid);
	if (dir < 0)
		return -errno;
	err = read_nstgid(dir, pid, &nstgid);
	close(dir);
	if (err)
		return err;
	n = snprintf(buf, len, "/proc/%d/root/tmp/perf-%d.map", (int)pid, (int)nstgid);
	if (n < 0 || (size_t)n >= len)
		return -ENAMETOOLONG;
	return 0;
}

#define JT_PERFMAP_OPEN_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/*
 * openat2() stand-in for where it is missing (ENOSYS: older seccomp profiles, valgrind):
 * walk the path one component at a time without following any symlink, and refuse ".."
 * so that a walk from a process's root cannot leave it.
 */
static int open_walk(int dir, const char *path)
{
	char comp[NAME_MAX + 1];
	const char *s = path;
	int cur = dir, fd = -1, err = 0;

	if (!*s) {
		errno = ENOENT;
		return -1;
	}
	if (*s == '/') {
		cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (cur < 0)
			return -1;
	}
	for (;;) {
		const char *e;
		struct stat st;
		size_t len;
		int next;

		while (*s == '/')
			s++;
		e = strchrnul(s, '/');
		len = (size_t)(e - s);
		if (len > NAME_MAX) {
			err = ENAMETOOLONG;
			break;
		}
		memcpy(comp, s, len);
		comp[len] = '\0';
		if (!strcmp(comp, "..")) {
			err = EXDEV;
			break;
		}
		for (s = e; *s == '/'; s++)
			;
		if (!*s) {
			/* the last component: O_NOFOLLOW makes a symlink fail with ELOOP */
			fd = openat(cur, len ? comp : ".", JT_PERFMAP_OPEN_FLAGS);
			if (fd < 0)
				err = errno;
			break;
		}
		if (!len)
			continue;
		/* O_PATH|O_NOFOLLOW gives the symlink itself, which fstat then shows */
		next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			err = errno;
			break;
		}
		if (fstat(next, &st))
			err = errno;
		else if (S_ISLNK(st.st_mode))
			err = ELOOP;
		else if (!S_ISDIR(st.st_mode))
			err = ENOTDIR;
		if (cur != dir)
			close(cur);
		cur = next;
		if (err)
			break;
	}
	if (cur != dir)
		close(cur);
	errno = err;
	return err ? -1 : fd;
}

static int open_untrusted(int dir, const char *path, uint64_t resolve)
{
	struct open_how how = {
		/* O_NONBLOCK: a FIFO planted in place of the map must not hang us on open */
		.flags = JT_PERFMAP_OPEN_FLAGS,
		.resolve = resolve,
	};
	long fd;

	do {
		fd = syscall(SYS_openat2, dir, path, &how, sizeof(how));
	} while (fd < 0 && errno == EINTR);
	if (fd < 0 && errno == ENOSYS)
		return open_walk(dir, path);
	return (int)fd;
}

/* Take ownership of fd if it is a regular file owned by root or uid; else close it. */
static struct jt_perfmap_file *file_from_fd(int fd, uid_t uid)
{
	struct jt_perfmap_file *f;
	struct stat st;
	int err;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st)) {
		err = errno;
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		err = EINVAL;
		goto fail;
	}
	if (st.st_uid != 0 && st.st_uid != uid) {
		err = EPERM;
		goto fail;
	}
	f = malloc(sizeof(*f));
	if (!f) {
		err = ENOMEM;
		goto fail;
	}
	f->fd = fd;
	f->off = 0;
	f->parser.bad = 0;
	jt_perfmap_parser__reset(&f->parser);
	return f;
fail:
	close(fd);
	errno = err;
	return NULL;
}

struct jt_perfmap_file *jt_perfmap_file__open(const char *path, uid_t uid)
{
	return file_from_fd(open_untrusted(AT_FDCWD, path, RESOLVE_NO_SYMLINKS), uid);
}

struct jt_perfmap_file *jt_perfmap_file__open_pid(pid_t pid, uid_t uid)
{
	char rel[32];
	pid_t nstgid;
	int dir, root, fd, err;

	/* status and root both through one /proc/PID fd: a reused pid fails with ESRCH */
	dir = open_pid_dir(pid);
	if (dir < 0)
		return NULL;
	err = read_nstgid(dir, pid, &nstgid);
	if (err) {
		close(dir);
		errno = -err;
		return NULL;
	}
	root = openat(dir, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	err = errno;
	close(dir);
	if (root < 0) {
		errno = err;
		return NULL;
	}
	snprintf(rel, sizeof(rel), "tmp/perf-%d.map", (int)nstgid);
	fd = open_untrusted(root, rel,
			    RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	err = errno;
	close(root);
	errno = err;
	return file_from_fd(fd, uid);
}

void jt_perfmap_file__free(struct jt_perfmap_file *f)
{
	if (!f)
		return;
	close(f->fd);
	free(f);
}

int jt_perfmap_file__poll(struct jt_perfmap_file *f, jt_perfmap_cb cb, void *ctx)
{
	size_t budget = JT_PERFMAP_READ_MAX;
	struct stat st;
	size_t n = 0;

	if (fstat(f->fd, &st))
		return -errno;
	if (st.st_size < f->off) {
		/* truncated or rewritten: a kept partial line belongs to the old contents */
		jt_perfmap_parser__reset(&f->parser);
		f->off = 0;
	}
	f->at_end = false;
	while (budget) {
		size_t want = budget < sizeof(f->buf) ? budget : sizeof(f->buf);
		ssize_t r = pread(f->fd, f->buf, want, f->off);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0) {
			f->at_end = true;
			break;
		}
		n += jt_perfmap_parser__feed(&f->parser, f->buf, (size_t)r, cb, ctx);
		f->off += r;
		budget -= (size_t)r;
	}
	return (int)n;
}

bool jt_perfmap_file__at_end(const struct jt_perfmap_file *f)
{
	return f->at_end;
}

uint64_t jt_perfmap_file__bad_lines(const struct jt_perfmap_file *f)
{
	return f->parser.bad;
}
