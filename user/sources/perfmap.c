// SPDX-License-Identifier: GPL-2.0
/* Perf map parsing, and following one map file that an untrusted process writes. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sources/perfmap.h"
#include "sources/safeopen.h"

/* The last bytes read, kept to tell a map rewritten in place from one appended to. */
#define TAIL_MAX 64

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
	bool at_end;		/* this read reached the end of the file */
	size_t budget;		/* bytes this read may still take */
	const char *pos;	/* bytes read but not parsed yet: [pos, pos + avail) in buf */
	size_t avail;
	dev_t dev;		/* the file followed, to tell when another takes its name */
	ino_t ino;
	struct timespec mtime;	/* at the last read */
	uint64_t rewrites;	/* times it was found written anew, and read again */
	size_t tail_len;
	char tail[TAIL_MAX];	/* the bytes before off, as they were read */
	struct jt_perfmap_parser parser;
	char buf[JT_PERFMAP_CHUNK];
};

_Static_assert(sizeof(struct jt_perfmap_file) <= JT_PERFMAP_FILE_BYTES,
	       "JT_PERFMAP_FILE_BYTES says less than a followed map holds");

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

/* Whether a field at s is HotSpot's: "0x" and 16 hex digits, as its perf map writes both. */
static bool hotspot_field(const char *s, const char *end)
{
	int i;

	if (end - s < 19 || s[0] != '0' || s[1] != 'x' || !is_blank(s[18]))
		return false;
	for (i = 2; i < 18; i++)
		if (hex_value(s[i]) < 0)
			return false;
	return true;
}

/*
 * HotSpot's map (Compiler.perfmap, -XX:+DumpPerfMapAtExit) names a method with its return
 * type first, "long Hot.a(long)"; its probes and the JVMTI agent name the same method
 * "Hot.a(long)": the type goes, so that code compiled before and after recording began is
 * one method. Its stubs ("I2C/C2I adapters", "throw_div0_exception Runtime1 stub") have no
 * qualified name and parentheses after one word and stay as they are.
 */
static void hotspot_name(struct jt_perfmap_entry *e)
{
	const char *end = e->name + e->name_len, *sp = memchr(e->name, ' ', e->name_len), *q;

	if (!sp || sp == e->name || memchr(e->name, '(', (size_t)(sp - e->name)) ||
	    memchr(e->name, '/', (size_t)(sp - e->name)) || end[-1] != ')')
		return;
	for (q = sp + 1; q < end && *q != '(' && *q != ' '; q++)
		;
	if (q == end || *q != '(' || q == sp + 1 || !memchr(sp + 1, '.', (size_t)(q - sp - 1)))
		return;
	e->name_len -= (size_t)(sp + 1 - e->name);
	e->name = sp + 1;
}

/* Parse one line without its newline. Returns 1 if it gave an entry in *e. */
static int parse_line(struct jt_perfmap_parser *p, const char *s, size_t len,
		      struct jt_perfmap_entry *e)
{
	const char *end = s + len;
	bool hotspot;

	while (end > s && (is_blank(end[-1]) || end[-1] == '\r'))
		end--;
	if (end == s)
		return 0;	/* blank lines are allowed and mean nothing */

	hotspot = hotspot_field(s, end) && hotspot_field(skip_blanks(s + 18, end), end);
	s = parse_hex(s, end, &e->start);
	if (!s || s == end)
		goto bad;
	s = parse_hex(skip_blanks(s, end), end, &e->size);
	if (!s || s == end)
		goto bad;
	s = skip_blanks(s, end);
	/* end[-1] is not blank, so the name is non-empty */
	if (!e->size || e->size > UINT64_MAX - e->start)
		goto bad;
	e->name = s;
	e->name_len = (size_t)(end - s);
	if (hotspot)
		hotspot_name(e);
	return 1;
bad:
	p->bad++;
	return 0;
}

int jt_perfmap_parser__next(struct jt_perfmap_parser *p, const char **bufp, size_t *lenp,
			    struct jt_perfmap_entry *e)
{
	const char *buf = *bufp, *end = buf + *lenp;
	int got = 0;

	while (buf < end && !got) {
		const char *nl = memchr(buf, '\n', (size_t)(end - buf));
		size_t line_len;

		if (p->skipping) {
			if (!nl) {
				buf = end;
				break;
			}
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
			buf = end;
			break;
		}
		line_len = (size_t)(nl - buf);
		if (p->part_len) {
			size_t part_len = p->part_len;

			p->part_len = 0;
			if (line_len > JT_PERFMAP_LINE_MAX - part_len) {
				p->bad++;
			} else {
				memcpy(p->part + part_len, buf, line_len);
				got = parse_line(p, p->part, part_len + line_len, e);
			}
		} else if (line_len > JT_PERFMAP_LINE_MAX) {
			p->bad++;
		} else {
			got = parse_line(p, buf, line_len, e);
		}
		buf = nl + 1;
	}
	*lenp -= (size_t)(buf - *bufp);
	*bufp = buf;
	return got;
}

size_t jt_perfmap_parser__feed(struct jt_perfmap_parser *p, const char *buf, size_t len,
			       jt_perfmap_cb cb, void *ctx)
{
	struct jt_perfmap_entry e;
	size_t n = 0;

	while (jt_perfmap_parser__next(p, &buf, &len, &e)) {
		cb(ctx, &e);
		n++;
	}
	return n;
}

