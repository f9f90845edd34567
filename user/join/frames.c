// SPDX-License-Identifier: GPL-2.0
/*
 * A sample's or off-CPU record's addresses named as frames, as of its time: code the process
 * loaded, modules and their symbols, the kernel's symbols, uprobes pages; where a stack
 * broke it is cut, and an off-CPU stack is unwound by the code's tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "join/collector_int.h"
#include "host/monocode.h"
#include "host/unwind.h"
#include "host/procfs.h"
#include "host/symbols.h"
#include "base/membound.h"
#include "base/util.h"

#define VMAS_REREAD_NS 1000000000ULL	/* reread /proc/PID/maps on a miss at most this often */
#define SYM_NAME_MAX 1024	/* longer (demangled) symbol names are cut */

/*
 * What anonymous executable memory is called in the log: a known runtime's JIT code by
 * the runtime, any other process's as such. A frame there nothing named stays its address
 * (a late perf-map line may yet name it) and is shown by this name.
 */
static const char *anon_name(const char *comm)
{
	static const char *const runtimes[][2] = {
		{ "java", "[java jit]" }, { "node", "[node jit]" }, { "mono", "[mono jit]" },
		{ "mono-sgen", "[mono jit]" }, { "dotnet", "[dotnet jit]" },
		{ "beam.smp", "[beam jit]" },
	};
	size_t i;

	for (i = 0; i < JT_ARRAY_SIZE(runtimes); i++)
		if (!strcmp(comm, runtimes[i][0]))
			return runtimes[i][1];
	return "[anon exec]";
}

static int module_define(struct jt_collector *c, struct proc *p, struct jt_vma *vma,
			 uint64_t ts)
{
	union {
		struct jt_rec_module rec;
		char bytes[sizeof(struct jt_rec_module) + 4096 + 8];
	} u;
	const char *path = vma->path;
	size_t len, size;
	int err;

	if (vma->module_id)
		return 0;
	err = jt_coll_proc_define(c, p, ts);
	if (err)
		return err;
	if (jt_procfs__anon_path(path))	/* a memfd's name says whose it is, if anything */
		path = jt_procfs__jit_path(path) ?: anon_name(p->comm);
	len = strlen(path);
	if (len > 4096)
		len = 4096;
	size = jt_round8(sizeof(u.rec) + len);
	memset(u.bytes + size - 8, 0, 8);
	u.rec = (struct jt_rec_module){
		.h = { .type = JT_REC_MODULE, .size = size, .ts = ts },
		.id = c->next_module_id, .start = vma->start, .end = vma->end,
		.pgoff = vma->pgoff, .pid = p->pid, .path_len = len,
	};
	memcpy(u.rec.path, path, len);
	err = jt_sink__emit(&c->sink, &u.rec.h);
	if (!err)
		vma->module_id = c->next_module_id++;
	return err;
}

/* Reread /proc/PID/maps; mappings that did not change keep their module ids. */
static void reread_vmas(struct jt_collector *c, struct proc *p)
{
	struct jt_vmas fresh = { 0 };
	size_t i;

	if (jt_procfs__read_maps(c->proc_root, p->pid, &fresh))
		return;
	for (i = 0; i < fresh.n; i++) {
		struct jt_vma *n = &fresh.v[i], *o = jt_vmas__find(&p->vmas, n->start);

		if (o && o->start == n->start && o->end == n->end && o->pgoff == n->pgoff &&
		    !strcmp(o->path, n->path)) {
			n->module_id = o->module_id;
			n->file = o->file;
			n->syms_looked = o->syms_looked;
		}
	}
	jt_vmas__free(&p->vmas);
	p->vmas = fresh;
	p->mono = 0;	/* looked up again in what it maps now */
}

static struct jt_vma *find_vma(struct jt_collector *c, struct proc *p, uint64_t addr,
			       uint64_t ts)
{
	struct jt_vma *vma;

	if (!p->vmas_read) {
		p->vmas_read = true;
		p->vmas_ts = ts;
		reread_vmas(c, p);
	}
	vma = jt_vmas__find(&p->vmas, addr);
	if (!vma && ts - p->vmas_ts > VMAS_REREAD_NS) {	/* a library loaded since? */
		p->vmas_ts = ts;
		reread_vmas(c, p);
		vma = jt_vmas__find(&p->vmas, addr);
	}
	return vma;
}

