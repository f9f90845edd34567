// SPDX-License-Identifier: GPL-2.0
/*
 * The .jtl reader: one block in memory at a time, every block and record checked first,
 * against itself and against the log's promises (blocks in sequence, records in time order,
 * every id defined once and before use); strict, or salvaging what is sound.
 */
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

#include "base/hash.h"
#include "log/log.h"
#include "log/format.h"
#include "base/util.h"

#define MEM_NAME "<memory>"	/* what messages call a log read from a buffer */
#define SAY_MAX 20		/* salvage: problems told one by one; the rest only counted */

struct jt_log_reader {
	char *path;			/* NULL over memory */
	int fd;				/* -1 over memory */
	const unsigned char *mem;
	size_t mem_len;
	unsigned int flags;		/* enum jt_logr_flags */
	uint64_t off;			/* file offset of the next unread byte */
	uint64_t block_off;		/* file offset of the block in raw */
	enum jt_logr_state state;
	bool zinit;
	struct jt_log_header hdr;
	size_t block_hdr_size;		/* by version: JT_LOG_BLOCK_V1_SIZE or the whole struct */
	struct jt_log_block block;	/* the header of the block in raw */
	uint64_t next_seq;		/* version 2: the number the next block should have */
	uint64_t nrec;			/* records of the log before the next one, in file order */
	uint64_t rec_idx;		/* the next record's index in its block */
	uint64_t last_ts;		/* of the last record handed out */
	bool lost_unknown;		/* salvage skipped bytes whose records it could not count */
	bool summed_up;			/* the salvage summary was said */
	unsigned int contradicted;	/* header fields records contradicted: bits of enum
					   header_claim, each said once */
	unsigned int said;		/* salvage: problems told on stderr */
	/* ids defined so far, by the frame kind that references them; the value is only a
	 * non-NULL mark (the reader itself) */
	struct jt_hash ids[JT_FRAME_SYMBOL + 1];
	struct jt_logr_stats st;
	unsigned char *zbuf;		/* compressed data read from the file */
	size_t zbuf_cap;
	unsigned char *raw;		/* the current block, inflated */
	size_t raw_cap;			/* grown to the largest block seen, up to the limit */
	size_t raw_len;
	size_t pos;			/* next record in raw */
	/* a JT_REC_CALLS being given call by call: its calls left, in raw, and the one given
	 * last (the next one's base), where it is in its block */
	const unsigned char *run, *run_end;
	uint32_t run_left;
	struct jt_rec_call run_call;
	size_t run_pos;
	uint64_t run_idx;
	z_stream zs;
	char why[256];
};

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
 * A broken promise, said where it was found (msg names the offset). Strict, the reader
 * stops (CORRUPT) and the caller reports why; salvaging, the first SAY_MAX are said on
 * stderr. Counted either way. Returns true if reading goes on past it.
 */
