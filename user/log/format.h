/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The .jtl format's rules that its writer (log/write.c), its reader (log/read.c) and dump
 * share: when a record is well formed, which id a record defines and what names it, and
 * (through names.h) the format's enums by name: record types, drop reasons, method sources.
 */
#ifndef JT_LOGFMT_H
#define JT_LOGFMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jt_log_format.h"
#include "base/names.h"

/*
 * Why a record of avail bytes (its own size, or what is left of its block) is malformed:
 * size not a multiple of 8, below 16 or beyond avail, or too small for its type's fixed
 * part and length field. NULL if it is well formed; unknown types need only a valid size.
 * The writer refuses, and the reader stops at, what this rejects.
 */
const char *jt_logfmt__invalid(const struct jt_rec_hdr *rec, size_t avail);

/*
 * The id a well-formed record defines, with *kind the frame kind that references such ids
 * (JT_FRAME_METHOD, JT_FRAME_MODULE or JT_FRAME_SYMBOL). A record that defines none: 0,
 * *kind 0. The id itself may be 0, which the format does not allow.
 */
uint64_t jt_logfmt__defines(const struct jt_rec_hdr *rec, unsigned int *kind);

/*
 * The crc32 a version 3 header carries: of its JT_LOG_HEADER_SIZE bytes with hdr_crc32 0.
 */
uint32_t jt_logfmt__header_crc(const struct jt_log_header *h);

/*
 * Make h a header this jitrace writes: magic, version, size, hostname and kernel
 * NUL-terminated and zero-padded, reserved bytes 0, and its crc32 last (after any change).
 */
void jt_logfmt__seal(struct jt_log_header *h);

/*
 * What a frame of that kind (enum jt_frame_kind) references: "method", "module" or
 * "symbol", the name of the record type that defines it; NULL for a kind that references
 * nothing (USER, KERNEL) or is not known.
 */
const char *jt_logfmt__referenced(unsigned int kind);

/*
 * A JT_REC_CALLS's calls (include/jt_log_format.h). calls_first sets c to what the first
 * call is coded against; call_get reads the next call from [*p, end) into c, which holds
 * the call before it, and moves *p past it: false if it is cut short or does not fit 64
 * bits (jt_logfmt__invalid has said so for a record it passed: only a record it checked is
 * read). call_put writes c coded against prev at p (JT_CALLS_CALL_MAX bytes at most) and
 * returns the byte after it.
 */
void jt_logfmt__calls_first(const struct jt_rec_calls *run, struct jt_rec_call *c);
bool jt_logfmt__call_get(const unsigned char **p, const unsigned char *end,
			 struct jt_rec_call *c);
unsigned char *jt_logfmt__call_put(unsigned char *p, const struct jt_rec_call *prev,
				   const struct jt_rec_call *c);

#endif