/* Write a symbol record; *id gets its log id. pid and module are 0 for the kernel. */
static int symbol_define(struct jt_collector *c, uint32_t pid, uint64_t module,
			 uint64_t start, uint64_t size, const char *raw, uint64_t ts,
			 uint64_t *id)
{
	union {
		struct jt_rec_symbol rec;
		char bytes[sizeof(struct jt_rec_symbol) + SYM_NAME_MAX + 8];
	} u;
	char buf[SYM_NAME_MAX + 1];
	const char *name = jt_symbols__demangle(c->symbols, raw, buf, sizeof(buf));
	size_t len = strnlen(name, SYM_NAME_MAX), sz = jt_round8(sizeof(u.rec) + len);
	int err;

	memset(u.bytes + sz - 8, 0, 8);
	u.rec = (struct jt_rec_symbol){
		.h = { .type = JT_REC_SYMBOL, .size = sz, .ts = ts },
		.id = c->next_symbol_id, .module = module, .start = start, .size = size,
		.pid = pid, .name_len = len,
	};
	memcpy(u.rec.name, name, len);
	err = jt_sink__emit(&c->sink, &u.rec.h);
	if (!err)
		*id = c->next_symbol_id++;
	return err;
}

/* vma's file, looked up at its first use. */
static void file_look(struct jt_collector *c, struct proc *p, struct jt_vma *vma)
{
	if (vma->syms_looked)
		return;
	vma->syms_looked = true;
	if (!strcmp(vma->path, "[vdso]"))
		vma->file = jt_symbols__vdso(c->symbols);
	else
		vma->file = jt_symbols__file(c->symbols, p->pid, vma->start, vma->end);
}

/*
 * Name the native frame at file offset off of vma from the file's symbols: *f becomes a
 * symbol frame, defined (after its module) at first use. Leaves *f as it is if the file
 * has no symbol there.
 */
static int native_symbol(struct jt_collector *c, struct proc *p, struct jt_vma *vma,
			 uint64_t off, bool leaf, uint64_t ts, struct jt_frame *f)
{
	const struct jt_sym *sym;
	uint64_t key, id;
	size_t idx;
	int err;

	file_look(c, p, vma);
	if (!vma->file || !vma->file->syms)
		return 0;
	/* a return address may be just past its function: look up the call instead */
	sym = jt_elfsyms__find(vma->file->syms, leaf ? off : off - 1, &idx);
	if (!sym || idx >> SYM_IDX_BITS)
		return 0;
	key = vma->module_id << SYM_IDX_BITS | idx;
	id = (uintptr_t)jt_hash__get(&p->syms, key);
	if (!id) {
		err = symbol_define(c, p->pid, vma->module_id, sym->start, sym->size, sym->name,
				    ts, &id);
		if (!err && jt_hash__put(&p->syms, key, (void *)(uintptr_t)id))
			err = -ENOMEM;
		if (err)
			return err;
	}
	*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_SYMBOL, id), off - sym->start };
	return 0;
}

static int kernel_frame(struct jt_collector *c, uint64_t ip, bool leaf, uint64_t ts,
			struct jt_frame *f)
{
	const struct jt_kallsyms *k = jt_symbols__kernel(c->symbols);
	const struct jt_ksym *sym, *next;
	uint64_t id;
	size_t idx;
	int err;

	*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_KERNEL, 0), ip };
	sym = k ? jt_kallsyms__find(k, leaf ? ip : ip - 1, &idx) : NULL;
	if (!sym)
		return 0;
	id = (uintptr_t)jt_hash__get(&c->ksyms, idx + 1);
	if (!id) {
		next = sym + 1;	/* find() never returns the last symbol */
		err = symbol_define(c, 0, 0, sym->addr, next->addr - sym->addr, sym->name, ts,
				    &id);
		if (!err && jt_hash__put(&c->ksyms, idx + 1, (void *)(uintptr_t)id))
			err = -ENOMEM;
		if (err)
			return err;
	}
	*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_SYMBOL, id), ip - sym->addr };
	return 0;
}