__attribute__((format(printf, 3, 4)))
static bool problem(struct jt_log_reader *r, enum jt_logr_problem p, const char *fmt, ...)
{
	char msg[224];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->st.problems[p]++;
	if (!(r->flags & JT_LOGR_SALVAGE)) {
		stop(r, JT_LOGR_CORRUPT, "%s (--salvage reads past it)", msg);
		return false;
	}
	if (r->said < SAY_MAX)
		jt_err("%s: salvage: %s", reader_name(r), msg);
	else if (r->said == SAY_MAX)
		jt_err("%s: salvage: more problems; only counted from here", reader_name(r));
	r->said++;
	return true;
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

/* Whole records at the start of a block's data: what skipping it passes over. */
static uint64_t count_records(const unsigned char *raw, size_t len)
{
	uint64_t n = 0;
	size_t pos = 0;

	while (pos < len && !jt_logfmt__invalid((const void *)(raw + pos), len - pos)) {
		pos += ((const struct jt_rec_hdr *)(raw + pos))->size;
		n++;
	}
	return n;
}

/*
 * A damaged block (its data fails to inflate or its crc32): stop, or salvaging, skip it.
 * Its records cannot be counted; a version 2 log's next block says how many there were.
 */
static bool damaged(struct jt_log_reader *r, const char *why)
{
	if (!problem(r, JT_LOGR_P_BLOCK, "block at offset %" PRIu64 ": %s", r->block_off, why))
		return false;
	r->st.blocks_skipped++;
	r->lost_unknown = true;
	if (r->hdr.version >= 2 && r->block.seq == r->next_seq)
		r->next_seq++;	/* its place was taken: the next block is not out of sequence */
	return true;
}

/*
 * Is the block in raw the next in the log (version 2)? Strict, anything else stops the
 * reader. Salvaging, a block already passed (repeated, or moved later) is skipped, and
 * one beyond a gap is read: the missing blocks' records are counted.
 */
static bool in_sequence(struct jt_log_reader *r, bool *skip)
{
	const struct jt_log_block *b = &r->block;

	*skip = false;
	if (r->hdr.version < 2)
		return true;	/* not numbered */
	if (b->seq == r->next_seq && b->first_rec == r->nrec)
		goto take;
	if (b->seq < r->next_seq) {
		if (!problem(r, JT_LOGR_P_SEQUENCE, "block at offset %" PRIu64 ": number %" PRIu64
			     " where %" PRIu64 " was due: a repeated or out-of-order block",
			     r->block_off, (uint64_t)b->seq, r->next_seq))
			return false;
		r->st.blocks_skipped++;
		r->st.records_skipped += count_records(r->raw, b->rawsize);
		*skip = true;
		return true;
	}
	if (b->seq > r->next_seq) {
		if (!problem(r, JT_LOGR_P_SEQUENCE, "block at offset %" PRIu64 ": number %" PRIu64
			     " where %" PRIu64 " was due: %" PRIu64 " block(s) missing before it "
			     "(dropped, or out of order)", r->block_off, (uint64_t)b->seq,
			     r->next_seq, (uint64_t)b->seq - r->next_seq))
			return false;
		r->st.blocks_missing += b->seq - r->next_seq;
	} else if (!r->lost_unknown && !problem(r, JT_LOGR_P_SEQUENCE, "block at offset %" PRIu64
			     ": %" PRIu64 " records before it by its count, %" PRIu64 " found",
			     r->block_off, (uint64_t)b->first_rec, r->nrec)) {
		return false;
	}
	/* salvaging: what the writer counted before this block is the count from here on */
	if (b->first_rec > r->nrec)
		r->st.records_missing += b->first_rec - r->nrec;
	r->nrec = b->first_rec;
take:
	r->next_seq = b->seq + 1;
	r->lost_unknown = false;
	return true;
}

/*
 * The block header is unusable, so no later block can be found: stop. Salvaging, what
 * came before stands, as in a file cut short here.
 */
static void lost_track(struct jt_log_reader *r, const char *what)
{
	r->st.problems[JT_LOGR_P_BLOCK]++;
	if (r->flags & JT_LOGR_SALVAGE)
		stop(r, JT_LOGR_TRUNCATED, "block at offset %" PRIu64 ": %s; nothing after it "
		     "can be read", r->block_off, what);
	else
		stop(r, JT_LOGR_CORRUPT, "block at offset %" PRIu64 ": %s", r->block_off, what);
}

/* Inflate and check the next block into raw; false (state set) when there is none. */
static bool next_block(struct jt_log_reader *r)
{
	const unsigned long zmax = compressBound(JT_LOG_BLOCK_MAX);
	struct jt_log_block b = { 0 };
	char what[96];
	const char *why;
	const void *p;
	size_t got;
	bool skip;
	int ret;

again:
	r->block_off = r->off;
	p = take(r, &b, r->block_hdr_size, &got);
	if (!p)
		return false;
	if (got == 0) {
		stop(r, JT_LOGR_TRUNCATED, "no end record: the file stops at offset %" PRIu64
		     ", after its last whole block", r->block_off);
		return false;
	}
	if (got < r->block_hdr_size) {
		stop(r, JT_LOGR_TRUNCATED, "partial block header at offset %" PRIu64
		     " (%zu of %zu bytes)", r->block_off, got, r->block_hdr_size);
		return false;
	}
	memcpy(&b, p, r->block_hdr_size);	/* over memory p may be unaligned */
	r->block = b;
	if (b.magic != JT_LOG_BLOCK_MAGIC) {
		snprintf(what, sizeof(what), "bad magic 0x%08x", b.magic);
		lost_track(r, what);
		return false;
	}
	if (b.rawsize > JT_LOG_BLOCK_MAX || b.zsize > zmax) {
		snprintf(what, sizeof(what), "sizes %u (raw), %u (compressed) above the limits "
			 "%u, %lu", b.rawsize, b.zsize, JT_LOG_BLOCK_MAX, zmax);
		lost_track(r, what);
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
		snprintf(what, sizeof(what), "does not inflate to its %u bytes: %s", b.rawsize,
			 why);
		if (!damaged(r, what))
			return false;
		goto again;
	}
	if (crc32(0, r->raw, b.rawsize) != b.crc32) {
		if (!damaged(r, "crc32 mismatch"))
			return false;
		goto again;
	}
	if (!in_sequence(r, &skip))
		return false;
	if (skip)
		goto again;
	r->raw_len = b.rawsize;
	r->pos = 0;
	r->rec_idx = 0;
	return true;
}

/*
 * A header field out of range: strict, reported and the log refused; salvaging, said,
 * counted and read on. Returns true to read on.
 */
__attribute__((format(printf, 3, 4)))
static bool bad_field(struct jt_log_reader *r, size_t off, const char *fmt, ...)
{
	char msg[160];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!(r->flags & JT_LOGR_SALVAGE)) {
		jt_err("%s: header, offset %zu: %s (--salvage reads past it)", reader_name(r),
		       off, msg);
		return false;
	}
	return problem(r, JT_LOGR_P_HEADER, "header, offset %zu: %s", off, msg);
}

