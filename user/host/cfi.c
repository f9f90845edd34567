// SPDX-License-Identifier: GPL-2.0
/*
 * DWARF call frame information (.eh_frame, and .debug_frame where .eh_frame has no row) of
 * one ELF file, turned at load into a compact table asked by file offset. Every FDE's
 * instructions are run once, their rows (the rule from each address on) deduplicated into a
 * small dictionary and kept as a sorted array of (address, rule number): 4 bytes a row, the
 * sections themselves freed. A lookup is a binary search. Every read of the sections is
 * bounds-checked and the work of a load is bounded: the file may be hostile.
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/cfi.h"
#include "base/util.h"

/* Pointer encodings (DW_EH_PE_*): a format in the low nibble, what it is relative to above. */
enum {
	PE_ABSPTR = 0x00,
	PE_ULEB128 = 0x01,
	PE_UDATA2 = 0x02,
	PE_UDATA4 = 0x03,
	PE_UDATA8 = 0x04,
	PE_SIGNED = 0x08,
	PE_SLEB128 = 0x09,
	PE_SDATA2 = 0x0a,
	PE_SDATA4 = 0x0b,
	PE_SDATA8 = 0x0c,
	PE_PCREL = 0x10,
	PE_FORMAT = 0x0f,
	PE_APPLY = 0x70,
	PE_INDIRECT = 0x80,
};

/* Call frame instructions (DW_CFA_*) */
enum {
	CFA_nop = 0x00,
	CFA_set_loc = 0x01,
	CFA_advance_loc1 = 0x02,
	CFA_advance_loc2 = 0x03,
	CFA_advance_loc4 = 0x04,
	CFA_offset_extended = 0x05,
	CFA_restore_extended = 0x06,
	CFA_undefined = 0x07,
	CFA_same_value = 0x08,
	CFA_register = 0x09,
	CFA_remember_state = 0x0a,
	CFA_restore_state = 0x0b,
	CFA_def_cfa = 0x0c,
	CFA_def_cfa_register = 0x0d,
	CFA_def_cfa_offset = 0x0e,
	CFA_def_cfa_expression = 0x0f,
	CFA_expression = 0x10,
	CFA_offset_extended_sf = 0x11,
	CFA_def_cfa_sf = 0x12,
	CFA_def_cfa_offset_sf = 0x13,
	CFA_val_offset = 0x14,
	CFA_val_offset_sf = 0x15,
	CFA_val_expression = 0x16,
	CFA_GNU_window_save = 0x2d,
	CFA_GNU_args_size = 0x2e,
	CFA_GNU_negative_offset_extended = 0x2f,
	CFA_advance_loc = 0x40,	/* the high two bits, with an operand in the low six */
	CFA_offset = 0x80,
	CFA_restore = 0xc0,
};

#define STATE_DEPTH 16	/* remember_state nesting followed (GCC emits 1 or 2) */
/*
 * Instructions one run (a CIE's, or an FDE's) may take: a compiler's FDE has tens, a
 * function with hundreds of exits a few thousand. Past this, the rest of the FDE is a rule
 * not followed.
 */
#define RUN_OPS_MAX 16384
/* The most of .eh_frame or .debug_frame read: Node's 90 MB binary has 2.7 MiB of .eh_frame */
#define SECTION_MAX (64u << 20)
/*
 * A file's budget: the instructions run at load, and the rows kept. HotSpot 17's libjvm.so
 * (23 MiB) runs 487,000 and keeps 191,000 rows (0.75 MiB); a crafted section of 64 MiB could
 * otherwise cost 64 million of each.
 */
#define LOAD_OPS_MAX (16u << 20)
#define ROWS_MAX (4u << 20)
#define RULES_MAX 65535	/* distinct rules, numbered in 16 bits */

struct seg {
	uint64_t vaddr, filesz, offset;
};

/*
 * One rule as a table keeps it: err 0 and the rule's fields, or the error every address of
 * its rows gives (-ENOENT: no FDE, -ENOTSUP, -EINVAL). No padding: rules compare as bytes.
 */
struct prule {
	int32_t cfa_off, bp_off, ra_off;
	int8_t err;
	uint8_t cfa_reg;
	uint8_t flags;	/* PR_* */
	uint8_t pad;
};

_Static_assert(sizeof(struct prule) == 16, "a rule is hashed as its two 64-bit words");

enum { PR_BP_SAVED = 1, PR_BP_LOST = 2, PR_OUTERMOST = 4 };

/* Rows while built: from address base + start[i] on, rule number rule[i]; 0 is "no FDE". */
struct rows {
	uint32_t *start;
	uint16_t *rule;
	size_t nr, cap;
};

/*
 * The table keeps a row in 4 bytes: the low 16 bits of its start and its rule number, and
 * where each 64 KiB of addresses begins in the rows (libc's 28,000 rows take 110 KiB, its
 * .eh_frame 150).
 */
