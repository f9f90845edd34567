// SPDX-License-Identifier: GPL-2.0
/*
 * DWARF call frame information (.eh_frame) of one ELF file, asked by file offset. The two
 * sections are copied at load and every read of them is bounds-checked: the file may be
 * hostile. A lookup is a binary search (in the linker's .eh_frame_hdr table, or in an index
 * built at load when there is none), then one FDE and its CIE decoded and their instructions
 * run up to the address: a few hundred nanoseconds, no per-FDE state kept.
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
	PE_DATAREL = 0x30,
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

#define HDR_TABLE_ENC (PE_DATAREL | PE_SDATA4)	/* what every linker writes */
#define STATE_DEPTH 16	/* remember_state nesting followed (GCC emits 1 or 2) */
/*
 * Instructions one run (a CIE's, or an FDE's up to an address) may take: a compiler's FDE
 * has tens, a function with hundreds of exits a few thousand. A crafted table's lookup costs
 * no more than this, and fails (a rule not followed) rather than run on.
 */
#define RUN_OPS_MAX 16384
/* The most of .eh_frame or .eh_frame_hdr copied: Node's 90 MB binary has 2.7 MiB and 0.6 */
#define SECTION_MAX (64u << 20)

struct seg {
	uint64_t vaddr, filesz, offset;
};

struct fde_ref {
	uint64_t pc;	/* the first address the FDE covers */
	size_t off;	/* the FDE's offset in .eh_frame */
};

struct jt_cfi {
	uint8_t *eh;		/* .eh_frame */
	size_t eh_len;
	uint64_t eh_vaddr;
	uint8_t *hdr;		/* .eh_frame_hdr, kept when its table is used */
	uint64_t hdr_vaddr;
	const uint8_t *tab;	/* its table: nr pairs of sdata4 (pc, FDE) relative to hdr_vaddr */
	struct fde_ref *idx;	/* else nr FDEs sorted by pc, built at load */
	size_t nr;
	struct seg *segs;
	size_t nr_segs;
};

/* A bounds-checked little-endian reader over [buf + pos, buf + end). */
struct rd {
	const uint8_t *buf;
	size_t pos, end;
	uint64_t vaddr;		/* the address of buf[0]: the base of pc-relative pointers */
	uint64_t datarel;	/* the base of data-relative ones (.eh_frame_hdr's address), 0: none */
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
	case PE_DATAREL:
		if (r->datarel)
			return v + r->datarel;
		/* fall through */
	default:
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
	size_t insn, insn_end;	/* the initial instructions, in .eh_frame */
};

struct fde {
	uint64_t pc, range;
	size_t insn, insn_end;
	struct cie cie;
};