/*
 * A leaf the sampler found in a page the kernel runs uprobes from: a frame of that
 * mapping, by its name, whether or not /proc still shows it.
 */
static int uprobes_frame(struct jt_collector *c, struct proc *p, uint64_t ip, const char *name,
			 uint64_t ts, struct jt_frame *f)
{
	uint64_t page = ip & ~4095ULL;
	struct jt_vma *vma = jt_vmas__find(&p->vmas, ip);
	int err;

	if (!vma || strcmp(vma->path, name)) {
		vma = jt_vmas__add(&p->vmas, page, page + 4096, 0, name);
		if (!vma) {
			jt_err("out of memory");
			return -ENOMEM;
		}
		vma->syms_looked = true;
	}
	err = module_define(c, p, vma, ts);
	*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_MODULE, vma->module_id), ip - vma->start };
	return err;
}

#define FRAME_NOWHERE 1	/* user_frame: a caller's address in no code the process has */

/*
 * A user frame into f, named as of ts. Returns 0, a negative error, or FRAME_NOWHERE (f
 * untouched): a caller's address (not the leaf, which ran) in no executable mapping and no
 * JIT code of a process whose mappings are known cannot be a return address. A frame-pointer
 * walk went astray there, through code that keeps data in rbp, and what follows is noise.
 */
static int user_frame(struct jt_collector *c, struct proc *p, uint64_t ip, bool leaf,
		      uint64_t ts, struct jt_frame *f)
{
	/* a return address may be just past its function: look up the call instead */
	uint64_t at = leaf ? ip : ip - 1;
	struct jt_method *m = jt_codemap__find(&p->code, at);
	struct jt_vma *vma;
	int err;

	if (m && m->unsure_us && ts < m->load_ts + m->unsure_us * 1000ULL) {
		c->st.unsure_frames++;	/* this code, or what it replaced: not known */
		*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_USER, 0), ip };
		return 0;
	}
	if (m) {
		err = jt_coll_method_define(c, p, m, ts);
		*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_METHOD, m->log_id), ip - m->start };
		return err;
	}
	vma = find_vma(c, p, at, ts);
	if (vma && jt_procfs__anon_path(vma->path)) {	/* a bare address, in a named place */
		jt_late__unnamed(&p->late, at, ts);	/* a line read later may name it */
		err = module_define(c, p, vma, ts);
		*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_USER, vma->module_id), ip };
		return err;
	}
	if (vma) {
		uint64_t off = ip - vma->start + vma->pgoff;

		err = module_define(c, p, vma, ts);
		if (err)
			return err;
		*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_MODULE, vma->module_id), off };
		return native_symbol(c, p, vma, off, leaf, ts, f);
	}
	if (!leaf && p->vmas.n)
		return FRAME_NOWHERE;
	jt_late__unnamed(&p->late, at, ts);	/* a line read later may name it */
	*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_USER, 0), ip };
	return 0;
}

#define USER_MIN 4096ULL			/* below: no code is ever mapped there */
#define USER_END 0x0000800000000000ULL	/* x86-64 user space ends here, */
#define VSYSCALL 0xffffffffff600000ULL	/* but for the legacy vsyscall page */
#define LOOP_PERIOD_MAX 8		/* the longest repeating run of callers looked for */

/*
 * How many of a sample's user frames to keep. A frame-pointer chain that reaches an address
 * no user code can have is cut there (one that reaches memory that holds no code of the
 * process, as user_frame finds, is cut as its frames are named). One that loops runs until the kernel stops walking
 * it, at JT_MAX_FRAMES: when such a full stack ends in a run of callers repeated at least
 * three times, one turn of it is kept (a recursion deeper than the walk is cut alike: its
 * bottom was not seen either). *cut says whether anything was cut.
 */