/* What a file that is no jitrace log looks like, from its first got bytes (at least 4). */
static const char *what_file(const unsigned char *buf, size_t got)
{
	size_t i;

	if (got >= 8 && !memcmp(buf, "PERFILE2", 8))
		return "a perf.data file, not a jitrace log";
	if (buf[0] == 0x1f && buf[1] == 0x8b)
		return "a gzip file, not a jitrace log";
	for (i = 0; i < got && i < 256; i++)
		if (buf[i] > 0x7e ||
		    (buf[i] < 0x20 && buf[i] != '\t' && buf[i] != '\n' && buf[i] != '\r'))
			return "not a jitrace log";
	return "a text file, not a jitrace log";
}

/* The offset of the first byte of len at p that is not 0, or len if all are. */
static size_t first_set(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len && !p[i]; i++)
		;
	return i;
}

/*
 * What ranges cannot tell: reserved bytes not 0, and (version 3 on) a header changed since
 * it was written, as its crc32 says, whichever field it was. raw is the header as read, h
 * the copy being checked. Returns true to read on.
 */
static bool check_sealed(struct jt_log_reader *r, const void *raw)
{
	const size_t crc_at = offsetof(struct jt_log_header, hdr_crc32);
	const size_t res_at = offsetof(struct jt_log_header, reserved);
	struct jt_log_header *h = &r->hdr, as_read;
	size_t i = first_set(h->reserved, sizeof(h->reserved));
	uint32_t crc;

	if (i < sizeof(h->reserved) &&
	    !bad_field(r, res_at + i, "reserved byte 0x%02x, not 0", h->reserved[i]))
		return false;
	if (h->version < JT_LOG_VERSION_SEALED) {
		/* a sealed header under a damaged version number says so here too */
		return !h->hdr_crc32 ||
		       bad_field(r, crc_at, "reserved field 0x%08x, not 0 in a version %u log",
				 h->hdr_crc32, h->version);
	}
	/* the crc32 covers the bytes read, not the copy whose fields salvage corrected */
	memcpy(&as_read, raw, sizeof(as_read));
	crc = jt_logfmt__header_crc(&as_read);
	if (crc != h->hdr_crc32 &&
	    !bad_field(r, crc_at, "checksum 0x%08x, but the header sums to 0x%08x: changed since "
		       "it was written (damaged, or edited)", h->hdr_crc32, crc))
		return false;
	return true;
}

