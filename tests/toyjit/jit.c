// SPDX-License-Identifier: MIT
/* The toy JIT: W^X code regions, the one function frame it emits, bodies, agent registration. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jitrace/agent.h"
#include "jit.h"
#include "sink.h"
#include "toyjit.h"

int jit__init(struct toy_jit *j, size_t max_fns, bool instrument_all, struct toy_sink *sink)
{
	memset(j, 0, sizeof(*j));
	j->fns = calloc(max_fns, sizeof(*j->fns));
	if (!j->fns) {
		toy_err("calloc(%zu function records): %s", max_fns, strerror(errno));
		return -1;
	}
	j->max_fns = max_fns;
	j->instrument_all = instrument_all;
	j->list_methods = true;
	j->sink = sink;
	return 0;
}

void jit__destroy(struct toy_jit *j)
{
	size_t i;

	for (i = 0; i < j->nfns; i++)
		jit__unload(j, &j->fns[i]);
	for (i = 0; i < j->nregions; i++)
		if (munmap(j->regions[i].mem, j->regions[i].size))
			toy_err("munmap(%p, %zu): %s", (void *)j->regions[i].mem,
				j->regions[i].size, strerror(errno));
	free(j->fns);
	memset(j, 0, sizeof(*j));
}

struct toy_fn *jit__fn(struct toy_jit *j, const char *name, bool instrumented)
{
	struct toy_fn *fn;

	if (j->nfns == j->max_fns) {
		toy_err("more than %zu functions", j->max_fns);
		return NULL;
	}
	if (strlen(name) >= sizeof(fn->name)) {
		toy_err("function name '%s' longer than %d bytes", name, TOY_NAME_MAX - 1);
		return NULL;
	}
	fn = &j->fns[j->nfns++];
	strcpy(fn->name, name);
	fn->instrumented = instrumented || j->instrument_all;
	return fn;
}

struct toy_region *jit__map(struct toy_jit *j, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct toy_region *r;
	void *mem;

	if (j->nregions == TOY_REGIONS_MAX) {
		toy_err("more than %d code regions", TOY_REGIONS_MAX);
		return NULL;
	}
	size = (size + page - 1) / page * page;
	mem = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		toy_err("mmap(%zu bytes, RW, anonymous): %s", size, strerror(errno));
		return NULL;
	}
	r = &j->regions[j->nregions++];
	r->mem = mem;
	r->size = size;
	return r;
}

int jit__protect(struct toy_region *r, bool exec)
{
	int prot = exec ? PROT_READ | PROT_EXEC : PROT_READ | PROT_WRITE;

	if (mprotect(r->mem, r->size, prot)) {
		toy_err("mprotect(%p, %zu, %s): %s", (void *)r->mem, r->size, exec ? "RX" : "RW",
			strerror(errno));
		return -1;
	}
	return 0;
}

int jit__load(struct toy_jit *j, struct toy_fn *fn)
{
	uint32_t line = 10 * (uint32_t)(fn - j->fns + 1);

	if (sink__load(j->sink, fn, line, j->list_methods))
		return -1;
	fn->loaded = true;
	if (j->list_methods)
		toy_out("method %s id=%llu start=0x%llx size=0x%zx", fn->name,
			(unsigned long long)fn->id, (unsigned long long)(uintptr_t)fn->code,
			fn->size);
	return 0;
}

void jit__unload(struct toy_jit *j, struct toy_fn *fn)
{
	if (!fn->loaded)
		return;
	sink__unload(j->sink, fn);
	fn->loaded = false;
}

void jit__print_calls(const struct toy_jit *j)
{
	size_t i;

	for (i = 0; i < j->nfns; i++)
		if (j->fns[i].instrumented)
			toy_out("calls %s=%llu", j->fns[i].name,
				(unsigned long long)j->fns[i].calls);
}

toy_entry_t toyfn__entry(const struct toy_fn *fn)
{
	return (toy_entry_t)(uintptr_t)fn->code;
}

/* jitrace_method_enter/leave(fn->id): the id is only known after the load, so load it. */
static void call_agent(struct x86_buf *b, void (*hook)(uint64_t), const struct toy_fn *fn)
{
	x86__mov_imm64(b, X86_RAX, (uintptr_t)&fn->id);
	x86__load(b, X86_RDI, X86_RAX, 0);
	x86__call_abs(b, (uintptr_t)hook);
}