struct jt_cfi {
	uint16_t *low;		/* row i starts at base + (its page << 16 | low[i]) */
	uint16_t *rule;
	size_t nr_rows;
	uint32_t *page;		/* page p's first row; nr_pages + 1 of them, the last nr_rows */
	size_t nr_pages;
	struct prule *rules;
	size_t nr_rules;
	uint64_t base;		/* the lowest loadable address: rows are 32-bit from it */
	uint64_t top;		/* past the highest address in the file: no row from there */
	struct seg *segs;
	size_t nr_segs;
};

/* A section read whole: .eh_frame, or .debug_frame (whose CIE ids and pointers differ). */
struct sect {
	uint8_t *buf;
	size_t len;
	uint64_t vaddr;
	bool debug;
};

/* A bounds-checked little-endian reader over [buf + pos, buf + end). */
struct rd {
	const uint8_t *buf;
	size_t pos, end;
	uint64_t vaddr;		/* the address of buf[0]: the base of pc-relative pointers */
	bool bad;		/* a read went past end, or met an encoding not followed */
};

static const uint8_t *take(struct rd *r, size_t n)
{
	const uint8_t *p;

	if (r->bad || n > r->end - r->pos) {
		r->bad = true;
		return NULL;
	}
	p = r->buf + r->pos;
	r->pos += n;
	return p;
}

static uint64_t rd_uint(struct rd *r, size_t n)
{
	const uint8_t *p = take(r, n);
	uint64_t v = 0;

	while (p && n--)
		v = v << 8 | p[n];
	return v;
}

/* A LEB128 number, sign-extended if sign; bits past the 64th are dropped: only a hostile
 * file has them. */
static uint64_t rd_leb(struct rd *r, bool sign)
{
	unsigned int shift = 0;
	uint64_t v = 0;
	const uint8_t *p;

	do {
		p = take(r, 1);
		if (!p)
			return 0;
		if (shift < 64)
			v |= (uint64_t)(*p & 0x7f) << shift;
		shift += 7;
	} while (*p & 0x80);
	if (sign && shift < 64 && (*p & 0x40))
		v |= ~(uint64_t)0 << shift;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	return rd_leb(r, false);
}

static int64_t rd_sleb(struct rd *r)
{
	return (int64_t)rd_leb(r, true);
}

static void rd_skip(struct rd *r, uint64_t n)
{
	if (n > r->end - r->pos)
		r->bad = true;
	else
		r->pos += n;
}

/* A pointer in encoding enc (an indirect one is not followed: nothing here needs its target). */
static uint64_t rd_ptr(struct rd *r, uint8_t enc)
{
	uint64_t at = r->vaddr + r->pos, v;

	switch (enc & PE_FORMAT) {
	case PE_ABSPTR:
	case PE_UDATA8:
	case PE_SIGNED:
	case PE_SDATA8:
		v = rd_uint(r, 8);
		break;
	case PE_ULEB128:
		v = rd_uleb(r);
		break;
	case PE_UDATA2:
		v = rd_uint(r, 2);
		break;
	case PE_UDATA4:
		v = rd_uint(r, 4);
		break;
	case PE_SLEB128:
		v = rd_sleb(r);
		break;
	case PE_SDATA2:
		v = (uint64_t)(int64_t)(int16_t)rd_uint(r, 2);
		break;
	case PE_SDATA4:
		v = (uint64_t)(int64_t)(int32_t)rd_uint(r, 4);
		break;
	default:
		r->bad = true;
		return 0;
	}
	switch (enc & PE_APPLY) {
	case 0:
		return v;
	case PE_PCREL:
		return v + at;
	default:	/* data-relative: only .eh_frame_hdr's, not read */
		r->bad = true;
		return 0;
	}
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;	/* the column that holds the return address */
	uint8_t fde_enc;	/* of an FDE's addresses */
	bool aug_data;		/* FDEs carry augmentation data ("z") */
	size_t insn, insn_end;	/* the initial instructions, in the section */
};

struct fde {
	uint64_t pc, range;
	size_t insn, insn_end;
	size_t cie_off;
	struct cie cie;
};

/* The entry at off: a reader over its body (from its id), and whether it is 64-bit DWARF. */
static int entry_at(const struct sect *s, size_t off, struct rd *r, bool *dw64)
{
	uint64_t len;

	*r = (struct rd){ .buf = s->buf, .pos = off, .end = s->len, .vaddr = s->vaddr };
	if (off > s->len)
		return -EINVAL;
	len = rd_uint(r, 4);
	*dw64 = len == 0xffffffff;
	if (*dw64)
		len = rd_uint(r, 8);
	if (r->bad || !len || len > r->end - r->pos)
		return -EINVAL;	/* cut short, or the terminator */
	r->end = r->pos + len;
	return 0;
}

/* Whether an entry's id says CIE: 0 in .eh_frame, all ones in .debug_frame. */
static bool is_cie_id(const struct sect *s, uint64_t id, bool dw64)
{
	if (!s->debug)
		return !id;
	return id == (dw64 ? UINT64_MAX : 0xffffffff);
}

