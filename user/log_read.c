// SPDX-License-Identifier: GPL-2.0
/* The .jtl reader: one block in memory at a time, every block and record checked first. */
#define ZLIB_CONST
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "log.h"
#include "names.h"
#include "util.h"

#define MEM_NAME "<memory>"	/* what messages call a log read from a buffer */

struct jt_log_reader {
	char *path;			/* NULL over memory */
	int fd;				/* -1 over memory */
	const unsigned char *mem;
	size_t mem_len;
	uint64_t off;			/* file offset of the next unread byte */
	uint64_t block_off;		/* file offset of the block in raw */
	enum jt_logr_state state;
	bool zinit;
	struct jt_log_header hdr;
	unsigned char *zbuf;		/* compressed data read from the file */
	size_t zbuf_cap;
	unsigned char *raw;		/* the current block, inflated */
	size_t raw_cap;			/* grown to the largest block seen, up to the limit */
	size_t raw_len;
	size_t pos;			/* next record in raw */
	z_stream zs;
	char why[256];
};

/* Each known record type's fixed part; 0 for types this reader does not know. */
static const unsigned short rec_fixed[JT_REC_MAX] = {
	[JT_REC_METHOD] = sizeof(struct jt_rec_method),
	[JT_REC_UNLOAD] = sizeof(struct jt_rec_call),
	[JT_REC_ENTER] = sizeof(struct jt_rec_call),
	[JT_REC_LEAVE] = sizeof(struct jt_rec_call),
	[JT_REC_SAMPLE] = sizeof(struct jt_rec_sample),
	[JT_REC_EXEC] = sizeof(struct jt_rec_exec),
	[JT_REC_EXIT] = sizeof(struct jt_rec_exit),
	[JT_REC_DROP] = sizeof(struct jt_rec_drop),
	[JT_REC_PROC] = sizeof(struct jt_rec_proc),
	[JT_REC_MODULE] = sizeof(struct jt_rec_module),
	[JT_REC_END] = sizeof(struct jt_rec_end),
	[JT_REC_SYMBOL] = sizeof(struct jt_rec_symbol),
};

const char *jt_rec__invalid(const struct jt_rec_hdr *rec, size_t avail)
{
	size_t size, fixed, var;

	if (avail < sizeof(*rec))
		return "record header cut short";
	size = rec->size;
	if (size < sizeof(*rec))
		return "size below 16";
	if (size % 8)
		return "size not a multiple of 8";
	if (size > avail)
		return "size runs past the end of its block";
	if (rec->type >= JT_REC_MAX || !rec_fixed[rec->type])
		return NULL;	/* a newer writer's type: its size is all we can check */

	fixed = rec_fixed[rec->type];
	if (size < fixed)
		return "shorter than its type's fixed part";
	/* the fixed part is there: its length field can be read */
	switch (rec->type) {
	case JT_REC_METHOD:
		var = ((const struct jt_rec_method *)rec)->name_len;
		break;
	case JT_REC_SAMPLE:
		var = ((const struct jt_rec_sample *)rec)->nr_frames * sizeof(struct jt_frame);
		break;
	case JT_REC_EXEC:
		var = ((const struct jt_rec_exec *)rec)->path_len;
		break;
	case JT_REC_PROC:
		var = ((const struct jt_rec_proc *)rec)->cmdline_len;
		break;
	case JT_REC_MODULE:
		var = ((const struct jt_rec_module *)rec)->path_len;
		break;
	case JT_REC_SYMBOL:
		var = ((const struct jt_rec_symbol *)rec)->name_len;
		break;
	default:
		var = 0;
		break;
	}
	if (size - fixed < var)
		return "its length field runs past its size";
	return NULL;
}

static const char *reader_name(const struct jt_log_reader *r)
{
	return r->path ? r->path : MEM_NAME;
}

/* Stop reading for good; the reason is kept for jt_logr__why(). */
__attribute__((format(printf, 3, 4)))
static void stop(struct jt_log_reader *r, enum jt_logr_state state, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
	r->state = state;
}

/*
 * The next len bytes of the log: in place over memory, read into buf from a file. *got
 * says how many there were before the end; NULL after a read error (state set).
 */
static const void *take(struct jt_log_reader *r, void *buf, size_t len, size_t *got)
{
	unsigned char *p = buf;
	ssize_t n;

	*got = 0;
	if (!r->path) {
		size_t left = r->mem_len - r->off;

		*got = len < left ? len : left;
		r->off += *got;
		return r->mem + r->off - *got;
	}
	while (*got < len) {
		n = read(r->fd, p + *got, len - *got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			stop(r, JT_LOGR_CORRUPT, "read error at offset %" PRIu64 ": %s",
			     r->off + *got, strerror(errno));
			return NULL;
		}
		if (n == 0)
			break;
		*got += n;
	}
	r->off += *got;
	return buf;
}