/* Check the header in buf (got bytes of it); reports and returns false if unusable. */
static bool check_header(struct jt_log_reader *r, const void *buf, size_t got)
{
	const char *name = reader_name(r);
	struct jt_log_header *h = &r->hdr;
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
		jt_err("%s is %s", name, what_file(buf, got));
		return false;
	}
	if (got < sizeof(*h)) {
		jt_err("%s: header cut short: %zu of %zu bytes", name, got, sizeof(*h));
		return false;
	}
	memcpy(h, buf, sizeof(*h));
	/* another version's blocks and records cannot be told apart: not even salvaged */
	if (h->version < JT_LOG_VERSION_MIN || h->version > JT_LOG_VERSION) {
		jt_err("%s: header, offset %zu: log version %u; this jitrace reads versions %u "
		       "to %u", name, offsetof(struct jt_log_header, version), h->version,
		       JT_LOG_VERSION_MIN, JT_LOG_VERSION);
		return false;
	}
	r->block_hdr_size = h->version < 2 ? JT_LOG_BLOCK_V1_SIZE : sizeof(struct jt_log_block);
	/* every version so far has this size: the blocks start after it whatever it says */
	if (h->header_size != JT_LOG_HEADER_SIZE &&
	    !bad_field(r, offsetof(struct jt_log_header, header_size),
		       "header size %u, expected %u for version %u", h->header_size,
		       JT_LOG_HEADER_SIZE, h->version))
		return false;
	if (h->flags & ~(__u32)JT_LOG_F_ALL) {
		if (!bad_field(r, offsetof(struct jt_log_header, flags),
			       "flags 0x%x, unknown bits 0x%x", h->flags,
			       h->flags & ~(__u32)JT_LOG_F_ALL))
			return false;
		h->flags &= JT_LOG_F_ALL;
	}
	if (h->ncpus > JT_LOG_CPUS_MAX) {
		if (!bad_field(r, offsetof(struct jt_log_header, ncpus),
			       "%u CPUs, above %u", h->ncpus, JT_LOG_CPUS_MAX))
			return false;
		h->ncpus = 0;	/* not known */
	}
	if (h->sample_hz > JT_LOG_HZ_MAX) {
		if (!bad_field(r, offsetof(struct jt_log_header, sample_hz),
			       "sampling at %u Hz, above %u", h->sample_hz, JT_LOG_HZ_MAX))
			return false;
		h->sample_hz = 0;
	}
	if (!check_sealed(r, buf))
		return false;
	/* so that callers may print them as strings whatever the file holds */
	h->hostname[sizeof(h->hostname) - 1] = '\0';
	h->kernel[sizeof(h->kernel) - 1] = '\0';
	return true;
}

void jt_logr__close(struct jt_log_reader *r)
{
	size_t i;

	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	if (r->zinit)
		inflateEnd(&r->zs);
	for (i = 0; i < JT_ARRAY_SIZE(r->ids); i++)
		jt_hash__fini(&r->ids[i]);
	free(r->raw);
	free(r->zbuf);
	free(r->path);
	free(r);
}

/* The parts shared by both sources; path NULL for memory. */
static struct jt_log_reader *reader_new(const char *path, unsigned int flags)
{
	struct jt_log_reader *r;