/* The augmentation data of a "z" CIE, in r up to its end. */
static int read_augmentation(struct rd *r, const char *aug, struct cie *cie)
{
	uint64_t len = rd_uleb(r);
	struct rd a = *r;

	rd_skip(r, len);
	if (r->bad)
		return -EINVAL;
	a.end = r->pos;
	for (; *aug; aug++) {
		switch (*aug) {
		case 'R':
			cie->fde_enc = rd_uint(&a, 1);
			break;
		case 'P':
			rd_ptr(&a, rd_uint(&a, 1) & PE_FORMAT);	/* the personality: skipped */
			break;
		case 'L':
			rd_uint(&a, 1);	/* the encoding of an FDE's LSDA, skipped with its data */
			break;
		case 'S':
			break;	/* a signal frame: whose rules are expressions anyway */
		default:
			return -ENOTSUP;
		}
	}
	return a.bad ? -EINVAL : 0;
}

static int parse_cie(const struct sect *s, size_t off, struct cie *cie)
{
	const char *aug;
	const uint8_t *nul;
	unsigned int version;
	struct rd r;
	bool dw64;
	int err;

	if (entry_at(s, off, &r, &dw64) || !is_cie_id(s, rd_uint(&r, dw64 ? 8 : 4), dw64) ||
	    r.bad)
		return -EINVAL;
	version = rd_uint(&r, 1);
	if (version != 1 && version != 3 && version != 4)
		return r.bad ? -EINVAL : -ENOTSUP;
	aug = (const char *)r.buf + r.pos;
	nul = memchr(aug, '\0', r.end - r.pos);
	if (!nul)
		return -EINVAL;
	r.pos += nul - (const uint8_t *)aug + 1;
	if (version == 4 && (rd_uint(&r, 1) != 8 || rd_uint(&r, 1) != 0))
		return r.bad ? -EINVAL : -ENOTSUP;	/* address size 8, no segment selector */
	*cie = (struct cie){ .fde_enc = PE_ABSPTR };
	cie->code_align = rd_uleb(&r);
	cie->data_align = rd_sleb(&r);
	cie->ra_reg = version == 1 ? rd_uint(&r, 1) : rd_uleb(&r);
	if (aug[0] == 'z') {
		cie->aug_data = true;
		err = read_augmentation(&r, aug + 1, cie);
		if (err)
			return err;
	} else if (aug[0]) {
		return -ENOTSUP;	/* "eh" and other pre-"z" augmentations */
	}
	cie->insn = r.pos;
	cie->insn_end = r.end;
	return r.bad ? -EINVAL : 0;
}

/* The FDE at off; -EAGAIN if the entry is a CIE. */
static int parse_fde(const struct sect *s, size_t off, struct fde *f)
{
	uint64_t id;
	size_t at;
	struct rd r;
	bool dw64;
	int err;

	if (entry_at(s, off, &r, &dw64))
		return -EINVAL;
	at = r.pos;
	id = rd_uint(&r, dw64 ? 8 : 4);
	if (r.bad)
		return -EINVAL;
	if (is_cie_id(s, id, dw64))
		return -EAGAIN;
	if (s->debug) {		/* the CIE's offset in the section */
		if (id >= s->len || id == off)
			return -EINVAL;
		f->cie_off = id;
	} else {		/* the distance back to its CIE */
		if (id > at)
			return -EINVAL;
		f->cie_off = at - id;
	}
	err = parse_cie(s, f->cie_off, &f->cie);
	if (err)
		return err;
	f->pc = rd_ptr(&r, f->cie.fde_enc);
	f->range = rd_ptr(&r, f->cie.fde_enc & PE_FORMAT);
	if (f->cie.aug_data)
		rd_skip(&r, rd_uleb(&r));
	f->insn = r.pos;
	f->insn_end = r.end;
	return r.bad ? -EINVAL : 0;
}

/* How one register is found in the caller. SAME (0) is the start: callee-saved, untouched. */
enum { R_SAME, R_UNDEF, R_OFFSET, R_OTHER };

struct reg_rule {
	uint8_t how;
	int64_t off;	/* R_OFFSET: saved at CFA + off */
};

/* The rows' state: only what the unwinder follows (the CFA, rbp, the return address). */
struct state {
	bool cfa_set, cfa_expr;
	uint64_t cfa_reg;
	int64_t cfa_off;
	struct reg_rule bp, ra;
};

struct build;

struct exec {
	const struct cie *cie;
	struct state s;
	const struct state *init;	/* after the CIE's instructions (NULL while running them) */
	struct build *b;		/* the file's budget, and where an FDE's rows go */
	bool emit;			/* rows emitted: an FDE's run, not its CIE's */
	uint64_t from;			/* the first address the state applies to */
};

static int64_t factor(struct rd *r, int64_t v, int64_t f)
{
	int64_t out;

	if (__builtin_mul_overflow(v, f, &out)) {
		r->bad = true;
		return 0;
	}
	return out;
}

static struct reg_rule *reg_of(struct exec *x, uint64_t reg)
{
	if (reg == x->cie->ra_reg)
		return &x->s.ra;
	if (reg == JT_CFI_BP)
		return &x->s.bp;
	return NULL;
}

static void set_reg(struct exec *x, uint64_t reg, uint8_t how, int64_t off)
{
	struct reg_rule *rr = reg_of(x, reg);

	if (rr)
		*rr = (struct reg_rule){ how, off };
}