/* Why inflating a block to exactly its rawsize, from exactly its zsize, failed; or NULL. */
static const char *inflate_problem(const z_stream *zs, int ret)
{
	if (zs->msg)
		return zs->msg;
	if (ret == Z_STREAM_END && zs->avail_out)
		return "it inflates to fewer";
	if (ret == Z_STREAM_END && zs->avail_in)
		return "bytes follow the end of its stream";
	if (ret == Z_STREAM_END)
		return NULL;
	if (ret == Z_BUF_ERROR && !zs->avail_out)
		return "it inflates to more";
	if (ret == Z_BUF_ERROR)
		return "its stream ends early";
	return zError(ret);
}

/* Make *buf hold at least need bytes; false if there is no memory. */
static bool grow(unsigned char **buf, size_t *cap, size_t need)
{
	size_t c = *cap ? *cap : 4096;
	unsigned char *p;

	if (need <= *cap)
		return true;
	while (c < need)
		c *= 2;
	p = realloc(*buf, c);
	if (!p)
		return false;
	*buf = p;
	*cap = c;
	return true;
}

/* Inflate and check the next block into raw; false (state set) when there is none. */
static bool next_block(struct jt_log_reader *r)
{
	const unsigned long zmax = compressBound(JT_LOG_BLOCK_MAX);
	struct jt_log_block b;
	const char *why;
	const void *p;
	size_t got;
	int ret;

	r->block_off = r->off;
	p = take(r, &b, sizeof(b), &got);
	if (!p)
		return false;
	if (got == 0) {
		stop(r, JT_LOGR_TRUNCATED, "no end record: the file stops at offset %" PRIu64
		     ", after its last whole block", r->block_off);
		return false;
	}
	if (got < sizeof(b)) {
		stop(r, JT_LOGR_TRUNCATED, "partial block header at offset %" PRIu64
		     " (%zu of %zu bytes)", r->block_off, got, sizeof(b));
		return false;
	}
	memcpy(&b, p, sizeof(b));	/* over memory p may be unaligned */
	if (b.magic != JT_LOG_BLOCK_MAGIC) {
		stop(r, JT_LOGR_CORRUPT, "block at offset %" PRIu64 ": bad magic 0x%08x",
		     r->block_off, b.magic);
		return false;
	}
	if (b.rawsize > JT_LOG_BLOCK_MAX || b.zsize > zmax) {
		stop(r, JT_LOGR_CORRUPT, "block at offset %" PRIu64 ": sizes %u (raw), %u "
		     "(compressed) above the limits %u, %lu", r->block_off, b.rawsize, b.zsize,
		     JT_LOG_BLOCK_MAX, zmax);
		return false;
	}
	/* buffers as large as the blocks: small logs (and fuzzing) stay cheap */
	if (!grow(&r->raw, &r->raw_cap, b.rawsize ? b.rawsize : 1) ||
	    (r->path && !grow(&r->zbuf, &r->zbuf_cap, b.zsize ? b.zsize : 1))) {
		stop(r, JT_LOGR_CORRUPT, "block at offset %" PRIu64 ": out of memory for its "
		     "%u bytes", r->block_off, b.rawsize);
		return false;
	}
	p = take(r, r->zbuf, b.zsize, &got);
	if (!p)
		return false;
	if (got < b.zsize) {
		stop(r, JT_LOGR_TRUNCATED, "partial block at offset %" PRIu64
		     " (%zu of %u bytes of data)", r->block_off, got, b.zsize);
		return false;
	}

	inflateReset(&r->zs);
	r->zs.next_in = p;
	r->zs.avail_in = b.zsize;
	r->zs.next_out = r->raw;
	r->zs.avail_out = b.rawsize;
	ret = inflate(&r->zs, Z_FINISH);
	why = inflate_problem(&r->zs, ret);
	if (why) {
		stop(r, JT_LOGR_CORRUPT, "block at offset %" PRIu64 ": does not inflate to "
		     "its %u bytes: %s", r->block_off, b.rawsize, why);
		return false;
	}
	if (crc32(0, r->raw, b.rawsize) != b.crc32) {
		stop(r, JT_LOGR_CORRUPT, "block at offset %" PRIu64 ": crc32 mismatch",
		     r->block_off);
		return false;
	}
	r->raw_len = b.rawsize;
	r->pos = 0;
	return true;
}

