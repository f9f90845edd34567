// SPDX-License-Identifier: GPL-2.0
/*
 * A user stack walk over a copy of its top, taken as the thread left the CPU: CFI rules
 * where the code has them (glibc, built without frame pointers), the rbp chain where it has
 * none (JIT code built with frame pointers). Every read is checked against the copy, and the
 * stack pointer must grow at each frame, so a hostile or stale stack ends the walk, never
 * loops it.
 */
#include <errno.h>
#include <string.h>

#include "host/unwind.h"

/* One walk's fixed inputs. */
struct walk {
	const uint8_t *stack;
	uint64_t base;
	size_t len;
};

/* The 8 bytes at user address addr, from the copy; else why the walk ends there. */
static bool read_u64(const struct walk *w, uint64_t addr, uint64_t *v, enum jt_unwind_end *end)
{
	if (addr < w->base) {
		*end = JT_UNWIND_LOST;	/* below the stack pointer: not a frame */
		return false;
	}
	if (w->len < 8 || addr - w->base > w->len - 8) {
		*end = JT_UNWIND_SLICE;
		return false;
	}
	memcpy(v, w->stack + (addr - w->base), 8);
	return true;
}

/*
 * From frame *r, whose code has the CFI rule rule (NULL: frame pointers), to its caller:
 * its return address into *ra, its sp and bp into *next. False with *end when it cannot.
 */
static bool step(const struct walk *w, const struct jt_unwind_regs *r, bool *bp_ok,
		 const struct jt_cfi_rule *rule, uint64_t *ra, struct jt_unwind_regs *next,
		 enum jt_unwind_end *end)
{
	uint64_t cfa, ra_at, bp_at = 0;
	bool bp_saved = true;

	if (rule) {
		if (rule->outermost) {
			*end = JT_UNWIND_OUTERMOST;
			return false;
		}
		if (rule->cfa_reg == JT_CFI_BP && !*bp_ok) {
			*end = JT_UNWIND_LOST;
			return false;
		}
		cfa = (rule->cfa_reg == JT_CFI_SP ? r->sp : r->bp) + (int64_t)rule->cfa_off;
		ra_at = cfa + (int64_t)rule->ra_off;
		bp_saved = rule->bp_saved;
		if (bp_saved)
			bp_at = cfa + (int64_t)rule->bp_off;
		else if (rule->bp_lost)
			*bp_ok = false;
		/*
		 * An epilogue: rbp was popped, but its rule still names the slot (compilers
		 * restore no rule when they pop). The register holds the caller's value again.
		 */
		if (bp_saved && bp_at < r->sp)
			bp_saved = false;
	} else {
		if (*bp_ok && !r->bp) {
			*end = JT_UNWIND_OUTERMOST;
			return false;
		}
		if (!*bp_ok || r->bp < r->sp || r->bp & 7) {
			*end = JT_UNWIND_LOST;	/* rbp is no frame pointer here */
			return false;
		}
		cfa = r->bp + 16;
		ra_at = r->bp + 8;
		bp_at = r->bp;
	}
	/* the caller's frame is above this one: a stack pointer that does not grow is a loop */
	if (cfa < r->sp || cfa - r->sp < 8) {
		*end = JT_UNWIND_LOST;
		return false;
	}
	next->sp = cfa;
	next->bp = r->bp;
	if (!read_u64(w, ra_at, ra, end) || (bp_saved && !read_u64(w, bp_at, &next->bp, end)))
		return false;
	if (bp_saved)
		*bp_ok = true;
	return true;
}

/*
 * The caller's sp of a frame whose code keeps it at bp + code->sender_sp_off, into next->sp:
 * above the CFA the frame-pointer step gave (its return address is below it), else lost.
 */
static bool sender_sp(const struct walk *w, const struct jt_unwind_regs *r,
		      const struct jt_unwind_code *code, struct jt_unwind_regs *next,
		      enum jt_unwind_end *end)
{
	uint64_t sp;