static void restore_reg(struct exec *x, uint64_t reg)
{
	struct reg_rule *rr = reg_of(x, reg);

	if (rr)
		*rr = x->init ? (rr == &x->s.ra ? x->init->ra : x->init->bp) :
				(struct reg_rule){ R_SAME, 0 };
}

/* One instruction other than the three packed with an operand; false: one not followed. */
static bool step(struct exec *x, struct rd *r, uint8_t op)
{
	int64_t da = x->cie->data_align;
	uint64_t reg;

	switch (op) {
	case CFA_nop:
	case CFA_GNU_window_save:
		break;
	case CFA_offset_extended:
		reg = rd_uleb(r);
		set_reg(x, reg, R_OFFSET, factor(r, rd_uleb(r), da));
		break;
	case CFA_offset_extended_sf:
		reg = rd_uleb(r);
		set_reg(x, reg, R_OFFSET, factor(r, rd_sleb(r), da));
		break;
	case CFA_GNU_negative_offset_extended:
		reg = rd_uleb(r);
		set_reg(x, reg, R_OFFSET, factor(r, factor(r, rd_uleb(r), da), -1));
		break;
	case CFA_restore_extended:
		restore_reg(x, rd_uleb(r));
		break;
	case CFA_undefined:
		set_reg(x, rd_uleb(r), R_UNDEF, 0);
		break;
	case CFA_same_value:
		set_reg(x, rd_uleb(r), R_SAME, 0);
		break;
	case CFA_register:
		reg = rd_uleb(r);
		set_reg(x, reg, rd_uleb(r) == reg ? R_SAME : R_OTHER, 0);
		break;
	case CFA_val_offset:
	case CFA_val_offset_sf:	/* the caller's value is CFA + N: not a saved slot */
		set_reg(x, rd_uleb(r), R_OTHER, 0);
		if (op == CFA_val_offset)
			rd_uleb(r);
		else
			rd_sleb(r);
		break;
	case CFA_expression:
	case CFA_val_expression:
		set_reg(x, rd_uleb(r), R_OTHER, 0);
		rd_skip(r, rd_uleb(r));
		break;
	case CFA_def_cfa:
		x->s.cfa_reg = rd_uleb(r);
		x->s.cfa_off = (int64_t)rd_uleb(r);
		x->s.cfa_set = true;
		x->s.cfa_expr = false;
		break;
	case CFA_def_cfa_sf:
		x->s.cfa_reg = rd_uleb(r);
		x->s.cfa_off = factor(r, rd_sleb(r), da);
		x->s.cfa_set = true;
		x->s.cfa_expr = false;
		break;
	case CFA_def_cfa_register:
		x->s.cfa_reg = rd_uleb(r);
		x->s.cfa_expr = false;
		break;
	case CFA_def_cfa_offset:
		x->s.cfa_off = (int64_t)rd_uleb(r);
		break;
	case CFA_def_cfa_offset_sf:
		x->s.cfa_off = factor(r, rd_sleb(r), da);
		break;
	case CFA_def_cfa_expression:
		rd_skip(r, rd_uleb(r));
		x->s.cfa_set = true;
		x->s.cfa_expr = true;
		break;
	case CFA_GNU_args_size:
		rd_uleb(r);
		break;
	default:
		return false;
	}
	return true;
}

/*
 * What the table keeps and counts while it is built: the rows of one section, the
 * dictionary of rules (shared by both sections' rows), and the file's budget.
 */
struct build {
	struct jt_cfi *c;
	struct rows *rows;
	uint32_t *slots;	/* the dictionary's hash: rule number + 1, 0 free */
	unsigned int bits;	/* 1 << bits slots */
	size_t rules_cap;
	uint64_t hi;		/* rows at or past this address belong to the next FDE */
	size_t ops;		/* instructions run in this file */
	int err;		/* -ENOMEM or -E2BIG: the load fails */
};

/* A slot for p in a table of 1 << bits: the 16 bytes mixed by multiplication (Fibonacci). */
static size_t prule_slot(const struct prule *p, unsigned int bits)
{
	uint64_t w[2];

	memcpy(w, p, sizeof(w));
	return ((w[0] * 0x9e3779b97f4a7c15ULL) ^ w[1]) * 0xc2b2ae3d27d4eb4fULL >> (64 - bits);
}

static int slots_grow(struct build *b)
{
	unsigned int bits = b->bits ? b->bits + 1 : 8;
	size_t n = (size_t)1 << bits, i;
	uint32_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < b->c->nr_rules; i++) {
		size_t at = prule_slot(&b->c->rules[i], bits);

		while (slots[at])
			at = (at + 1) & (n - 1);
		slots[at] = i + 1;
	}
	free(b->slots);
	b->slots = slots;
	b->bits = bits;
	return 0;
}