/* Read fd from its start: a new file, or the same one written anew. */
static void restart(struct jt_perfmap_file *f, int fd)
{
	struct stat st;

	f->fd = fd;
	f->off = 0;
	f->at_end = false;
	f->budget = 0;
	f->avail = 0;
	f->tail_len = 0;
	f->mtime = (struct timespec){ 0 };
	f->dev = f->ino = 0;
	if (!fstat(fd, &st)) {
		f->dev = st.st_dev;
		f->ino = st.st_ino;
	}
	/* a kept partial line belongs to the old contents */
	jt_perfmap_parser__reset(&f->parser);
}

/* Take ownership of fd (from jt_safeopen, already checked); NULL with errno set if fd < 0. */
static struct jt_perfmap_file *file_from_fd(int fd)
{
	struct jt_perfmap_file *f;

	if (fd < 0)
		return NULL;
	f = malloc(sizeof(*f));
	if (!f) {
		close(fd);
		errno = ENOMEM;
		return NULL;
	}
	f->parser.bad = 0;
	f->rewrites = 0;
	restart(f, fd);
	return f;
}

int jt_perfmap_file__replace(struct jt_perfmap_file *f, int fd)
{
	struct stat st;

	if (fstat(fd, &st) || (st.st_dev == f->dev && st.st_ino == f->ino)) {
		close(fd);
		return 0;
	}
	close(f->fd);
	f->rewrites++;
	restart(f, fd);
	return 1;
}

/* Whether the bytes before off are still those read there: else the file was written anew. */
static bool same_so_far(struct jt_perfmap_file *f)
{
	char now[TAIL_MAX];

	if (!f->tail_len)
		return true;
	return pread(f->fd, now, f->tail_len, f->off - (off_t)f->tail_len) ==
		       (ssize_t)f->tail_len && !memcmp(now, f->tail, f->tail_len);
}

/* Keep the last bytes read, the r at buf having just been read up to f->off. */
static void keep_tail(struct jt_perfmap_file *f, const char *buf, size_t r)
{
	if (r >= TAIL_MAX) {
		memcpy(f->tail, buf + r - TAIL_MAX, TAIL_MAX);
		f->tail_len = TAIL_MAX;
		return;
	}
	if (f->tail_len + r > TAIL_MAX) {
		size_t drop = f->tail_len + r - TAIL_MAX;

		memmove(f->tail, f->tail + drop, f->tail_len - drop);
		f->tail_len -= drop;
	}
	memcpy(f->tail + f->tail_len, buf, r);
	f->tail_len += r;
}

int jt_perfmap__path(pid_t pid, char *buf, size_t len)
{
	return jt_safeopen__perfmap_path(pid, buf, len);
}

struct jt_perfmap_file *jt_perfmap_file__open(const char *path, uid_t uid)
{
	return file_from_fd(jt_safeopen__path(path, uid));
}

struct jt_perfmap_file *jt_perfmap_file__open_pid(pid_t pid, uid_t uid)
{
	return file_from_fd(jt_safeopen__perfmap(pid, uid));
}

struct jt_perfmap_file *jt_perfmap_file__open_gone(const struct jt_mapsite *site, uid_t uid)
{
	return file_from_fd(jt_safeopen__perfmap_gone(site, uid));
}

void jt_perfmap_file__free(struct jt_perfmap_file *f)
{
	if (!f)
		return;
	close(f->fd);
	free(f);
}

int jt_perfmap_file__begin(struct jt_perfmap_file *f)
{
	struct stat st;

	if (fstat(f->fd, &st))
		return -errno;
	/* truncated, or written anew in place (jcmd's Compiler.perfmap does; longer or not) */
	if (st.st_size < f->off ||
	    ((st.st_mtim.tv_sec != f->mtime.tv_sec || st.st_mtim.tv_nsec != f->mtime.tv_nsec) &&
	     !same_so_far(f))) {
		f->rewrites++;
		restart(f, f->fd);
	}
	f->mtime = st.st_mtim;
	f->at_end = false;
	f->budget = JT_PERFMAP_READ_MAX;
	/* bytes read and not parsed yet (a read stopped between two lines) are kept */
	return 0;
}

int jt_perfmap_file__next(struct jt_perfmap_file *f, struct jt_perfmap_entry *e)
{
	for (;;) {
		size_t want;
		ssize_t r;

		if (f->avail && jt_perfmap_parser__next(&f->parser, &f->pos, &f->avail, e))
			return 1;
		if (!f->budget || f->at_end)
			return 0;
		want = f->budget < sizeof(f->buf) ? f->budget : sizeof(f->buf);
		r = pread(f->fd, f->buf, want, f->off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0) {
			f->at_end = true;
			return 0;
		}
		f->off += r;
		f->budget -= (size_t)r;
		keep_tail(f, f->buf, (size_t)r);
		f->pos = f->buf;
		f->avail = (size_t)r;
	}
}

int jt_perfmap_file__poll(struct jt_perfmap_file *f, jt_perfmap_cb cb, void *ctx)
{
	struct jt_perfmap_entry e;
	int err = jt_perfmap_file__begin(f), n = 0;

	while (!err && (err = jt_perfmap_file__next(f, &e)) > 0) {
		cb(ctx, &e);
		n++;
		err = 0;
	}
	return err < 0 ? err : n;
}

bool jt_perfmap_file__at_end(const struct jt_perfmap_file *f)
{
	return f->at_end;
}

uint64_t jt_perfmap_file__rewrites(const struct jt_perfmap_file *f)
{
	return f->rewrites;
}

uint64_t jt_perfmap_file__bad_lines(const struct jt_perfmap_file *f)
{
	return f->parser.bad;
}
