// SPDX-License-Identifier: GPL-2.0
/* The .jtl writer: records held in memory, written as independent zlib-compressed blocks. */
#define ZLIB_CONST
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "log/log.h"
#include "log/format.h"
#include "base/outfile.h"
#include "base/util.h"

/*
 * Level 1 keeps up with millions of records per second on one core; memLevel 9 (more hash
 * memory) is both faster and tighter than the default 8 on our repetitive records.
 */
#define JT_LOGW_ZLEVEL 1
#define JT_LOGW_MEMLEVEL 9
#define RUN_NONE SIZE_MAX

struct jt_log_writer {
	char *path;
	struct jt_outfile *of;	/* the file at path, until placed (NULL: created in a dirfd) */
	int fd;
	int err;		/* first write error, -errno: every later call returns it */
	bool zinit;
	uint64_t records;	/* in the file: a run of calls is one */
	uint64_t given;		/* as readers give them: a run's calls one by one */
	uint64_t bytes;		/* written to the file: header, block headers, zlib data */
	uint64_t last_ts;	/* the end record's time */
	struct jt_log_header hdr;	/* as written (sealed) */
	bool late;		/* a JT_REC_LATE was written: the header says so at the end */
	uint64_t blocks;	/* written: the next block's seq */
	uint64_t block_first;	/* records before the block being filled: its first_rec */
	size_t held;		/* bytes of whole records in raw, and of the open run's calls */
	size_t run_at;		/* offset in raw of the open JT_REC_CALLS; RUN_NONE: none */
	struct jt_rec_call run_first;	/* its first call: written alone if no other follows */
	struct jt_rec_call run_last;	/* its last call, the next one's base */
	uint32_t run_count;
	unsigned char *raw;	/* JT_LOG_BLOCK_MAX bytes: the block being filled */
	unsigned char *out;	/* struct jt_log_block then the compressed data: one write */
	size_t out_cap;
	jt_logw_room_fn room;	/* told of each block before it is written (NULL: none) */
	void *room_ctx;
	z_stream zs;		/* reset per block, so each block is a stream of its own */
};

static void writer_free(struct jt_log_writer *w)
{
	if (w->of)
		jt_outfile__close(w->of);	/* dropped if never placed */
	else if (w->fd >= 0)
		close(w->fd);
	if (w->zinit)
		deflateEnd(&w->zs);
	free(w->out);
	free(w->raw);
	free(w->path);
	free(w);
}

/* Write it all or fail once, sticky: a half-written block is never followed by another. */
static int write_all(struct jt_log_writer *w, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len) {
		n = write(w->fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			w->err = n < 0 ? -errno : -EIO;
			jt_err("%s: write: %s", w->path, strerror(-w->err));
			return w->err;
		}
		p += n;
		len -= n;
		w->bytes += n;
	}
	return 0;
}

/* A writer for path, nothing opened yet; NULL when out of memory (reported). */
static struct jt_log_writer *writer_new(const char *path, const struct jt_log_header *hdr)
{
	struct jt_log_writer *w = calloc(1, sizeof(*w));