/* The number of rule p in the dictionary, added if new; -1 with b->err set if it cannot be. */
static int rule_number(struct build *b, const struct prule *p)
{
	struct jt_cfi *c = b->c;
	size_t at, mask;

	if (2 * (c->nr_rules + 1) > ((size_t)1 << b->bits) && slots_grow(b)) {
		b->err = -ENOMEM;
		return -1;
	}
	mask = ((size_t)1 << b->bits) - 1;
	for (at = prule_slot(p, b->bits); b->slots[at]; at = (at + 1) & mask)
		if (!memcmp(&c->rules[b->slots[at] - 1], p, sizeof(*p)))
			return b->slots[at] - 1;
	if (c->nr_rules == RULES_MAX) {
		b->err = -E2BIG;
		return -1;
	}
	if (jt_array_grow(&c->rules, &b->rules_cap, c->nr_rules + 1, sizeof(*c->rules))) {
		b->err = -ENOMEM;
		return -1;
	}
	c->rules[c->nr_rules] = *p;
	b->slots[at] = c->nr_rules + 1;
	return c->nr_rules++;
}

/* Append the row (start, rule n) to rows: one at the same start replaced, equal ones merged. */
static int rows_add(struct rows *rows, uint32_t start, uint16_t n)
{
	size_t cap;

	if (rows->nr && rows->start[rows->nr - 1] == start) {
		rows->nr--;	/* an FDE starting where the last ended: its first row wins */
		if (rows->nr && rows->rule[rows->nr - 1] == n)
			return 0;
	} else if (rows->nr && rows->rule[rows->nr - 1] == n) {
		return 0;
	}
	if (rows->nr == ROWS_MAX)
		return -E2BIG;
	if (rows->nr == rows->cap) {
		cap = rows->cap;
		if (jt_array_grow(&rows->start, &cap, rows->nr + 1, sizeof(*rows->start)))
			return -ENOMEM;
		cap = rows->cap;
		if (jt_array_grow(&rows->rule, &cap, rows->nr + 1, sizeof(*rows->rule)))
			return -ENOMEM;
		rows->cap = cap;
	}
	rows->start[rows->nr] = start;
	rows->rule[rows->nr++] = n;
	return 0;
}