	r = calloc(1, sizeof(*r));
	if (!r)
		goto nomem;
	r->fd = -1;
	r->flags = flags;
	if (path) {
		r->path = strdup(path);
		if (!r->path)
			goto nomem;
	}
	if (inflateInit2(&r->zs, -15) != Z_OK)	/* raw deflate, see log/write.c */
		goto nomem;
	r->zinit = true;
	return r;

nomem:
	jt_err("%s: out of memory", path ? path : MEM_NAME);
	jt_logr__close(r);
	return NULL;
}

struct jt_log_reader *jt_logr__open_flags(const char *path, unsigned int flags)
{
	struct jt_log_header hdr;
	struct jt_log_reader *r;
	const void *p;
	size_t got;

	r = reader_new(path, flags);
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

struct jt_log_reader *jt_logr__open(const char *path)
{
	return jt_logr__open_flags(path, 0);
}

struct jt_log_reader *jt_logr__open_mem_flags(const void *buf, size_t len, unsigned int flags)
{
	static const unsigned char none[1];
	struct jt_log_reader *r;
	const void *p;
	size_t got;

	r = reader_new(NULL, flags);
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

struct jt_log_reader *jt_logr__open_mem(const void *buf, size_t len)
{
	return jt_logr__open_mem_flags(buf, len, 0);
}

const struct jt_log_header *jt_logr__header(const struct jt_log_reader *r)
{
	return &r->hdr;
}

/* Is id, referenced by a frame of that kind, defined (an id of 0 never is)? */
static bool defined(const struct jt_log_reader *r, unsigned int kind, uint64_t id)
{
	return id && jt_hash__get(&r->ids[kind], id);
}

/* A sample's frames: each of a known kind, and what it names defined. */
static const char *unsound_frames(const struct jt_log_reader *r, const struct jt_rec_sample *s,
				  enum jt_logr_problem *p, char *buf, size_t cap)
{
	const char *what;
	unsigned int i, kind;
	uint64_t id;

	for (i = 0; i < s->nr_frames; i++) {
		kind = JT_FRAME_KIND(s->frames[i].ref);
		id = JT_FRAME_ID(s->frames[i].ref);
		/* only kinds that reference something are ever defined; a user address may
		 * name the anonymous memory (a module) it lies in */
		if ((kind == JT_FRAME_USER && (!id || defined(r, JT_FRAME_MODULE, id))) ||
		    kind == JT_FRAME_KERNEL || kind == JT_FRAME_TRUNCATED ||
		    (kind < JT_ARRAY_SIZE(r->ids) && defined(r, kind, id)))
			continue;
		if (kind == JT_FRAME_USER)
			kind = JT_FRAME_MODULE;	/* what it names is a module */
		what = jt_logfmt__referenced(kind);
		if (!what) {
			*p = JT_LOGR_P_RECORD;
			snprintf(buf, cap, "frame %u is of no known kind (%u)", i, kind);
			return buf;
		}
		*p = JT_LOGR_P_UNDEFINED;
		snprintf(buf, cap, "frame %u names %s %" PRIu64 ", not defined before it", i,
			 what, id);
		return buf;
	}
	return NULL;
}

/*
 * Does rec keep the promises, given what came before it? NULL if it does; else why not,
 * formatted into buf, with *p the kind of problem. Definitions are not taken in here.
 */
static const char *unsound(const struct jt_log_reader *r, const struct jt_rec_hdr *rec,
			   enum jt_logr_problem *p, char *buf, size_t cap)
{
	unsigned int kind;
	uint64_t id;