	if (!read_u64(w, r->bp + (int64_t)code->sender_sp_off, &sp, end))
		return false;
	if (sp < next->sp || sp & 7) {
		*end = JT_UNWIND_LOST;
		return false;
	}
	next->sp = sp;
	return true;
}

/* The rule of code's frame into *rule: 0, -ENOENT (frame pointers), or why none is followed. */
static int rule_of(const struct jt_unwind_code *code, struct jt_cfi_rule *rule)
{
	if (code->has_rule) {
		*rule = code->rule;
		return 0;
	}
	return code->cfi ? jt_cfi__rule(code->cfi, code->off, rule) : -ENOENT;
}

unsigned int jt_unwind(struct jt_unwind_regs *regs, const void *stack, uint64_t base, size_t len,
		       jt_unwind_find_fn find, void *ctx, uint64_t *ips, uint64_t *bps,
		       unsigned int max, enum jt_unwind_end *end)
{
	const struct walk w = { stack, base, len };
	struct jt_unwind_code code = { 0 };
	unsigned int n = 0;
	bool bp_ok = true;

	*end = JT_UNWIND_MAX_FRAMES;
	if (!max)
		return 0;
	if (bps)
		bps[n] = regs->bp;
	ips[n++] = regs->ip;
	if (!find(ctx, regs->ip, true, &code)) {
		*end = JT_UNWIND_LOST;
		return n;
	}
	for (;;) {
		struct jt_unwind_regs next;
		struct jt_cfi_rule rule;
		bool bp_ok_next = bp_ok;
		uint64_t ra;
		int err = rule_of(&code, &rule);

		if (err && err != -ENOENT) {
			*end = JT_UNWIND_LOST;	/* a rule not followed: a guess could be wrong */
			return n;
		}
		if (!step(&w, regs, &bp_ok_next, err ? NULL : &rule, &ra, &next, end))
			return n;
		if (code.sender_sp) {
			if (!err) {
				*end = JT_UNWIND_LOST;	/* it goes with frame pointers only */
				return n;
			}
			if (!sender_sp(&w, regs, &code, &next, end))
				return n;
		}
		if (!ra) {
			*end = JT_UNWIND_OUTERMOST;
			return n;
		}
		code = (struct jt_unwind_code){ 0 };
		if (!find(ctx, ra - 1, false, &code)) {
			*end = JT_UNWIND_LOST;
			return n;
		}
		if (n == max) {
			*end = JT_UNWIND_MAX_FRAMES;
			return n;
		}
		if (bps)
			bps[n] = next.bp;
		ips[n++] = ra;
		*regs = (struct jt_unwind_regs){ ra, next.sp, next.bp };
		bp_ok = bp_ok_next;
	}
}

unsigned int jt_unwind__splice(const uint64_t *ips, unsigned int nr, enum jt_unwind_end end,
			       const uint64_t *fp, unsigned int nr_fp, uint64_t *out,
			       unsigned int max)
{
	unsigned int i, n, k = 0;
	uint64_t last;

	if (nr <= 1 && nr_fp && (end == JT_UNWIND_LOST || end == JT_UNWIND_SLICE)) {
		n = nr_fp < max ? nr_fp : max;
		memcpy(out, fp, n * sizeof(*out));
		return n;
	}
	n = nr < max ? nr : max;
	memmove(out, ips, n * sizeof(*out));
	if (end != JT_UNWIND_SLICE || !n)
		return n;
	last = ips[nr - 1];
	for (i = 1; i < nr; i++)	/* the times its place recurs above the leaf */
		k += ips[i] == last;
	for (i = 1; i < nr_fp && k; i++)
		k -= fp[i] == last;
	if (k)
		return n;	/* fp does not reach that far */
	for (; i < nr_fp && n < max; i++)
		out[n++] = fp[i];
	return n;
}