/* The row of rule p from vaddr on, if vaddr is in the current FDE and in the file's reach. */
static void emit(struct build *b, uint64_t vaddr, const struct prule *p)
{
	int n;

	/* only addresses a lookup can ask: a crafted FDE far away costs no pages of rows */
	if (b->err || vaddr >= b->hi || vaddr < b->c->base || vaddr >= b->c->top ||
	    vaddr - b->c->base > UINT32_MAX)
		return;
	n = rule_number(b, p);
	if (n >= 0)
		b->err = rows_add(b->rows, vaddr - b->c->base, n);
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* The rule of state s as kept; err -ENOTSUP if it is one not followed. */
static struct prule to_prule(const struct state *s)
{
	struct prule p = { .err = -ENOTSUP };

	if (!s->cfa_set || s->cfa_expr || (s->cfa_reg != JT_CFI_SP && s->cfa_reg != JT_CFI_BP) ||
	    !fits32(s->cfa_off))
		return p;
	p.cfa_reg = s->cfa_reg;
	p.cfa_off = s->cfa_off;
	if (s->ra.how == R_UNDEF)
		p.flags |= PR_OUTERMOST;
	else if (s->ra.how == R_OFFSET && fits32(s->ra.off))
		p.ra_off = s->ra.off;
	else
		return (struct prule){ .err = -ENOTSUP };
	if (s->bp.how == R_OFFSET && fits32(s->bp.off)) {
		p.flags |= PR_BP_SAVED;
		p.bp_off = s->bp.off;
	} else if (s->bp.how != R_SAME) {
		p.flags |= PR_BP_LOST;
	}
	p.err = 0;
	return p;
}

/*
 * The location moves to next: the state so far is the rule of [x->from, next). A location
 * that goes back (DW_CFA_set_loc) changes nothing already passed, as a run up to an address
 * would have stopped at the first move past it.
 */
static void move_to(struct exec *x, uint64_t next)
{
	struct prule p;

	if (next <= x->from)
		return;
	if (x->emit) {
		p = to_prule(&x->s);
		emit(x->b, x->from, &p);
	}
	x->from = next;
}

/*
 * Run the instructions in r, the location starting at x->from: the rows of an FDE go to
 * x->b. Returns 0 when they end (x->s: the state from x->from on), or the error of every
 * address from x->from on (-ENOTSUP, -EINVAL).
 */
static int run(struct exec *x, struct rd *r)
{
	struct state saved[STATE_DEPTH];
	unsigned int depth = 0, ops = 0;
	uint64_t loc = x->from;

	while (r->pos < r->end && !r->bad) {
		uint8_t op = rd_uint(r, 1);
		uint64_t delta = 0;
		bool moved = true;

		if (++ops > RUN_OPS_MAX)
			return -ENOTSUP;
		if (++x->b->ops > LOAD_OPS_MAX) {
			x->b->err = -E2BIG;
			return -ENOTSUP;
		}
		switch (op & 0xc0) {
		case CFA_advance_loc:
			delta = op & 0x3f;
			break;
		case CFA_offset:
			set_reg(x, op & 0x3f, R_OFFSET, factor(r, rd_uleb(r), x->cie->data_align));
			moved = false;
			break;
		case CFA_restore:
			restore_reg(x, op & 0x3f);
			moved = false;
			break;
		default:
			switch (op) {
			case CFA_advance_loc1:
				delta = rd_uint(r, 1);
				break;
			case CFA_advance_loc2:
				delta = rd_uint(r, 2);
				break;
			case CFA_advance_loc4:
				delta = rd_uint(r, 4);
				break;
			case CFA_set_loc:
				loc = rd_ptr(r, x->cie->fde_enc);
				if (r->bad)
					return -EINVAL;
				move_to(x, loc);
				moved = false;
				break;
			case CFA_remember_state:
				if (depth == STATE_DEPTH)
					return -ENOTSUP;
				saved[depth++] = x->s;
				moved = false;
				break;
			case CFA_restore_state:
				if (!depth)
					return -EINVAL;
				x->s = saved[--depth];
				moved = false;
				break;
			default:
				if (!step(x, r, op))
					return -ENOTSUP;
				moved = false;
			}
		}
		if (moved && !r->bad) {
			/* past the address space: the state holds for every address after */
			if (__builtin_mul_overflow(delta, x->cie->code_align, &delta) ||
			    __builtin_add_overflow(loc, delta, &loc))
				return 0;
			move_to(x, loc);
		}
	}
	return r->bad ? -EINVAL : 0;
}

/* The span of an FDE of a section, for sorting. */
struct fde_ref {
	uint64_t pc, end;	/* [pc, end): the addresses it covers */
	size_t off;		/* its offset in the section */
};

/* By address; FDEs at one address in section order, the last one winning. */
static int cmp_fde_ref(const void *a, const void *b)
{
	const struct fde_ref *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return (x->off > y->off) - (x->off < y->off);
}

/* Every FDE of s covering addresses, into *refs sorted by address. */
static int fde_refs(const struct sect *s, struct fde_ref **refs, size_t *nr)
{
	size_t off = 0, cap = 0;
	struct rd r;
	bool dw64;

	*refs = NULL;
	*nr = 0;
	while (!entry_at(s, off, &r, &dw64)) {
		struct fde f;

		if (!parse_fde(s, off, &f) && f.range && f.pc + f.range > f.pc) {
			if (jt_array_grow(refs, &cap, *nr + 1, sizeof(**refs)))
				return -ENOMEM;
			(*refs)[(*nr)++] = (struct fde_ref){ f.pc, f.pc + f.range, off };
		}
		off = r.end;
	}
	if (*refs)
		qsort(*refs, *nr, sizeof(**refs), cmp_fde_ref);
	return 0;
}

/*
 * The rows of every FDE of s into b->rows. An FDE covers its range up to the next FDE's
 * start, as a search for the last FDE at or before an address finds it; the addresses
 * between FDEs have rule 0. A CIE's instructions are run once for its run of FDEs.
 */
static int build_section(struct build *b, const struct sect *s)
{
	static const struct prule none = { .err = -ENOENT };
	struct state init = { 0 };
	size_t i, nr, cie_off = SIZE_MAX;
	struct fde_ref *refs;
	int cie_err = 0, err;

	err = fde_refs(s, &refs, &nr);
	for (i = 0; !err && i < nr; i++) {
		struct exec x = { .b = b };
		struct prule p;
		struct fde f;
		struct rd rd;

		if (i + 1 < nr && refs[i + 1].pc == refs[i].pc)
			continue;
		if (parse_fde(s, refs[i].off, &f))
			continue;	/* parsed when listed */
		x.cie = &f.cie;
		if (f.cie_off != cie_off) {
			cie_off = f.cie_off;
			rd = (struct rd){ .buf = s->buf, .pos = f.cie.insn, .end = f.cie.insn_end,
					  .vaddr = s->vaddr };
			x.from = f.pc;
			cie_err = run(&x, &rd);
			init = x.s;
		}
		x.s = init;
		x.init = &init;
		x.emit = true;
		x.from = f.pc;
		/* up to its end, or to the next FDE's start if that is before */
		b->hi = i + 1 < nr && refs[i + 1].pc < refs[i].end ? refs[i + 1].pc : refs[i].end;
		err = cie_err;
		if (!err) {
			rd = (struct rd){ .buf = s->buf, .pos = f.insn, .end = f.insn_end,
					  .vaddr = s->vaddr };
			err = run(&x, &rd);
		}
		p = err ? (struct prule){ .err = err } : to_prule(&x.s);
		emit(b, x.from, &p);
		x.from = b->hi;
		b->hi = UINT64_MAX;
		emit(b, x.from, &none);
		err = b->err;
	}
	free(refs);
	return err;
}

/* The rule number at rel in rows: 0 before the first row. */
static uint16_t rows_at(const struct rows *rows, uint32_t rel)
{
	size_t lo = 0, hi = rows->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows->start[mid] <= rel)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? rows->rule[lo - 1] : 0;
}

/* .eh_frame's rows, and .debug_frame's where .eh_frame has none, into out. */
static int rows_merge(const struct rows *eh, const struct rows *dbg, struct rows *out)
{
	size_t i = 0, j = 0;
	int err = 0;

	while (!err && (i < eh->nr || j < dbg->nr)) {
		uint32_t at;
		uint16_t n;

		if (j == dbg->nr || (i < eh->nr && eh->start[i] <= dbg->start[j]))
			at = eh->start[i];
		else
			at = dbg->start[j];
		while (i < eh->nr && eh->start[i] == at)
			i++;
		while (j < dbg->nr && dbg->start[j] == at)
			j++;
		n = rows_at(eh, at);
		err = rows_add(out, at, n ? n : rows_at(dbg, at));
	}
	return err;
}