/* The entry at off: a reader over its body (from its id), and whether it is 64-bit DWARF. */
static int entry_at(const struct jt_cfi *c, size_t off, struct rd *r, bool *dw64)
{
	uint64_t len;

	*r = (struct rd){ .buf = c->eh, .pos = off, .end = c->eh_len, .vaddr = c->eh_vaddr };
	if (off > c->eh_len)
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

static int parse_cie(const struct jt_cfi *c, size_t off, struct cie *cie)
{
	const char *aug;
	const uint8_t *nul;
	unsigned int version;
	struct rd r;
	bool dw64;
	int err;

	if (entry_at(c, off, &r, &dw64) || rd_uint(&r, dw64 ? 8 : 4) != 0 || r.bad)
		return -EINVAL;	/* not a CIE (in .eh_frame a CIE's id is 0) */
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

static int parse_fde(const struct jt_cfi *c, size_t off, struct fde *f)
{
	uint64_t id;
	size_t at;
	struct rd r;
	bool dw64;
	int err;

	if (entry_at(c, off, &r, &dw64))
		return -EINVAL;
	at = r.pos;
	id = rd_uint(&r, dw64 ? 8 : 4);	/* the distance back to its CIE */
	if (r.bad || !id || id > at)
		return -EINVAL;
	err = parse_cie(c, at - id, &f->cie);
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

struct exec {
	const struct cie *cie;
	struct state s;
	const struct state *init;	/* after the CIE's instructions (NULL while running them) */
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
 * Run the instructions in r from address loc until one would move past target (every one,
 * for a CIE's). Returns 0, -ENOTSUP or -EINVAL.
 */
static int run(struct exec *x, struct rd *r, uint64_t loc, uint64_t target)
{
	struct state saved[STATE_DEPTH];
	unsigned int depth = 0, ops = 0;

	while (r->pos < r->end && !r->bad) {
		uint8_t op = rd_uint(r, 1);
		uint64_t delta = 0, next;
		bool moved = true;

		if (++ops > RUN_OPS_MAX)
			return -ENOTSUP;

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
				next = rd_ptr(r, x->cie->fde_enc);
				if (r->bad)
					return -EINVAL;
				if (next > target)
					return 0;
				loc = next;
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
		if (moved && (__builtin_mul_overflow(delta, x->cie->code_align, &delta) ||
			      __builtin_add_overflow(loc, delta, &loc) || loc > target))
			return r->bad ? -EINVAL : 0;
	}
	return r->bad ? -EINVAL : 0;
}

static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

static int to_rule(const struct state *s, struct jt_cfi_rule *r)
{
	*r = (struct jt_cfi_rule){ 0 };
	if (!s->cfa_set || s->cfa_expr || (s->cfa_reg != JT_CFI_SP && s->cfa_reg != JT_CFI_BP) ||
	    !fits32(s->cfa_off))
		return -ENOTSUP;
	r->cfa_reg = s->cfa_reg;
	r->cfa_off = s->cfa_off;
	if (s->ra.how == R_UNDEF)
		r->outermost = true;
	else if (s->ra.how == R_OFFSET && fits32(s->ra.off))
		r->ra_off = s->ra.off;
	else
		return -ENOTSUP;
	if (s->bp.how == R_OFFSET && fits32(s->bp.off)) {
		r->bp_saved = true;
		r->bp_off = s->bp.off;
	} else if (s->bp.how != R_SAME) {
		r->bp_lost = true;
	}
	return 0;
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

/* Field k (0: the address, 1: the FDE) of entry i of .eh_frame_hdr's table, as an address. */
static uint64_t tab_at(const struct jt_cfi *c, size_t i, unsigned int k)
{
	const uint8_t *p = c->tab + 8 * i + 4 * k;
	int32_t v = (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			      (uint32_t)p[3] << 24);

	return c->hdr_vaddr + (uint64_t)(int64_t)v;
}

static uint64_t pc_at(const struct jt_cfi *c, size_t i)
{
	return c->idx ? c->idx[i].pc : tab_at(c, i, 0);
}

/* The FDE that may cover vaddr: the last that starts at or before it. */
static bool search(const struct jt_cfi *c, uint64_t vaddr, size_t *fde)
{
	size_t lo = 0, hi = c->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pc_at(c, mid) <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	if (c->idx) {
		*fde = c->idx[lo - 1].off;
		return true;
	}
	*fde = tab_at(c, lo - 1, 1) - c->eh_vaddr;
	return *fde < c->eh_len;
}

int jt_cfi__rule(const struct jt_cfi *c, uint64_t off, struct jt_cfi_rule *r)
{
	struct exec x = { 0 };
	struct state init;
	uint64_t vaddr;
	struct fde f;
	struct rd rd;
	size_t at;
	int err;

	if (!to_vaddr(c, off, &vaddr) || !search(c, vaddr, &at))
		return -ENOENT;
	err = parse_fde(c, at, &f);
	if (err)
		return err;
	if (vaddr < f.pc || vaddr - f.pc >= f.range)
		return -ENOENT;	/* in a gap between FDEs */
	x.cie = &f.cie;
	rd = (struct rd){ .buf = c->eh, .pos = f.cie.insn, .end = f.cie.insn_end,
			  .vaddr = c->eh_vaddr };
	err = run(&x, &rd, f.pc, UINT64_MAX);
	if (err)
		return err;
	init = x.s;
	x.init = &init;
	rd.pos = f.insn;
	rd.end = f.insn_end;
	err = run(&x, &rd, f.pc, vaddr);
	return err ?: to_rule(&x.s, r);
}

/* By address; FDEs at one address in file order, the first winning as in a linker's table. */
static int cmp_fde_ref(const void *a, const void *b)
{
	const struct fde_ref *x = a, *y = b;

	if (x->pc != y->pc)
		return x->pc < y->pc ? -1 : 1;
	return (x->off > y->off) - (x->off < y->off);
}

/* Without a usable .eh_frame_hdr: every FDE of .eh_frame, sorted by address. */
static int build_index(struct jt_cfi *c)
{
	size_t off = 0, cap = 0;
	struct rd r;
	bool dw64;

	while (!entry_at(c, off, &r, &dw64)) {
		size_t next = r.end;
		struct fde f;

		if (rd_uint(&r, dw64 ? 8 : 4) && !parse_fde(c, off, &f) && f.range) {
			if (jt_array_grow(&c->idx, &cap, c->nr + 1, sizeof(*c->idx)))
				return -ENOMEM;
			c->idx[c->nr++] = (struct fde_ref){ f.pc, off };
		}
		off = next;
	}
	if (c->idx)
		qsort(c->idx, c->nr, sizeof(*c->idx), cmp_fde_ref);
	return 0;
}

/* .eh_frame_hdr's table, if it is one searched here: version 1, sdata4 pairs from the header. */
static bool use_hdr_table(struct jt_cfi *c, size_t len)
{
	struct rd r = { .buf = c->hdr, .end = len, .vaddr = c->hdr_vaddr, .datarel = c->hdr_vaddr };
	uint8_t version, ptr_enc, count_enc, table_enc;
	uint64_t count;

	version = rd_uint(&r, 1);
	ptr_enc = rd_uint(&r, 1);
	count_enc = rd_uint(&r, 1);
	table_enc = rd_uint(&r, 1);
	rd_ptr(&r, ptr_enc);	/* .eh_frame's address: the section header gave it */
	count = rd_ptr(&r, count_enc);
	if (r.bad || version != 1 || table_enc != HDR_TABLE_ENC || !count ||
	    count > (len - r.pos) / 8)
		return false;
	c->tab = c->hdr + r.pos;
	c->nr = count;
	return true;
}

/* The loadable segments, to turn file offsets into the addresses CFI is written in. */
static int read_segs(Elf *elf, struct jt_cfi *c)
{
	size_t i, n;

	if (elf_getphdrnum(elf, &n))
		return -ENOEXEC;
	c->segs = calloc(n ? n : 1, sizeof(*c->segs));
	if (!c->segs)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD)
			c->segs[c->nr_segs++] = (struct seg){ ph.p_vaddr, ph.p_filesz, ph.p_offset };
	}
	return 0;
}

/* The bytes of section sh of the file at fd (size bytes) into *out. */
static int read_section(int fd, off_t size, const GElf_Shdr *sh, uint8_t **out)
{
	uint8_t *buf;
	size_t done = 0;

	if (sh->sh_type == SHT_NOBITS || sh->sh_offset > (uint64_t)size ||
	    sh->sh_size > (uint64_t)size - sh->sh_offset)
		return -ENOEXEC;
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

/* .eh_frame and .eh_frame_hdr (optional) of elf into c. */
static int read_sections(Elf *elf, int fd, off_t size, struct jt_cfi *c, size_t *hdr_len)
{
	GElf_Shdr eh = { 0 }, hdr = { 0 };
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	int err;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOEXEC;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".eh_frame") && !eh.sh_size)
			eh = sh;
		else if (!strcmp(name, ".eh_frame_hdr") && !hdr.sh_size)
			hdr = sh;
	}
	if (!eh.sh_size)
		return -ENOENT;
	err = read_section(fd, size, &eh, &c->eh);
	if (err)
		return err;
	c->eh_len = eh.sh_size;
	c->eh_vaddr = eh.sh_addr;
	if (hdr.sh_size && !read_section(fd, size, &hdr, &c->hdr)) {
		c->hdr_vaddr = hdr.sh_addr;
		*hdr_len = hdr.sh_size;
	}
	return 0;
}

struct jt_cfi *jt_cfi__load(int fd, int *err)
{
	struct jt_cfi *c = NULL;
	size_t hdr_len = 0;
	GElf_Ehdr eh;
	struct stat st;
	Elf *elf;

	if (fstat(fd, &st)) {
		*err = -errno;
		return NULL;
	}
	*err = -ENOEXEC;
	/* plain reads, not a mapping: a file cut short under us must not be a SIGBUS */
	if (elf_version(EV_CURRENT) == EV_NONE || !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return NULL;
	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64 ||
	    !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64)
		goto out;
	*err = -ENOMEM;
	c = calloc(1, sizeof(*c));
	if (!c)
		goto out;
	*err = read_segs(elf, c) ?: read_sections(elf, fd, st.st_size, c, &hdr_len);
	if (!*err && !(c->hdr && use_hdr_table(c, hdr_len))) {
		free(c->hdr);
		c->hdr = NULL;
		*err = build_index(c);
	}
	if (*err) {
		jt_cfi__free(c);
		c = NULL;
	}
out:
	elf_end(elf);
	return c;
}

void jt_cfi__free(struct jt_cfi *c)
{
	if (!c)
		return;
	free(c->eh);
	free(c->hdr);
	free(c->idx);
	free(c->segs);
	free(c);
}