static unsigned int user_frames_kept(const uint64_t *ips, unsigned int n, bool *cut)
{
	unsigned int i, period, start;

	*cut = false;
	for (i = 0; i < n && ips[i]; i++)
		if (ips[i] < USER_MIN || (ips[i] >= USER_END && ips[i] - VSYSCALL >= 4096)) {
			*cut = true;
			return i;
		}
	if (i < JT_MAX_FRAMES)
		return i;
	for (period = 1; period <= LOOP_PERIOD_MAX; period++) {
		for (start = n - period; start > 0 && ips[start - 1] == ips[start - 1 + period];
		     start--)
			;
		if (n - start >= 3 * period) {
			*cut = true;
			return start + period;
		}
	}
	return n;
}

/* What the unwinder asks of a process: where code at an address is, and its unwind table. */
struct unwind_ctx {
	struct jt_collector *c;
	struct proc *p;
	uint64_t ts;
	bool hs_asked;		/* hs is what jt_hotspots gave, once a walk */
	struct jt_hotspot *hs;	/* the process's JVM, NULL: none */
	unsigned int k;		/* find's calls so far: the k-th asks for frame k */
	bool mono_cut;		/* a Mono frame was not stepped */
	bool interp[JT_MAX_FRAMES];	/* frame k is HotSpot's interpreter */
};

/* The process's JVM, if it is one (asked once a walk; jt_hotspots keeps the answer). */
static struct jt_hotspot *unwind_hotspot(struct unwind_ctx *u)
{
	char why[256] = "";
	int err;

	if (u->hs_asked)
		return u->hs;
	u->hs_asked = true;
	u->hs = jt_hotspots__get(&u->c->hotspots, u->p->pid, u->ts, &err, why, sizeof(why));
	if (why[0])
		jt_err("pid %u: its JVM's frames are walked by frame pointers only: %s",
		       u->p->pid, why);
	return u->hs;
}

/*
 * HotSpot's blob at ip into *hc: kept with the code's record where the process has one (read
 * at its first walk, while the code lived: time-correct as the record is), else read now.
 */
static int hs_code(struct unwind_ctx *u, uint64_t ip, struct jt_hs_code *hc)
{
	struct jt_method *m = jt_codemap__find(&u->p->code, ip);
	int err;

	if (m && m->hs_kind) {
		*hc = (struct jt_hs_code){ .kind = m->hs_kind - 1, .begin = m->hs_begin,
					   .end = m->hs_end, .frame_size = m->hs_frame_size,
					   .frame_complete = m->hs_frame_complete };
		return 0;
	}
	err = jt_hotspot__code(u->hs, ip, hc);
	/* the blob read now holds the record's code: it is the record's, not what replaced it */
	if (!err && m && hc->begin <= m->start && m->start < hc->end && m->start + m->size <= hc->end) {
		m->hs_kind = hc->kind + 1;
		m->hs_begin = hc->begin;
		m->hs_end = hc->end;
		m->hs_frame_size = hc->frame_size;
		m->hs_frame_complete = hc->frame_complete;
	}
	return err;
}

/* Whether p runs Mono: its program or a library it maps is Mono's runtime. */
static bool runs_mono(struct proc *p)
{
	static const char *const runtimes[] = { "mono-sgen", "libmonosgen-2.0.so" };
	size_t i, j;

	if (p->mono)
		return p->mono == PROC_MONO;
	p->mono = PROC_NOT_MONO;
	for (i = 0; i < p->vmas.n; i++) {
		const char *base = strrchr(p->vmas.v[i].path, '/');

		for (j = 0; base && j < JT_ARRAY_SIZE(runtimes); j++)
			if (!strncmp(base + 1, runtimes[j], strlen(runtimes[j])))
				p->mono = PROC_MONO;
	}
	return p->mono == PROC_MONO;
}

/*
 * Mono's JIT code at ip: stepped by the rule its body's shape gives (monocode.h), read from
 * the process at the first walk through its code record and kept with it. False where no
 * rule is sure: a body of no known shape, code no record names (a line not yet read), a
 * record that may not be the code of the sample's time. Mono leaves the frame pointer out
 * of most methods, so frame pointers there would skip their callers.
 */
