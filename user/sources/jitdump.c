// SPDX-License-Identifier: GPL-2.0
/* perf's jitdump format: parsing the header and records of an untrusted file. */
#include <errno.h>
#include <string.h>

#include "sources/jitdump.h"

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

int jt_jitdump__header(const void *buf, size_t len, struct jt_jitdump_header *h)
{
	const unsigned char *p = buf;
	uint32_t magic;

	if (len < 4)
		return -EAGAIN;
	magic = get32(p);
	if (magic == JT_JITDUMP_MAGIC_SWAPPED)
		return -EPROTO;
	if (magic != JT_JITDUMP_MAGIC)
		return -EINVAL;
	if (len < JT_JITDUMP_HEADER_MIN)
		return -EAGAIN;
	h->version = get32(p + 4);
	h->size = get32(p + 8);
	h->elf_mach = get32(p + 12);
	h->pid = get32(p + 20);
	h->timestamp = get64(p + 24);
	h->flags = get64(p + 32);
	if (h->version != 1 || h->size < JT_JITDUMP_HEADER_MIN || h->size > 4096)
		return -EINVAL;
	return 0;
}

uint32_t jt_jitdump__rec_size(const void *buf, size_t len)
{
	uint32_t size;

	if (len < JT_JITDUMP_REC_HDR)
		return 0;
	size = get32((const unsigned char *)buf + 4);
	return size < JT_JITDUMP_REC_HDR || size > JT_JITDUMP_REC_MAX ? 0 : size;
}

/* A NUL-terminated string at p, within end: its length, or -1 without a NUL. */
static long str_at(const unsigned char *p, const unsigned char *end)
{
	const unsigned char *nul = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;

	return nul ? (long)(nul - p) : -1;
}

int jt_jitdump__rec(const void *buf, size_t len, struct jt_jitdump_rec *r)
{
	const unsigned char *p = buf, *end;
	long n;

	memset(r, 0, sizeof(*r));
	r->size = jt_jitdump__rec_size(buf, len);
	if (!r->size)
		return -EINVAL;
	if (len > r->size)
		len = r->size;
	end = p + len;
	r->type = get32(p);
	r->ts = get64(p + 8);
	p += JT_JITDUMP_REC_HDR;
	switch (r->type) {
	case JT_JITDUMP_CODE_LOAD:
		/* pid, tid, vma, code_addr, code_size, code_index, name, code */
		if (end - p < 40)
			return -EINVAL;
		r->pid = get32(p);
		r->tid = get32(p + 4);
		r->addr = get64(p + 16);
		r->code_size = get64(p + 24);
		r->index = get64(p + 32);
		n = str_at(p + 40, end);
		if (n < 0 || r->addr + r->code_size < r->addr)
			return -EINVAL;
		r->name = (const char *)p + 40;
		r->name_len = (size_t)n;
		return 0;
	case JT_JITDUMP_CODE_MOVE:
		/* pid, tid, vma, old_code_addr, new_code_addr, code_size, code_index */
		if (end - p < 48)
			return -EINVAL;
		r->pid = get32(p);
		r->tid = get32(p + 4);
		r->old_addr = get64(p + 16);
		r->addr = get64(p + 24);
		r->code_size = get64(p + 32);
		r->index = get64(p + 40);
		if (r->addr + r->code_size < r->addr)
			return -EINVAL;
		return 0;
	case JT_JITDUMP_CODE_DEBUG_INFO:
		/* code_addr, nr_entry, entries */
		if (end - p < 16 || len < r->size)
			return -EINVAL;
		r->addr = get64(p);
		r->nr_lines = get64(p + 8);
		r->lines = (const char *)p + 16;
		r->lines_len = (size_t)(end - p - 16);
		return 0;
	default:
		return 0;	/* close, unwinding info, and types to come: nothing to take */
	}
}

bool jt_jitdump__line(const struct jt_jitdump_rec *r, size_t *pos, struct jt_jitdump_line *l)
{
	const unsigned char *p, *end = (const unsigned char *)r->lines + r->lines_len;
	long n;

	if (*pos >= r->lines_len || r->lines_len - *pos < 17)
		return false;
	p = (const unsigned char *)r->lines + *pos;
	l->addr = get64(p);
	l->line = get32(p + 8);
	l->discrim = get32(p + 12);
	n = str_at(p + 16, end);
	if (n < 0)
		return false;
	l->file = (const char *)p + 16;
	l->file_len = (size_t)n;
	*pos += 16 + (size_t)n + 1;
	return true;
}