static void rows_free(struct rows *rows)
{
	free(rows->start);
	free(rows->rule);
	*rows = (struct rows){ 0 };
}

/* The table's compact rows from rows (freed). */
static int table_finish(struct jt_cfi *c, struct rows *rows)
{
	size_t i, p = 0;
	uint16_t *rule;

	c->nr_rows = rows->nr;
	c->nr_pages = rows->nr ? (rows->start[rows->nr - 1] >> 16) + 1 : 0;
	c->page = malloc((c->nr_pages + 1) * sizeof(*c->page));
	c->low = malloc((rows->nr ? rows->nr : 1) * sizeof(*c->low));
	if (!c->page || !c->low)
		return -ENOMEM;
	for (i = 0; i < rows->nr; i++) {
		while (p <= rows->start[i] >> 16)
			c->page[p++] = i;
		c->low[i] = rows->start[i];
	}
	c->page[c->nr_pages] = rows->nr;
	/* the rule numbers as they are, their array shrunk to its count */
	c->rule = rows->rule;
	rows->rule = NULL;
	if (rows->nr) {
		rule = realloc(c->rule, rows->nr * sizeof(*rule));
		if (rule)
			c->rule = rule;
	}
	rows_free(rows);
	return 0;
}

/* The rule number at rel: 0 before the first row. */
static uint16_t table_at(const struct jt_cfi *c, uint32_t rel)
{
	size_t p = rel >> 16, lo, hi;

	if (p >= c->nr_pages)
		return c->nr_rows ? c->rule[c->nr_rows - 1] : 0;
	lo = c->page[p];
	hi = c->page[p + 1];
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->low[mid] <= (rel & 0xffff))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? c->rule[lo - 1] : 0;	/* lo - 1 may be the last row of a page before */
}

static int build_table(struct jt_cfi *c, const struct sect *eh, const struct sect *dbg)
{
	static const struct prule none = { .err = -ENOENT };
	struct rows eh_rows = { 0 }, dbg_rows = { 0 };
	struct build b = { .c = c, .rows = &eh_rows };
	int err;

	if (rule_number(&b, &none) != 0) {	/* rule 0: no FDE */
		free(b.slots);
		return b.err;
	}
	err = eh->len ? build_section(&b, eh) : 0;
	if (!err && dbg->len) {
		b.rows = &dbg_rows;
		err = build_section(&b, dbg);
	}
	if (!err && dbg_rows.nr) {
		struct rows both = { 0 };

		err = rows_merge(&eh_rows, &dbg_rows, &both) ?: table_finish(c, &both);
		rows_free(&both);
	} else if (!err) {
		err = table_finish(c, &eh_rows);
	}
	rows_free(&eh_rows);
	rows_free(&dbg_rows);
	free(b.slots);
	if (!err) {
		if (c->nr_rules) {
			struct prule *rules = realloc(c->rules, c->nr_rules * sizeof(*rules));

			if (rules)
				c->rules = rules;
		}
	}
	return err;
}

static bool to_vaddr(const struct jt_cfi *c, uint64_t off, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < c->nr_segs; i++)
		if (off >= c->segs[i].offset && off - c->segs[i].offset < c->segs[i].filesz) {
			*vaddr = off - c->segs[i].offset + c->segs[i].vaddr;
			return true;
		}
	return false;
}

int jt_cfi__rule(const struct jt_cfi *c, uint64_t off, struct jt_cfi_rule *r)
{
	const struct prule *p;
	uint64_t vaddr;

	if (!to_vaddr(c, off, &vaddr) || vaddr < c->base || vaddr - c->base > UINT32_MAX)
		return -ENOENT;
	p = &c->rules[table_at(c, vaddr - c->base)];
	if (p->err)
		return p->err;
	*r = (struct jt_cfi_rule){
		.cfa_reg = p->cfa_reg,
		.cfa_off = p->cfa_off,
		.bp_saved = p->flags & PR_BP_SAVED,
		.bp_off = p->bp_off,
		.bp_lost = p->flags & PR_BP_LOST,
		.ra_off = p->ra_off,
		.outermost = p->flags & PR_OUTERMOST,
	};
	return 0;
}

void jt_cfi__stats(const struct jt_cfi *c, struct jt_cfi_stats *st)
{
	st->rows = c->nr_rows;
	st->rules = c->nr_rules;
	st->bytes = sizeof(*c) + c->nr_rows * (sizeof(*c->low) + sizeof(*c->rule)) +
		    (c->nr_pages + 1) * sizeof(*c->page) + c->nr_rules * sizeof(*c->rules) +
		    c->nr_segs * sizeof(*c->segs);
}