static bool mono_find(struct unwind_ctx *u, uint64_t ip, bool leaf, struct jt_unwind_code *code)
{
	struct jt_method *m = jt_codemap__find(&u->p->code, ip);

	if (m && (!m->unsure_us || u->ts >= m->load_ts + m->unsure_us * 1000ULL)) {
		if (m->mono.kind == JT_MONO_UNREAD)	/* else kept, or no shape (a freed body) */
			jt_monocode__read(u->c->proc_root, u->p->pid, m->start, m->size, &m->mono);
		if (!jt_monocode__unwind_code(&m->mono, ip - m->start, leaf, code))
			return true;
	}
	u->mono_cut = true;
	return false;
}

/*
 * How JIT code at ip is stepped: a JVM's by HotSpot's knowledge of its frames (compiled code
 * and stubs by their frame sizes, the interpreter by frame pointers and the sender sp it
 * keeps), Mono's by its bodies' shapes, any other's by frame pointers. False where a HotSpot
 * or Mono frame cannot be stepped (a prologue, a blob that cannot be, a body of no known
 * shape): frame pointers there could name frames not the thread's.
 */
static bool jit_find(struct unwind_ctx *u, uint64_t ip, bool leaf, unsigned int k,
		     struct jt_unwind_code *code)
{
	struct jt_hotspot *hs = unwind_hotspot(u);
	struct jt_hs_code hc;
	int err;

	if (!hs && runs_mono(u->p))
		return mono_find(u, ip, leaf, code);
	if (!hs || !jt_hotspot__in_code_cache(hs, ip))
		return true;
	err = hs_code(u, ip, &hc);
	if (err)	/* free space, or unreadable: not a blob's frame, frame pointers */
		return err == -ENOENT || err == -EFAULT;
	if (hc.kind == JT_HS_INTERPRETER && k < JT_MAX_FRAMES)
		u->interp[k] = true;
	return !jt_hotspot__unwind_code(hs, &hc, ip, leaf, code);
}

static bool unwind_find(void *ctx, uint64_t ip, bool leaf, struct jt_unwind_code *code)
{
	struct unwind_ctx *u = ctx;
	unsigned int k = u->k++;
	struct jt_vma *vma;

	if (ip < USER_MIN || ip >= USER_END)
		return false;
	vma = find_vma(u->c, u->p, ip, u->ts);
	if (vma && !jt_procfs__anon_path(vma->path)) {	/* a file: its table, if it has one */
		file_look(u->c, u->p, vma);
		code->cfi = vma->file ? vma->file->cfi : NULL;
		code->off = ip - vma->start + vma->pgoff;
		return true;
	}
	return jit_find(u, ip, leaf, k, code);	/* JIT code, or memory nothing names */
}

/* A sample's copy of its stack, as HotSpot's reader reads it. */
struct stack_copy {
	const uint8_t *stack;
	uint64_t base;
	size_t len;
};

static int stack_copy_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct stack_copy *s = ctx;

	if (addr < s->base || addr - s->base > s->len || len > s->len - (addr - s->base))
		return -EFAULT;
	memcpy(buf, s->stack + (addr - s->base), len);
	return 0;
}

/*
 * A sample's or off-CPU stack's user frames into out: unwound through the copy of its stack
 * by the code's unwind tables (the C library, Debian's programs, mono-sgen: built without
 * frame pointers), JIT code by its frame pointers, HotSpot's frame sizes or Mono's code
 * shapes, the kernel's frame-pointer walk spliced on where the copy ends (not where a Mono
 * frame could not be stepped: that walk would skip its callers). methods[i] gets the
 * Method * frame i runs where it is HotSpot's interpreter (read from the copy at its frame
 * pointer), else 0; *hs the process's JVM. *broken says the walk stopped where it could not
 * go on (a rule not followed, an address nothing maps, a Mono frame not stepped, the copy's
 * end with no walk to splice): a guess there could name frames that are not the thread's.
 */