void toyfn__begin(struct x86_buf *b, struct toy_fn *fn)
{
	x86__align_int3(b, 16);
	fn->code = b->code + b->len;
	/* Entered with rsp = 8 mod 16; three pushes make it 0 again for our calls. */
	x86__push(b, X86_RBP);
	x86__mov_rr(b, X86_RBP, X86_RSP);
	x86__push(b, X86_RBX);
	x86__push(b, X86_R12);
	x86__mov_rr(b, X86_RBX, X86_RDI);
	x86__xor_rr32(b, X86_R12, X86_R12);
	if (fn->instrumented)
		call_agent(b, jitrace_method_enter, fn);
	x86__mov_imm64(b, X86_RAX, (uintptr_t)&fn->calls);
	x86__inc_mem(b, X86_RAX, 0);
	fn->body_off = (size_t)(b->code + b->len - fn->code);
}

int toyfn__end(struct x86_buf *b, struct toy_fn *fn)
{
	fn->tail_off = (size_t)(b->code + b->len - fn->code);
	if (fn->instrumented)
		call_agent(b, jitrace_method_leave, fn);
	x86__mov_rr(b, X86_RAX, X86_R12);
	x86__pop(b, X86_R12);
	x86__pop(b, X86_RBX);
	x86__pop(b, X86_RBP);
	x86__ret(b);
	if (b->overflow) {
		toy_err("code for %s does not fit in its %zu-byte region", fn->name, b->cap);
		return -1;
	}
	fn->size = (size_t)(b->code + b->len - fn->code);
	return 0;
}

int toyfn__pad_to(struct x86_buf *b, struct toy_fn *fn, size_t size)
{
	if (fn->size > size) {
		toy_err("code for %s is %zu bytes, more than %zu", fn->name, fn->size, size);
		return -1;
	}
	x86__int3(b, size - fn->size);
	if (b->overflow) {
		toy_err("code for %s does not fit in its %zu-byte region", fn->name, b->cap);
		return -1;
	}
	fn->size = size;
	return 0;
}

/* The inner loop; its copies are 64-byte aligned so that every one runs at the same speed. */
static void spin_inner(struct x86_buf *b, bool sub)
{
	size_t top = b->len;

	if (sub)
		x86__sub_imm8(b, X86_RCX, 1);
	else
		x86__dec(b, X86_RCX);
	x86__jcc_back(b, X86_CC_NZ, top);
}

static void spin(struct x86_buf *b, uint32_t units, uint32_t iters, bool align, bool sub)
{
	size_t outer;

	if (!units || !iters)
		return;
	if (align)	/* the two 5-byte movs below come before the inner loop */
		x86__align_nops(b, 64, 10);
	x86__mov_imm32(b, X86_RDX, units);
	outer = b->len;
	x86__mov_imm32(b, X86_RCX, iters);
	spin_inner(b, sub);
	x86__dec(b, X86_RDX);
	x86__jcc_back(b, X86_CC_NZ, outer);
}

void toyfn__spin(struct x86_buf *b, uint32_t units, uint32_t iters, bool align)
{
	spin(b, units, iters, align, false);
}

void toyfn__spin_sub(struct x86_buf *b, uint32_t units, uint32_t iters)
{
	spin(b, units, iters, true, true);
}

void toyfn__spin_arg(struct x86_buf *b)
{
	size_t skip;

	x86__test_rr(b, X86_RBX, X86_RBX);
	skip = x86__jcc_fwd(b, X86_CC_Z);
	x86__align_nops(b, 64, 3);	/* the 3-byte mov comes before the inner loop */
	x86__mov_rr(b, X86_RCX, X86_RBX);
	spin_inner(b, false);
	x86__patch_here(b, skip);
}

void toyfn__set_result(struct x86_buf *b, uint32_t value)
{
	x86__mov_imm32(b, X86_R12, value);
}

void toyfn__set_count(struct x86_buf *b, uint32_t count)
{
	x86__mov_imm32(b, X86_RBX, count);
}

void toyfn__call(struct x86_buf *b, const struct toy_fn *callee, bool accumulate)
{
	if (!x86__call_rel(b, (uintptr_t)callee->code))
		x86__call_abs(b, (uintptr_t)callee->code);
	if (accumulate)
		x86__add_rr(b, X86_R12, X86_RAX);
}

void toyfn__loop_begin(struct x86_buf *b, struct toy_loop *l)
{
	x86__test_rr(b, X86_RBX, X86_RBX);
	l->exit = x86__jcc_fwd(b, X86_CC_Z);
	l->top = b->len;
}

void toyfn__loop_end(struct x86_buf *b, struct toy_loop *l)
{
	x86__dec(b, X86_RBX);
	x86__jcc_back(b, X86_CC_NZ, l->top);
	x86__patch_here(b, l->exit);
}