	if (r->st.records && rec->ts < r->last_ts) {
		*p = JT_LOGR_P_TIME;
		snprintf(buf, cap, "ts %" PRIu64 " goes back %" PRIu64 " ns before the record "
			 "before it", (uint64_t)rec->ts, (uint64_t)(r->last_ts - rec->ts));
		return buf;
	}
	switch (rec->type) {
	case JT_REC_ENTER:
	case JT_REC_LEAVE:
	case JT_REC_UNLOAD:
	case JT_REC_CALLSUM:	/* the same head: id, pid, tid */
	case JT_REC_SPAN:
		if (rec->type == JT_REC_SPAN &&
		    (((const struct jt_rec_span *)rec)->enter_ts > rec->ts ||
		     ((const struct jt_rec_span *)rec)->self_ns >
		     rec->ts - ((const struct jt_rec_span *)rec)->enter_ts)) {
			*p = JT_LOGR_P_RECORD;
			snprintf(buf, cap, "a span that enters after it leaves, or is its own for "
				 "longer than it lasts");
			return buf;
		}
		id = ((const struct jt_rec_call *)rec)->id;
		if (defined(r, JT_FRAME_METHOD, id))
			return NULL;
		*p = JT_LOGR_P_UNDEFINED;
		snprintf(buf, cap, "method %" PRIu64 " is not defined before it", id);
		return buf;
	case JT_REC_SAMPLE:
		return unsound_frames(r, (const void *)rec, p, buf, cap);
	case JT_REC_OFFCPU:
		return unsound_frames(r, &((const struct jt_rec_offcpu *)rec)->smp, p, buf, cap);
	case JT_REC_LATE:
		id = ((const struct jt_rec_late *)rec)->method;
		if (defined(r, JT_FRAME_METHOD, id))
			return NULL;
		*p = JT_LOGR_P_UNDEFINED;
		snprintf(buf, cap, "late name: method %" PRIu64 " is not defined before it", id);
		return buf;
	case JT_REC_SYMBOL: {
		const struct jt_rec_symbol *y = (const void *)rec;

		if (y->module && !defined(r, JT_FRAME_MODULE, y->module)) {
			*p = JT_LOGR_P_UNDEFINED;
			snprintf(buf, cap, "symbol %" PRIu64 " lies in module %" PRIu64 ", not "
				 "defined before it", (uint64_t)y->id, (uint64_t)y->module);
			return buf;
		}
		break;
	}
	default:
		break;
	}
	/* a definition: of a new id, from 1 */
	id = jt_logfmt__defines(rec, &kind);
	if (!kind)
		return NULL;
	if (!id) {
		*p = JT_LOGR_P_RECORD;
		snprintf(buf, cap, "%s id 0 (ids start at 1)", jt_logfmt__referenced(kind));
		return buf;
	}
	if (defined(r, kind, id)) {
		*p = JT_LOGR_P_REDEFINED;
		snprintf(buf, cap, "%s %" PRIu64 " defined again", jt_logfmt__referenced(kind), id);
		return buf;
	}
	return NULL;
}

/* What the header says that records can contradict. */
enum header_claim {
	CLAIM_CALLS = 1 << 0,	/* no JT_LOG_F_CALLS: no enter or leave */
	CLAIM_OFFCPU = 1 << 1,	/* no JT_LOG_F_OFFCPU: no off-CPU record */
	CLAIM_NCPUS = 1 << 2,	/* every sample's cpu below ncpus */
	CLAIM_ALL = (1 << 3) - 1,
};

/*
 * Does the sound record rec contradict the header? Its claim, with why formatted into buf
 * (naming the header's field); 0 if not. The CPU count is checked from version 3 on, whose
 * writer counts CPUs configured, not online (ids of online CPUs can pass the online count).
 */
static enum header_claim contradicts(const struct jt_log_reader *r, const struct jt_rec_hdr *rec,
				     char *buf, size_t cap)
{
	const struct jt_log_header *h = &r->hdr;
	const struct jt_rec_sample *s = NULL;

	switch (rec->type) {
	case JT_REC_ENTER:
	case JT_REC_LEAVE:
	case JT_REC_CALLSUM:
	case JT_REC_SPAN:
		if (h->flags & JT_LOG_F_CALLS)
			return 0;
		snprintf(buf, cap, "header, offset %zu: flags 0x%x say calls were not recorded, "
			 "yet it holds %s records", offsetof(struct jt_log_header, flags),
			 h->flags, jt_rec__name(rec->type));
		return CLAIM_CALLS;
	case JT_REC_OFFCPU:
		if (!(h->flags & JT_LOG_F_OFFCPU)) {
			snprintf(buf, cap, "header, offset %zu: flags 0x%x say off-CPU time was not "
				 "recorded, yet it holds offcpu records",
				 offsetof(struct jt_log_header, flags), h->flags);
			return CLAIM_OFFCPU;
		}
		s = &((const struct jt_rec_offcpu *)rec)->smp;
		break;
	case JT_REC_SAMPLE:
		s = (const void *)rec;
		break;
	default:
		return 0;
	}
	if (h->version < JT_LOG_VERSION_SEALED || !h->ncpus || s->cpu < h->ncpus)
		return 0;
	snprintf(buf, cap, "header, offset %zu: ncpus %u, yet a sample ran on cpu %u",
		 offsetof(struct jt_log_header, ncpus), h->ncpus, s->cpu);
	return CLAIM_NCPUS;
}

/* Keep the id rec defines, if it defines one; false if there is no memory. */
static bool take_in(struct jt_log_reader *r, const struct jt_rec_hdr *rec)
{
	unsigned int kind;
	uint64_t id = jt_logfmt__defines(rec, &kind);

	return !kind || !jt_hash__put(&r->ids[kind], id, r);
}

/* Salvaging, at the end: everything skipped and missing, in one line. */
static void sum_up(struct jt_log_reader *r)
{
	const struct jt_logr_stats *st = &r->st;
	char line[512];
	size_t n = 0;
	int p;
	bool first = true;

	if (!(r->flags & JT_LOGR_SALVAGE) || r->summed_up)
		return;
	r->summed_up = true;
	if (!r->said && !st->records_missing)
		return;
/* the line is long enough for every kind at once; a longer one would be cut, not overrun */
#define ADD(...) (n += snprintf(n < sizeof(line) ? line + n : NULL,		\
				n < sizeof(line) ? sizeof(line) - n : 0, __VA_ARGS__))
	ADD("read %" PRIu64 " records; skipped %" PRIu64 " records and %" PRIu64 " blocks; "
	    "missing %" PRIu64 " records and %" PRIu64 " blocks; found", st->records,
	    st->records_skipped, st->blocks_skipped, st->records_missing, st->blocks_missing);
	for (p = 0; p < JT_LOGR_P_MAX; p++) {
		if (!st->problems[p])
			continue;
		ADD("%s %" PRIu64 " %s", first ? "" : ",", st->problems[p],
		    jt_logr__problem_name(p));
		first = false;
	}
	if (first)
		ADD(" no problem but the records missing");
#undef ADD
	jt_err("%s: salvage: %s", reader_name(r), line);
}

