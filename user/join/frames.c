// SPDX-License-Identifier: GPL-2.0
/*
 * A sample's or off-CPU record's addresses named as frames, as of its time: code the process
 * loaded, modules and their symbols, the kernel's symbols, uprobes pages; where a stack
 * broke it is cut, and an off-CPU stack is unwound by the code's tables.
 */
#include <errno.h>
#include <string.h>

#include "join/collector_int.h"
#include "host/unwind.h"
#include "host/procfs.h"
#include "host/symbols.h"
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
};

static bool unwind_find(void *ctx, uint64_t ip, bool leaf, struct jt_unwind_code *code)
{
	struct unwind_ctx *u = ctx;
	struct jt_vma *vma;

	(void)leaf;
	if (ip < USER_MIN || ip >= USER_END)
		return false;
	vma = find_vma(u->c, u->p, ip, u->ts);
	if (vma && !jt_procfs__anon_path(vma->path)) {	/* a file: its table, if it has one */
		file_look(u->c, u->p, vma);
		code->cfi = vma->file ? vma->file->cfi : NULL;
		code->off = ip - vma->start + vma->pgoff;
	}
	return true;	/* JIT code, or memory nothing names: frame pointers */
}

/*
 * A sample's or off-CPU stack's user frames into out: unwound through the copy of its stack
 * by the code's unwind tables (the C library, Debian's programs, mono-sgen: built without
 * frame pointers), JIT code by its frame pointers, the kernel's frame-pointer walk spliced on
 * where the copy ends. *broken says the walk stopped where it could not go on (a rule not
 * followed, an address nothing maps, the copy's end with no walk to splice): a guess there
 * could name frames that are not the thread's.
 */
static unsigned int copied_user_ips(struct jt_collector *c, struct proc *p,
				    const struct jt_event *ev, uint64_t *out, bool *broken)
{
	const uint64_t *fp = jt_event__ips(ev) + ev->nr_kernel;
	struct unwind_ctx u = { c, p, ev->ts };
	struct jt_unwind_regs regs = { fp[0], ev->off_sp, ev->off_bp };
	uint64_t ips[JT_MAX_FRAMES];
	enum jt_unwind_end end;
	unsigned int n, out_n;

	n = jt_unwind(&regs, jt_event__stack(ev), ev->off_sp, ev->off_stack_len, unwind_find,
		      &u, ips, JT_MAX_FRAMES, &end);
	out_n = jt_unwind__splice(ips, n, end, fp, ev->nr_user, out, JT_MAX_FRAMES);
	*broken = n > 1 && (end == JT_UNWIND_LOST || (end == JT_UNWIND_SLICE && out_n <= n));
	return out_n;
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
	uint64_t unwound[JT_MAX_FRAMES];
	bool cut, broken = false;
	int err;

	i = ev->type == JT_EV_OFFCPU ? tracing_frames(c, ips, ev->nr_kernel) : 0;
	for (; i < ev->nr_kernel; i++, n++) {
		err = kernel_frame(c, ips[i], n == 0, ev->ts, &f[n]);
		if (err)
			return err;
	}
	if (ev->off_stack_len && nr_user) {
		nr_user = copied_user_ips(c, p, ev, unwound, &broken);
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