static unsigned int copied_user_ips(struct jt_collector *c, struct proc *p,
				    const struct jt_event *ev, uint64_t *out, uint64_t *methods,
				    struct jt_hotspot **hs, bool *broken)
{
	const uint64_t *fp = jt_event__ips(ev) + ev->nr_kernel;
	struct unwind_ctx u = { .c = c, .p = p, .ts = ev->ts };
	struct stack_copy copy = { jt_event__stack(ev), ev->off_sp, ev->off_stack_len };
	struct jt_unwind_regs regs = { fp[0], ev->off_sp, ev->off_bp };
	uint64_t ips[JT_MAX_FRAMES], bps[JT_MAX_FRAMES];
	enum jt_unwind_end end;
	unsigned int i, n, out_n;

	n = jt_unwind(&regs, copy.stack, copy.base, copy.len, unwind_find, &u, ips, bps,
		      JT_MAX_FRAMES, &end);
	if (u.mono_cut) {	/* the kernel's walk, by frame pointers, would skip Mono's frames */
		out_n = n;
		memcpy(out, ips, n * sizeof(*out));
		*broken = true;
	} else {
		out_n = jt_unwind__splice(ips, n, end, fp, ev->nr_user, out, JT_MAX_FRAMES);
		*broken = n > 1 &&
			  (end == JT_UNWIND_LOST || (end == JT_UNWIND_SLICE && out_n <= n));
	}
	/* a sample's copy, and whether the kernel's walk comes with it, are what its thread's
	 * walks need: learned from this one */
	if (ev->type == JT_EV_SAMPLE) {
		struct jt_ucopy_walk w = {
			.ts = ev->ts, .len = copy.len, .top = regs.sp - copy.base, .end = end,
			.frames = n, .fp_taken = ev->flags & JT_EVENT_FP_WALK,
			.fp_added = out_n > n,
		};

		jt_ucopy__walked(&c->ucopy, ev->tid, &w);
	}
	*hs = u.hs;
	for (i = 0; i < out_n; i++) {
		methods[i] = 0;
		/* the unwound frames that stayed (the kernel's walk may have replaced them) */
		if (i < n && out[i] == ips[i] && u.interp[i] &&
		    jt_hotspot__interp_method(u.hs, bps[i], stack_copy_read, &copy, &methods[i]))
			methods[i] = 0;
	}
	return out_n;
}

/*
 * An interpreted frame at ip as the method it runs (Method * method of JVM hs): a method of
 * no code, named through the JVM's tables at its first frame and defined then; one that
 * cannot be named stays the interpreter's frame (user_frame).
 */
static int interp_frame(struct jt_collector *c, struct proc *p, struct jt_hotspot *hs,
			uint64_t method, uint64_t ip, bool leaf, uint64_t ts, struct jt_frame *f)
{
	struct jt_method *m = jt_hash__get(&p->interp, method);
	char name[JT_NAME_MAX];
	int len, err;

	if (!m) {
		len = jt_hotspot__method_name(hs, method, name, sizeof(name));
		if (len < 0)
			return user_frame(c, p, ip, leaf, ts, f);
		if (!jt_membound__take(p->mem, jt_method__cost(len))) {
			c->st.memory_interp++;
			return user_frame(c, p, ip, leaf, ts, f);
		}
		m = jt_method__new(0, 0, ts, 0, JT_SRC_VMSTRUCTS, name, len);
		if (!m || jt_hash__put(&p->interp, method, m)) {
			free(m);
			jt_membound__give(p->mem, jt_method__cost(len));
			jt_err("out of memory for the interpreted methods of pid %u", p->pid);
			return -ENOMEM;
		}
	}
	err = jt_coll_method_define(c, p, m, ts);
	*f = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_METHOD, m->log_id), 0 };
	return err;
}

void jt_coll_interp_forget(struct proc *p)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (jt_hash__next(&p->interp, &pos, &key, &val)) {
		struct jt_method *m = val;

		jt_membound__give(p->mem, jt_method__cost(m->name_len));
		free(m);
	}
	jt_hash__fini(&p->interp);
}

/*
 * How many of an off-CPU kernel stack's leaf frames are the tracing that took it (the
 * tracepoint's iterator, bpf_trace_run, jitrace's own program), not the thread's: they go.
 */