const struct jt_rec_hdr *jt_logr__next(struct jt_log_reader *r)
{
	const struct jt_rec_hdr *rec;
	enum jt_logr_problem p;
	enum header_claim claim;
	char buf[160];
	const char *why;
	uint64_t idx;
	size_t at;

	while (r->state == JT_LOGR_OK) {
		if (r->run_left) {
			/* checked whole by jt_logfmt__invalid: every call reads */
			jt_logfmt__call_get(&r->run, r->run_end, &r->run_call);
			r->run_left--;
			rec = &r->run_call.h;
			at = r->run_pos;
			idx = r->run_idx;
			goto given;
		}
		if (r->pos == r->raw_len) {
			if (!next_block(r))
				break;
			continue;
		}
		rec = (const struct jt_rec_hdr *)(r->raw + r->pos);
		at = r->pos;
		idx = r->rec_idx;
		why = jt_logfmt__invalid(rec, r->raw_len - r->pos);
		if (why) {
			bool on;

			if (r->raw_len - r->pos >= sizeof(*rec))
				on = problem(r, JT_LOGR_P_RECORD, "block at offset %" PRIu64
					     ", record %" PRIu64 " at byte %zu of its data: %s "
					     "record (type %u) of %u bytes: %s", r->block_off, idx,
					     at, jt_rec__name(rec->type), rec->type, rec->size, why);
			else
				on = problem(r, JT_LOGR_P_RECORD, "block at offset %" PRIu64
					     ", byte %zu of its data: %s", r->block_off, at, why);
			if (!on)
				break;
			/* the records after it cannot be found: the rest of the block goes */
			r->pos = r->raw_len;
			r->lost_unknown = true;
			continue;
		}
		r->pos += rec->size;
		r->rec_idx++;
		if (rec->type == JT_REC_CALLS) {
			const struct jt_rec_calls *run = (const void *)rec;

			/* one record of the file, given as the calls it holds */
			r->nrec++;
			r->run = (const unsigned char *)(run + 1);
			r->run_end = r->run + run->len;
			r->run_left = run->count;
			r->run_pos = at;
			r->run_idx = idx;
			jt_logfmt__calls_first(run, &r->run_call);
			continue;
		}
given:
		why = unsound(r, rec, &p, buf, sizeof(buf));
		if (!why && rec->type == JT_REC_END &&
		    ((const struct jt_rec_end *)rec)->records != r->nrec) {
			uint64_t said = ((const struct jt_rec_end *)rec)->records;

			if (r->lost_unknown && said > r->nrec) {
				/* salvaged past records it could not count: now it can */
				r->st.records_missing += said - r->nrec;
			} else {
				p = JT_LOGR_P_END;
				snprintf(buf, sizeof(buf), "the end record counts %" PRIu64
					 " records before it, %" PRIu64 " found", said, r->nrec);
				why = buf;
			}
		}
		if (rec != &r->run_call.h)
			r->nrec++;
		if (why) {
			if (!problem(r, p, "block at offset %" PRIu64 ", record %" PRIu64 " at "
				     "byte %zu of its data: %s record: %s", r->block_off, idx, at,
				     jt_rec__name(rec->type), why))
				break;
			if (p != JT_LOGR_P_END) {
				r->st.records_skipped++;
				continue;
			}
			/* salvaging: the end record still ends the log */
		}
		claim = r->contradicted == CLAIM_ALL ? 0 : contradicts(r, rec, buf, sizeof(buf));
		if (claim && !(r->contradicted & claim)) {
			/* the header or the records are wrong: said once for each field */
			r->contradicted |= claim;
			if (!problem(r, JT_LOGR_P_HEADER, "%s (block at offset %" PRIu64 ", record %"
				     PRIu64 " at byte %zu of its data)", buf, r->block_off, idx, at))
				break;
		}
		if (!take_in(r, rec)) {
			stop(r, JT_LOGR_CORRUPT, "block at offset %" PRIu64 ", record %" PRIu64
			     ": out of memory keeping its id", r->block_off, idx);
			break;
		}
		r->last_ts = rec->ts;
		r->st.records++;
		if (rec->type == JT_REC_END)
			r->state = JT_LOGR_END;	/* whatever follows a clean end is not read */
		return rec;
	}
	sum_up(r);
	return NULL;
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

const struct jt_logr_stats *jt_logr__stats(const struct jt_log_reader *r)
{
	return &r->st;
}

const char *jt_logr__problem_name(enum jt_logr_problem p)
{
	static const char *const names[] = {
		[JT_LOGR_P_HEADER] = "header fields out of range",
		[JT_LOGR_P_BLOCK] = "damaged blocks",
		[JT_LOGR_P_SEQUENCE] = "blocks out of sequence",
		[JT_LOGR_P_RECORD] = "malformed records",
		[JT_LOGR_P_TIME] = "records back in time",
		[JT_LOGR_P_UNDEFINED] = "undefined references",
		[JT_LOGR_P_REDEFINED] = "ids defined again",
		[JT_LOGR_P_END] = "end record counts",
	};

	return (unsigned int)p < JT_ARRAY_SIZE(names) ? names[p] : "problems";
}