/* The bytes of section sh of the file at fd (size bytes) into *out. */
static int read_section(int fd, off_t size, const GElf_Shdr *sh, uint8_t **out)
{
	uint8_t *buf;
	size_t done = 0;

	if (sh->sh_type == SHT_NOBITS || sh->sh_offset > (uint64_t)size ||
	    sh->sh_size > (uint64_t)size - sh->sh_offset)
		return -ENOEXEC;
	if (sh->sh_flags & SHF_COMPRESSED)
		return -ENOTSUP;	/* a debug file's zlib sections: not read */
	if (sh->sh_size > SECTION_MAX)
		return -EFBIG;
	buf = malloc(sh->sh_size ? sh->sh_size : 1);
	if (!buf)
		return -ENOMEM;
	while (done < sh->sh_size) {
		ssize_t n = pread(fd, buf + done, sh->sh_size - done, sh->sh_offset + done);

		if (n <= 0) {
			free(buf);
			return n < 0 ? -errno : -ENOEXEC;	/* cut short since fstat */
		}
		done += n;
	}
	*out = buf;
	return 0;
}

/*
 * The sections of the x86-64 ELF file open at fd: .eh_frame into *eh (NULL: not wanted) and
 * .debug_frame into *dbg, each left empty if the file has none; its loadable segments into c
 * (NULL: not wanted). Returns 0 or why the file or its .eh_frame cannot be read; why its
 * .debug_frame cannot be into *dbg_err.
 */
static int read_elf(int fd, struct jt_cfi *c, struct sect *eh, struct sect *dbg, int *dbg_err)
{
	GElf_Shdr eh_sh = { 0 }, dbg_sh = { 0 };
	Elf_Scn *scn = NULL;
	size_t i, n = 0, shstrndx;
	struct stat st;
	GElf_Ehdr ehdr;
	int err = -ENOEXEC;
	Elf *elf;

	if (fstat(fd, &st))
		return -errno;
	/* plain reads, not a mapping: a file cut short under us must not be a SIGBUS */
	if (elf_version(EV_CURRENT) == EV_NONE || !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return -ENOEXEC;
	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 ||
	    !gelf_getehdr(elf, &ehdr) || ehdr.e_machine != EM_X86_64 ||
	    elf_getshdrstrndx(elf, &shstrndx) || (c && elf_getphdrnum(elf, &n)))
		goto out;
	if (c) {	/* to turn file offsets into the addresses CFI is written in */
		err = -ENOMEM;
		c->segs = calloc(n ? n : 1, sizeof(*c->segs));
		if (!c->segs)
			goto out;
		c->base = UINT64_MAX;
		for (i = 0; i < n; i++) {
			GElf_Phdr ph;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
				continue;
			c->segs[c->nr_segs++] = (struct seg){ ph.p_vaddr, ph.p_filesz,
							      ph.p_offset };
			if (ph.p_vaddr < c->base)
				c->base = ph.p_vaddr;
			if (ph.p_vaddr + ph.p_filesz > c->top && ph.p_vaddr + ph.p_filesz > ph.p_vaddr)
				c->top = ph.p_vaddr + ph.p_filesz;
		}
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_size ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (eh && !strcmp(name, ".eh_frame") && !eh_sh.sh_size)
			eh_sh = sh;
		else if (!strcmp(name, ".debug_frame") && !dbg_sh.sh_size)
			dbg_sh = sh;
	}
	err = 0;
	if (eh_sh.sh_size) {
		err = read_section(fd, st.st_size, &eh_sh, &eh->buf);
		eh->len = err ? 0 : eh_sh.sh_size;
		eh->vaddr = eh_sh.sh_addr;
	}
	if (!err && dbg_sh.sh_size) {
		*dbg_err = read_section(fd, st.st_size, &dbg_sh, &dbg->buf);
		dbg->len = *dbg_err ? 0 : dbg_sh.sh_size;
	}
out:
	elf_end(elf);
	return err;
}

struct jt_cfi *jt_cfi__load_debug(int fd, int debug_fd, int *err)
{
	struct sect eh = { 0 }, dbg = { .debug = true };
	struct jt_cfi *c = calloc(1, sizeof(*c));
	int dbg_err = -ENOENT;

	if (!c) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = read_elf(fd, c, &eh, &dbg, &dbg_err);
	/* the file's own .debug_frame, else its debug file's */
	if (!*err && !dbg.len && debug_fd >= 0) {
		int derr = read_elf(debug_fd, NULL, NULL, &dbg, &dbg_err);

		if (derr)
			dbg_err = derr;
	}
	if (!*err && !eh.len && !dbg.len)
		*err = dbg_err;	/* -ENOENT: neither section; else why .debug_frame is not read */
	if (!*err)
		*err = build_table(c, &eh, &dbg);
	free(eh.buf);
	free(dbg.buf);
	if (*err) {
		jt_cfi__free(c);
		return NULL;
	}
	return c;
}

struct jt_cfi *jt_cfi__load(int fd, int *err)
{
	return jt_cfi__load_debug(fd, -1, err);
}

void jt_cfi__free(struct jt_cfi *c)
{
	if (!c)
		return;
	free(c->low);
	free(c->rule);
	free(c->page);
	free(c->rules);
	free(c->segs);
	free(c);
}