static unsigned int tracing_frames(struct jt_collector *c, const uint64_t *ips, unsigned int n)
{
	static const char *const tracing[] = { "bpf_prog_", "bpf_trace_run", "__traceiter_",
					       "__bpf_trace_" };
	const struct jt_kallsyms *k = jt_symbols__kernel(c->symbols);
	unsigned int i, j;
	size_t idx;

	for (i = 0; k && i < n && i < 4; i++) {
		const struct jt_ksym *sym = jt_kallsyms__find(k, ips[i], &idx);

		for (j = 0; sym && j < JT_ARRAY_SIZE(tracing); j++)
			if (!strncmp(sym->name, tracing[j], strlen(tracing[j])))
				break;
		if (!sym || j == JT_ARRAY_SIZE(tracing))
			break;
	}
	return i;
}

/*
 * A sample's (or off-CPU record's) stack into rec: its frames named as of ev->ts, the process
 * and thread defined before it.
 */
int jt_coll_stack_build(struct jt_collector *c, struct proc *p, const struct jt_event *ev,
			struct jt_rec_sample *rec)
{
	struct jt_frame *f = rec->frames;
	const uint64_t *ips = jt_event__ips(ev), *uips = ips + ev->nr_kernel;
	unsigned int i, n = 0, nr_user = ev->nr_user, kept;
	uint64_t unwound[JT_MAX_FRAMES], methods[JT_MAX_FRAMES];
	struct jt_hotspot *hs = NULL;
	bool cut, broken = false;
	int err;

	i = ev->type == JT_EV_OFFCPU ? tracing_frames(c, ips, ev->nr_kernel) : 0;
	for (; i < ev->nr_kernel; i++, n++) {
		err = kernel_frame(c, ips[i], n == 0, ev->ts, &f[n]);
		if (err)
			return err;
	}
	if (ev->off_stack_len && nr_user) {
		nr_user = copied_user_ips(c, p, ev, unwound, methods, &hs, &broken);
		uips = unwound;
	}
	kept = user_frames_kept(uips, nr_user, &cut);
	cut |= broken && kept == nr_user;
	for (i = 0; i < kept; i++, n++) {
		uint64_t ip = uips[i];

		if (i == 0 && (ev->flags & JT_EVENT_LEAF_XOL))
			err = uprobes_frame(c, p, ip, "[uprobes]", ev->ts, &f[n]);
		else if (i == 0 && (ev->flags & JT_EVENT_LEAF_TRAMP))
			err = uprobes_frame(c, p, ip, "[uprobes-trampoline]", ev->ts, &f[n]);
		else if (uips == unwound && methods[i])
			err = interp_frame(c, p, hs, methods[i], ip, i == 0, ev->ts, &f[n]);
		else
			err = user_frame(c, p, ip, i == 0, ev->ts, &f[n]);
		if (err == FRAME_NOWHERE) {
			kept = i;
			cut = true;
			break;
		}
		if (err)
			return err;
	}
	if (cut) {
		c->st.broken_stacks++;
		f[n++] = (struct jt_frame){ JT_FRAME_REF(JT_FRAME_TRUNCATED, 0), nr_user - kept };
	}
	/*
	 * A process neither an exec nor /proc named (gone before its samples were joined, or
	 * sampled after its exit record, running on in the kernel): the sampled thread's name
	 * stands for it, the program's name unless the thread renamed itself.
	 */
	if (!p->defined && !p->comm[0] && ev->thread[0]) {	/* else proc_define reads /proc */
		jt_procfs__read_comm(c->proc_root, p->pid, p->comm);
		if (!p->comm[0])
			jt_coll_set_comm(p, ev->thread);
	}
	err = jt_coll_proc_define(c, p, ev->ts);
	err = err ?: jt_coll_thread_define(c, p, ev);
	if (err)
		return err;
	rec->h = (struct jt_rec_hdr){ .type = JT_REC_SAMPLE,
				      .size = sizeof(*rec) + n * sizeof(*f), .ts = ev->ts };
	rec->pid = p->pid;
	rec->tid = ev->tid;
	rec->cpu = ev->cpu;
	rec->nr_frames = n;
	rec->reserved = 0;
	return 0;
}