/* Check the header in buf (got bytes of it); reports and returns false if unusable. */
static bool check_header(struct jt_log_reader *r, const void *buf, size_t got)
{
	const char *name = reader_name(r);
	__u32 magic;

	if (got < sizeof(magic)) {
		jt_err("%s: not a jitrace log: only %zu bytes", name, got);
		return false;
	}
	memcpy(&magic, buf, sizeof(magic));
	if (magic == JT_LOG_MAGIC_SWAPPED) {
		jt_err("%s: written on a big-endian host; this jitrace reads little-endian logs",
		       name);
		return false;
	}
	if (magic != JT_LOG_MAGIC) {
		jt_err("%s: not a jitrace log (magic 0x%08x)", name, magic);
		return false;
	}
	if (got < sizeof(r->hdr)) {
		jt_err("%s: header cut short: %zu of %zu bytes", name, got, sizeof(r->hdr));
		return false;
	}
	memcpy(&r->hdr, buf, sizeof(r->hdr));
	if (r->hdr.version != JT_LOG_VERSION) {
		jt_err("%s: log version %u; this jitrace reads version %u", name,
		       r->hdr.version, JT_LOG_VERSION);
		return false;
	}
	if (r->hdr.header_size != JT_LOG_HEADER_SIZE) {
		jt_err("%s: header size %u, expected %u for version %u", name,
		       r->hdr.header_size, JT_LOG_HEADER_SIZE, JT_LOG_VERSION);
		return false;
	}
	/* so that callers may print them as strings whatever the file holds */
	r->hdr.hostname[sizeof(r->hdr.hostname) - 1] = '\0';
	r->hdr.kernel[sizeof(r->hdr.kernel) - 1] = '\0';
	return true;
}

void jt_logr__close(struct jt_log_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	if (r->zinit)
		inflateEnd(&r->zs);
	free(r->raw);
	free(r->zbuf);
	free(r->path);
	free(r);
}

/* The parts shared by both sources; path NULL for memory. */
static struct jt_log_reader *reader_new(const char *path)
{
	struct jt_log_reader *r;

	r = calloc(1, sizeof(*r));
	if (!r)
		goto nomem;
	r->fd = -1;
	if (path) {
		r->path = strdup(path);
		if (!r->path)
			goto nomem;
	}
	if (inflateInit2(&r->zs, -15) != Z_OK)	/* raw deflate, see log_write.c */
		goto nomem;
	r->zinit = true;
	return r;

nomem:
	jt_err("%s: out of memory", path ? path : MEM_NAME);
	jt_logr__close(r);
	return NULL;
}

struct jt_log_reader *jt_logr__open(const char *path)
{
	struct jt_log_header hdr;
	struct jt_log_reader *r;
	const void *p;
	size_t got;

	r = reader_new(path);
	if (!r)
		return NULL;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		jt_err("%s: %s", path, strerror(errno));
		goto fail;
	}
	p = take(r, &hdr, sizeof(hdr), &got);
	if (!p) {
		jt_err("%s: %s", path, r->why);
		goto fail;
	}
	if (!check_header(r, p, got))
		goto fail;
	return r;

fail:
	jt_logr__close(r);
	return NULL;
}

struct jt_log_reader *jt_logr__open_mem(const void *buf, size_t len)
{
	static const unsigned char none[1];
	struct jt_log_reader *r;
	const void *p;
	size_t got;

	r = reader_new(NULL);
	if (!r)
		return NULL;
	r->mem = buf ? buf : none;	/* never NULL: no arithmetic on a null pointer */
	r->mem_len = buf ? len : 0;
	p = take(r, NULL, sizeof(struct jt_log_header), &got);
	if (!check_header(r, p, got)) {
		jt_logr__close(r);
		return NULL;
	}
	return r;
}

const struct jt_log_header *jt_logr__header(const struct jt_log_reader *r)
{
	return &r->hdr;
}

const struct jt_rec_hdr *jt_logr__next(struct jt_log_reader *r)
{
	const struct jt_rec_hdr *rec;
	const char *why;

	if (r->state != JT_LOGR_OK)
		return NULL;
	while (r->pos == r->raw_len) {
		if (!next_block(r))
			return NULL;
	}
	rec = (const struct jt_rec_hdr *)(r->raw + r->pos);
	why = jt_rec__invalid(rec, r->raw_len - r->pos);
	if (why) {
		if (r->raw_len - r->pos >= sizeof(*rec))
			stop(r, JT_LOGR_CORRUPT, "block at offset %" PRIu64 ", byte %zu of its "
			     "data: %s record (type %u) of %u bytes: %s", r->block_off, r->pos,
			     jt_rec__name(rec->type), rec->type, rec->size, why);
		else
			stop(r, JT_LOGR_CORRUPT, "block at offset %" PRIu64 ", byte %zu of its "
			     "data: %s", r->block_off, r->pos, why);
		return NULL;
	}
	r->pos += rec->size;
	if (rec->type == JT_REC_END)
		r->state = JT_LOGR_END;	/* whatever follows a clean end is not read */
	return rec;
}

enum jt_logr_state jt_logr__state(const struct jt_log_reader *r)
{
	return r->state;
}

/* Empty unless the state is TRUNCATED or CORRUPT. */
const char *jt_logr__why(const struct jt_log_reader *r)
{
	return r->why;
}