	if (!w) {
		jt_err("%s: out of memory", path);
		return NULL;
	}
	w->fd = -1;
	w->run_at = RUN_NONE;
	w->last_ts = hdr->start_ns;
	w->hdr = *hdr;
	jt_logfmt__seal(&w->hdr);
	w->path = strdup(path);
	w->raw = malloc(JT_LOG_BLOCK_MAX);
	if (!w->path || !w->raw)
		goto nomem;
	/* raw deflate: the block header's crc32 already checks the data, adler32 would be twice */
	if (deflateInit2(&w->zs, JT_LOGW_ZLEVEL, Z_DEFLATED, -15, JT_LOGW_MEMLEVEL,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		goto nomem;
	w->zinit = true;
	w->out_cap = sizeof(struct jt_log_block) + deflateBound(&w->zs, JT_LOG_BLOCK_MAX);
	w->out = malloc(w->out_cap);
	if (!w->out)
		goto nomem;
	return w;
nomem:
	jt_err("%s: out of memory", path);
	writer_free(w);
	return NULL;
}

static int write_header(struct jt_log_writer *w)
{
	return write_all(w, &w->hdr, sizeof(w->hdr));
}

struct jt_log_writer *jt_logw__create_unplaced(const char *path,
					       const struct jt_log_header *hdr, bool force)
{
	struct jt_log_writer *w = writer_new(path, hdr);

	if (!w)
		return NULL;
	/* created like every other output: 0600, no symlink followed blindly, no device */
	w->of = jt_outfile__open(path, force);
	if (w->of)
		w->fd = jt_outfile__fd(w->of);
	if (!w->of || write_header(w)) {
		writer_free(w);
		return NULL;
	}
	return w;
}

int jt_logw__place(struct jt_log_writer *w)
{
	int err = w->err ? w->err : jt_outfile__place(w->of);	/* never a broken log */

	w->err = err;
	return err;
}

struct jt_log_writer *jt_logw__create(const char *path, const struct jt_log_header *hdr,
				      bool force)
{
	struct jt_log_writer *w = jt_logw__create_unplaced(path, hdr, force);

	if (w && jt_logw__place(w)) {
		writer_free(w);
		return NULL;
	}
	return w;
}

struct jt_log_writer *jt_logw__create_at(int dirfd, const char *name, const char *shown,
					 const struct jt_log_header *hdr)
{
	struct jt_log_writer *w = writer_new(shown, hdr);

	if (!w)
		return NULL;
	w->fd = jt_outfile__create_at(dirfd, name, shown);
	if (w->fd < 0)
		goto fail;
	if (write_header(w)) {
		unlinkat(dirfd, name, 0);
		goto fail;
	}
	return w;
fail:
	writer_free(w);
	return NULL;
}

/*
 * Close the open run of calls, if any: its length, count and padding set, or its one call
 * written as the plain record it is (a run of one would be larger).
 */
static void run_close(struct jt_log_writer *w)
{
	struct jt_rec_calls *run = (struct jt_rec_calls *)(w->raw + w->run_at);
	size_t len;

	if (w->run_at == RUN_NONE)
		return;
	if (w->run_count == 1) {
		memcpy(run, &w->run_first, sizeof(w->run_first));
		w->held = w->run_at + sizeof(w->run_first);
	} else {
		len = w->held - w->run_at - sizeof(*run);
		run->len = len;
		run->count = w->run_count;
		run->h.size = (sizeof(*run) + len + 7) & ~(size_t)7;
		memset(w->raw + w->held, 0, w->run_at + run->h.size - w->held);
		w->held = w->run_at + run->h.size;
	}
	w->run_at = RUN_NONE;
}

/* Whether the open run has room for one more call, padding included. */
static bool run_room(const struct jt_log_writer *w)
{
	return w->held + JT_CALLS_CALL_MAX + 7 <= JT_LOG_BLOCK_MAX;
}

/* Begin a run of calls at the end of raw with call c (there is room for it). */
static void run_open(struct jt_log_writer *w, const struct jt_rec_call *c)
{
	struct jt_rec_calls *run = (struct jt_rec_calls *)(w->raw + w->held);
	struct jt_rec_call base;

	*run = (struct jt_rec_calls){
		.h = { .type = JT_REC_CALLS, .ts = c->h.ts }, .pid = c->pid, .tid = c->tid,
	};
	jt_logfmt__calls_first(run, &base);
	w->run_at = w->held;
	w->held = (size_t)(jt_logfmt__call_put((unsigned char *)(run + 1), &base, c) - w->raw);
	w->run_first = *c;
	w->run_last = *c;
	w->run_count = 1;
	w->records++;
}

/* Add call c to the open run (of its thread, with room for it). */
static void run_add(struct jt_log_writer *w, const struct jt_rec_call *c)
{
	w->held = (size_t)(jt_logfmt__call_put(w->raw + w->held, &w->run_last, c) - w->raw);
	/*
	 * What the next call is coded against (its thread is the run's), read field by field:
	 * a wider read of fields just stored one by one stalls on them (a copy of the record
	 * took half of this function), and the compiler would merge two plain reads into one.
	 */
	w->run_last.h.ts = __atomic_load_n(&c->h.ts, __ATOMIC_RELAXED);
	w->run_last.id = __atomic_load_n(&c->id, __ATOMIC_RELAXED);
	w->run_count++;
}

/* Compress what is held into one block and write it. */
static int write_block(struct jt_log_writer *w)
{
	struct jt_log_block *b = (struct jt_log_block *)w->out;
	int ret;

	run_close(w);
	if (w->err || !w->held)
		return w->err;

	deflateReset(&w->zs);
	w->zs.next_in = w->raw;
	w->zs.avail_in = w->held;
	w->zs.next_out = w->out + sizeof(*b);
	w->zs.avail_out = w->out_cap - sizeof(*b);
	ret = deflate(&w->zs, Z_FINISH);
	if (ret != Z_STREAM_END || w->zs.total_out > compressBound(JT_LOG_BLOCK_MAX)) {
		w->err = -EIO;
		jt_err("%s: compressing a block failed (zlib %d)", w->path, ret);
		return w->err;
	}
	b->magic = JT_LOG_BLOCK_MAGIC;
	b->zsize = w->zs.total_out;
	b->rawsize = w->held;
	b->crc32 = crc32(0, w->raw, w->held);
	/* numbered, so that a reader finds a block dropped, repeated or moved */
	b->seq = w->blocks++;
	b->first_rec = w->block_first;
	w->block_first = w->records;	/* every appended record is in this block or before */
	w->held = 0;
	if (w->room && (ret = w->room(w->room_ctx, sizeof(*b) + b->zsize)))
		return w->err = ret;
	return write_all(w, w->out, sizeof(*b) + b->zsize);
}

/* An enter or leave of struct jt_rec_call's size (a larger one, from a newer writer, is
 * written whole): coded into its thread's run, in a few bytes. */
static bool runs_in(const struct jt_rec_hdr *rec)
{
	return (rec->type == JT_REC_ENTER || rec->type == JT_REC_LEAVE) &&
	       rec->size == sizeof(struct jt_rec_call);
}

/* Add call c to its thread's run: the open one if it is that thread's and has room. */
static int append_call(struct jt_log_writer *w, const struct jt_rec_call *c)
{
	int ret;

	if (w->run_at != RUN_NONE && (c->pid != w->run_last.pid || c->tid != w->run_last.tid ||
				      !run_room(w)))
		run_close(w);
	if (w->run_at != RUN_NONE) {
		run_add(w, c);
		return 0;
	}
	if (w->held + sizeof(struct jt_rec_calls) + JT_CALLS_CALL_MAX + 7 > JT_LOG_BLOCK_MAX &&
	    (ret = write_block(w)))
		return ret;
	run_open(w, c);
	return 0;
}

int jt_logw__append(struct jt_log_writer *w, const struct jt_rec_hdr *rec)
{
	bool call = runs_in(rec);
	const char *why = NULL;
	int ret;

	if (w->err)
		return w->err;
	/* the caller's buffer covers rec->size bytes: check the record against itself (a
	 * call that runs in is of a known type and its exact size: nothing more to check) */
	if (!call)
		why = jt_logfmt__invalid(rec, rec->size);
	if (!why && rec->size > JT_LOG_BLOCK_MAX)
		why = "larger than a block";
	if (why) {
		jt_err("%s: %s record (type %u) of %u bytes refused: %s", w->path,
		       jt_rec__name(rec->type), rec->type, rec->size, why);
		return -EINVAL;
	}
	if (call) {
		ret = append_call(w, (const struct jt_rec_call *)rec);
		if (ret)
			return ret;
	} else {
		run_close(w);
		if (w->held + rec->size > JT_LOG_BLOCK_MAX) {
			ret = write_block(w);
			if (ret)
				return ret;
		}
		memcpy(w->raw + w->held, rec, rec->size);
		w->held += rec->size;
		w->records++;
	}
	w->given++;
	w->late |= rec->type == JT_REC_LATE;
	w->last_ts = rec->ts;
	if (w->held >= JT_LOG_BLOCK_TARGET)
		return write_block(w);
	return 0;
}

int jt_logw__flush(struct jt_log_writer *w)
{
	return write_block(w);
}

/*
 * Tell readers, in the header, that the log names methods late: they then read it ahead
 * for those names. A log cut before this (a crash) reads without them. The header is
 * written again whole, sealed with its new crc32.
 */
static int mark_late(struct jt_log_writer *w)
{
	w->hdr.flags |= JT_LOG_F_LATE;
	jt_logfmt__seal(&w->hdr);
	if (pwrite(w->fd, &w->hdr, sizeof(w->hdr), 0) != sizeof(w->hdr)) {
		jt_err("%s: writing the header's flags: %s", w->path, strerror(errno));
		return -EIO;
	}
	return 0;
}

int jt_logw__close(struct jt_log_writer *w)
{
	struct jt_rec_end end = {
		.h = { .type = JT_REC_END, .size = sizeof(end), .ts = w->last_ts },
		.records = w->records,
	};
	int ret, err;

	ret = jt_logw__append(w, &end.h);
	if (!ret)
		ret = write_block(w);
	if (!ret && w->late)
		ret = mark_late(w);
	if (w->of) {
		/* fsync'ed and, if it was not yet, put in place whole; dropped on an error */
		if (!ret)
			ret = jt_outfile__place(w->of);
		err = jt_outfile__close(w->of);
		w->of = NULL;
		if (!ret)
			ret = err;
	} else {
		if (!ret && fsync(w->fd)) {
			ret = -errno;
			jt_err("%s: fsync: %s", w->path, strerror(errno));
		}
		if (close(w->fd) && !ret) {
			ret = -errno;
			jt_err("%s: close: %s", w->path, strerror(errno));
		}
	}
	w->fd = -1;
	writer_free(w);
	return ret;
}

/*
 * Held records are dropped: a placed log reads as TRUNCATED after its last written block;
 * one never placed is gone, its target as it was.
 */
void jt_logw__abort(struct jt_log_writer *w)
{
	if (w)
		writer_free(w);
}

uint64_t jt_logw__records(const struct jt_log_writer *w)
{
	return w->given;
}

uint64_t jt_logw__bytes(const struct jt_log_writer *w)
{
	return w->bytes;
}

void jt_logw__set_room(struct jt_log_writer *w, jt_logw_room_fn fn, void *ctx)
{
	w->room = fn;
	w->room_ctx = ctx;
}

static int sink_append(void *ctx, const struct jt_rec_hdr *rec)
{
	return jt_logw__append(ctx, rec);
}

struct jt_sink jt_logw__sink(struct jt_log_writer *w)
{
	return (struct jt_sink){ sink_append, w };
}
