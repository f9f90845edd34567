// SPDX-License-Identifier: MIT
/* The toy JIT's workloads: what each scenario compiles, how it runs it, what it checks. */
#include <pthread.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "toyjit.h"

#define FN_BYTES 256			/* room for any one function here, alignment included */
#define MANY_FN_BYTES 128		/* a `many` function is 112 bytes at most */
#define MANY_SPIN_ITERS 100		/* a few tens of ns of work in each `many` function */
#define UNIT_TARGET_NS 30000ULL		/* one unit of spin work */
#define CALIB_ITERS 2000000ULL		/* loop iterations timed per calibration run */
#define CALIB_RUNS 6			/* the first warms up; the fastest of the rest counts */
#define CHUNK_TARGET_NS 10000000ULL	/* CPU time between two looks at the clock */
#define MANY_CHECK_EVERY 1024		/* `many` calls between two looks at the clock */

/* A unit of spin work: iters turns of the inner loop, about UNIT_TARGET_NS long. */
struct unit {
	uint32_t iters;
	uint64_t ns;
};

static int expect_calls(const struct toy_fn *fn, uint64_t want)
{
	if (fn->calls == want)
		return 0;
	toy_err("%s ran %llu times, expected %llu", fn->name, (unsigned long long)fn->calls,
		(unsigned long long)want);
	return -1;
}

static int load_all(struct toy_jit *j)
{
	size_t i;

	for (i = 0; i < j->nfns; i++)
		if (!j->fns[i].loaded && jit__load(j, &j->fns[i]))
			return -1;
	return 0;
}

/* A JIT caller: as many times as its argument says, call each callee in turn. */
static int emit_caller(struct x86_buf *b, struct toy_fn *fn, struct toy_fn *const *callees,
		       size_t ncallees, bool accumulate)
{
	struct toy_loop loop;
	size_t i;

	toyfn__begin(b, fn);
	toyfn__loop_begin(b, &loop);
	for (i = 0; i < ncallees; i++)
		toyfn__call(b, callees[i], accumulate);
	toyfn__loop_end(b, &loop);
	return toyfn__end(b, fn);
}

/* toy_outer: call toy_inner `count` times, a number built into its code. */
static int emit_outer(struct x86_buf *b, struct toy_fn *outer, const struct toy_fn *inner,
		      uint32_t count)
{
	struct toy_loop loop;

	toyfn__begin(b, outer);
	toyfn__set_count(b, count);
	toyfn__loop_begin(b, &loop);
	toyfn__call(b, inner, false);
	toyfn__loop_end(b, &loop);
	return toyfn__end(b, outer);
}

/* Measure the inner spin loop with JIT code of the very same shape (toy_calibrate). */
static int calibrate(struct toy_jit *j, struct unit *u)
{
	struct toy_region *r = jit__map(j, FN_BYTES);
	struct toy_fn *fn = jit__fn(j, "toy_calibrate", false);
	uint64_t best = UINT64_MAX, t, iters;
	struct x86_buf b;
	int i;

	if (!r || !fn)
		return -1;
	x86__init(&b, r->mem, r->size);
	toyfn__begin(&b, fn);
	toyfn__spin_arg(&b);
	if (toyfn__end(&b, fn) || jit__protect(r, true) || jit__load(j, fn))
		return -1;
	for (i = 0; i < CALIB_RUNS; i++) {
		t = toy_cpu_ns();
		toyfn__entry(fn)(CALIB_ITERS);
		t = toy_cpu_ns() - t;
		if (i > 0 && t < best)
			best = t;
	}
	if (expect_calls(fn, CALIB_RUNS))
		return -1;
	if (!best)
		best = 1;
	iters = UNIT_TARGET_NS * CALIB_ITERS / best;
	if (iters < 1)
		iters = 1;
	if (iters > UINT32_MAX)
		iters = UINT32_MAX;
	u->iters = (uint32_t)iters;
	u->ns = best * iters / CALIB_ITERS;
	if (!u->ns)
		u->ns = 1;
	toy_out("unit ns=%llu iters=%u", (unsigned long long)u->ns, u->iters);
	return 0;
}

int scenario_calls(const struct toy_opts *o)
{
	struct toy_fn *fn, *outer, *inner;
	struct toy_region *r;
	struct toy_jit j;
	struct x86_buf b;
	uint64_t k;
	size_t i;
	int err = -1;

	if (jit__init(&j, o->ncalls + 2, true, o->sink))
		return -1;
	r = jit__map(&j, (o->ncalls + 2) * FN_BYTES);
	if (!r)
		goto cleanup;
	x86__init(&b, r->mem, r->size);
	for (i = 0; i < o->ncalls; i++) {
		fn = jit__fn(&j, o->calls[i].name, true);
		if (!fn)
			goto cleanup;
		toyfn__begin(&b, fn);
		if (toyfn__end(&b, fn))
			goto cleanup;
	}
	inner = jit__fn(&j, "toy_inner", true);
	outer = jit__fn(&j, "toy_outer", true);
	if (!inner || !outer)
		goto cleanup;
	toyfn__begin(&b, inner);
	if (toyfn__end(&b, inner))
		goto cleanup;
	if (emit_outer(&b, outer, inner, o->inner) || jit__protect(r, true) || load_all(&j))
		goto cleanup;

	for (i = 0; i < o->ncalls; i++)
		for (k = 0; k < o->calls[i].count; k++)
			toyfn__entry(&j.fns[i])(0);
	for (k = 0; k < o->outer; k++)
		toyfn__entry(outer)(0);

	for (i = 0; i < o->ncalls; i++)
		if (expect_calls(&j.fns[i], o->calls[i].count))
			goto cleanup;
	if (expect_calls(outer, o->outer) || expect_calls(inner, (uint64_t)o->outer * o->inner))
		goto cleanup;
	jit__print_calls(&j);
	err = 0;
cleanup:
	jit__destroy(&j);
	return err;
}

int scenario_split(const struct toy_opts *o)
{
	int rewrite = o->rewrite_map, slot;
	struct toy_fn *a, *bfn, *dispatch;
	uint64_t chunk, start, n = 0;
	struct toy_region *r;
	struct toy_jit j;
	struct x86_buf b;
	struct unit u;
	int err = -1;

	if (jit__init(&j, 4, o->instrument, o->sink))
		return -1;
	if (calibrate(&j, &u))
		goto cleanup;
	r = jit__map(&j, 3 * FN_BYTES);
	a = jit__fn(&j, "hot_a", false);
	bfn = jit__fn(&j, "hot_b", false);
	dispatch = jit__fn(&j, "toy_dispatch", false);
	if (!r || !a || !bfn || !dispatch)
		goto cleanup;
	x86__init(&b, r->mem, r->size);
	toyfn__begin(&b, a);
	/* while it spins [rbp] = rbp (a loop), or [rbp + 8] = rbp (a return address into the
	 * stack, as a walk through code that keeps data in rbp finds); what was there is
	 * kept below and put back */
	slot = o->fp_loop ? 0 : 8;
	if (o->fp_loop || o->fp_astray) {
		x86__load(&b, X86_RAX, X86_RBP, slot);
		x86__push(&b, X86_RAX);
		x86__store(&b, X86_RBP, slot, X86_RBP);
	}
	toyfn__spin(&b, o->ratio_a, u.iters, true);
	if (o->fp_loop || o->fp_astray) {
		x86__pop(&b, X86_RAX);
		x86__store(&b, X86_RBP, slot, X86_RAX);
	}
	if (toyfn__end(&b, a))
		goto cleanup;
	toyfn__begin(&b, bfn);
	toyfn__spin(&b, o->ratio_b, u.iters, true);
	if (toyfn__end(&b, bfn) ||
	    emit_caller(&b, dispatch, (struct toy_fn *const[]){ a, bfn }, 2, false) ||
	    jit__protect(r, true) || load_all(&j))
		goto cleanup;

	chunk = CHUNK_TARGET_NS / ((uint64_t)(o->ratio_a + o->ratio_b) * u.ns);
	if (!chunk)
		chunk = 1;
	toy_out("split ratio=%u:%u chunk=%llu", o->ratio_a, o->ratio_b,
		(unsigned long long)chunk);
	start = toy_cpu_ns();
	while (toy_cpu_ns() - start < o->ms * 1000000) {
		toyfn__entry(dispatch)(chunk);
		n++;
		if (rewrite && toy_cpu_ns() - start >= o->ms * 500000) {	/* halfway */
			if (sink__rewrite_map(o->sink, (struct toy_fn *const[]){ a, bfn, dispatch },
					      3, "hot_a_rewritten", rewrite))
				goto cleanup;
			toy_out("rewrite ns=%llu", (unsigned long long)toy_now_ns());
			rewrite = TOY_REWRITE_NONE;
		}
	}
	if (expect_calls(dispatch, n) || expect_calls(a, n * chunk) ||
	    expect_calls(bfn, n * chunk))
		goto cleanup;
	jit__print_calls(&j);
	err = 0;
cleanup:
	jit__destroy(&j);
	return err;
}

/* old_fn or new_fn at the start of region x: a unit of spin, then a result telling them apart. */
static int emit_version(struct toy_region *x, struct toy_fn *fn, uint32_t iters, bool new)
{
	struct x86_buf b;

	x86__init(&b, x->mem, x->size);
	toyfn__begin(&b, fn);
	if (new)
		toyfn__spin_sub(&b, 1, iters);
	else
		toyfn__spin(&b, 1, iters, true);
	toyfn__set_result(&b, new ? 2 : 1);
	return toyfn__end(&b, fn);
}

static int pad_version(struct toy_region *x, struct toy_fn *fn, size_t size)
{
	struct x86_buf b;

	x86__init(&b, x->mem, x->size);
	b.len = (size_t)(fn->code - x->mem) + fn->size;
	return toyfn__pad_to(&b, fn, size);
}

/* Call old_fn or new_fn through toy_caller, chunk calls at a time, for ms of CPU. */
static int run_phase(struct toy_fn *caller, uint64_t chunk, uint64_t ms, uint64_t result,
		     uint64_t *calls)
{
	uint64_t start = toy_cpu_ns(), got;

	*calls = 0;
	while (toy_cpu_ns() - start < ms * 1000000) {
		got = toyfn__entry(caller)(chunk);
		if (got != chunk * result) {
			toy_err("toy_caller(%llu) returned %llu, expected %llu: the wrong code ran",
				(unsigned long long)chunk, (unsigned long long)got,
				(unsigned long long)(chunk * result));
			return -1;
		}
		*calls += chunk;
	}
	return 0;
}

int scenario_recompile(const struct toy_opts *o)
{
	struct toy_fn *oldf, *newf, *caller;
	struct toy_region *x, *r;
	uint64_t chunk, n_old, n_new, t;
	struct toy_jit j;
	struct x86_buf b;
	struct unit u;
	size_t size;
	int err = -1;

	if (jit__init(&j, 4, o->instrument, o->sink))
		return -1;
	if (calibrate(&j, &u))
		goto cleanup;
	x = jit__map(&j, FN_BYTES);
	r = jit__map(&j, FN_BYTES);
	oldf = jit__fn(&j, "old_fn", false);
	newf = jit__fn(&j, "new_fn", false);
	caller = jit__fn(&j, "toy_caller", false);
	if (!x || !r || !oldf || !newf || !caller)
		goto cleanup;
	/* Both versions must have one size: emit new_fn at X once just to learn its size. */
	if (emit_version(x, newf, u.iters, true) || emit_version(x, oldf, u.iters, false))
		goto cleanup;
	size = newf->size > oldf->size ? newf->size : oldf->size;
	if (pad_version(x, oldf, size))
		goto cleanup;
	x86__init(&b, r->mem, r->size);
	if (emit_caller(&b, caller, (struct toy_fn *const[]){ oldf }, 1, true) ||
	    jit__protect(x, true) || jit__protect(r, true) || jit__load(&j, oldf) ||
	    jit__load(&j, caller))
		goto cleanup;

	chunk = CHUNK_TARGET_NS / u.ns;
	if (!chunk)
		chunk = 1;
	toy_out("recompile chunk=%llu", (unsigned long long)chunk);
	if (run_phase(caller, chunk, o->ms, 1, &n_old))
		goto cleanup;

	t = toy_now_ns();
	toy_out("switch begin_ns=%llu", (unsigned long long)t);
	jit__unload(&j, oldf);
	if (jit__protect(x, false) || emit_version(x, newf, u.iters, true) ||
	    pad_version(x, newf, size) || jit__protect(x, true) || jit__load(&j, newf))
		goto cleanup;
	t = toy_now_ns();
	toy_out("switch end_ns=%llu", (unsigned long long)t);

	if (run_phase(caller, chunk, o->ms, 2, &n_new))
		goto cleanup;
	if (expect_calls(oldf, n_old) || expect_calls(newf, n_new) ||
	    expect_calls(caller, (n_old + n_new) / chunk))
		goto cleanup;
	jit__print_calls(&j);
	err = 0;
cleanup:
	jit__destroy(&j);
	return err;
}

int scenario_many(const struct toy_opts *o)
{
	uint64_t n = o->methods, total = 0, start, i, k;
	struct toy_region *r;
	struct toy_jit j;
	struct x86_buf b;
	char name[TOY_NAME_MAX];
	int err = -1;

	if (jit__init(&j, n, o->instrument, o->sink))
		return -1;
	j.list_methods = false;
	r = jit__map(&j, n * MANY_FN_BYTES);
	if (!r)
		goto cleanup;
	x86__init(&b, r->mem, r->size);
	for (i = 0; i < n; i++) {
		struct toy_fn *fn;

		snprintf(name, sizeof(name), "many_%llu", (unsigned long long)i);
		fn = jit__fn(&j, name, false);
		if (!fn)
			goto cleanup;
		toyfn__begin(&b, fn);
		toyfn__spin(&b, 1, MANY_SPIN_ITERS, false);
		if (toyfn__end(&b, fn))
			goto cleanup;
	}
	if (jit__protect(r, true) || load_all(&j))
		goto cleanup;
	toy_out("methods %llu", (unsigned long long)n);

	start = toy_cpu_ns();
	i = 0;
	while (toy_cpu_ns() - start < o->ms * 1000000) {
		for (k = 0; k < MANY_CHECK_EVERY; k++) {
			toyfn__entry(&j.fns[i])(0);
			if (++i == n)
				i = 0;
		}
		total += MANY_CHECK_EVERY;
	}
	/* Round-robin from many_0: the first total % n functions ran once more. */
	for (i = 0; i < n; i++)
		if (expect_calls(&j.fns[i], total / n + (i < total % n)))
			goto cleanup;
	if (o->hold_ms) {
		toy_out("hold");
		toy_sleep_ms(o->hold_ms);
	}
	jit__print_calls(&j);
	err = 0;
cleanup:
	jit__destroy(&j);
	return err;
}

int scenario_idle(const struct toy_opts *o)
{
	struct toy_region *r;
	struct toy_fn *fn;
	struct toy_jit j;
	struct x86_buf b;
	int err = -1;

	if (jit__init(&j, 1, o->instrument, o->sink))
		return -1;
	r = jit__map(&j, FN_BYTES);
	fn = jit__fn(&j, "idle_fn", false);
	if (!r || !fn)
		goto cleanup;
	x86__init(&b, r->mem, r->size);
	toyfn__begin(&b, fn);
	if (toyfn__end(&b, fn) || jit__protect(r, true) || jit__load(&j, fn))
		goto cleanup;
	toyfn__entry(fn)(0);
	if (expect_calls(fn, 1))
		goto cleanup;
	toy_sleep_ms(o->ms);
	jit__print_calls(&j);
	err = 0;
cleanup:
	jit__destroy(&j);
	return err;
}

/* What block's JIT functions call: the sleep they were handed, as a C function. */
#define BLOCK_UNIT_MS 10	/* a unit of waiting */
#define BLOCK_SLOTS 16

/* The time spent in toy_block, by the ms asked: wait_a's and wait_b's, when they differ. */
static struct {
	uint64_t ms, ns;
} blocked[BLOCK_SLOTS];

static uint64_t toy_block(uint64_t ms)
{
	uint64_t t = toy_now_ns();
	int i;

	toy_sleep_ms(ms);
	for (i = 0; i < BLOCK_SLOTS && blocked[i].ms && blocked[i].ms != ms; i++)
		;
	if (i < BLOCK_SLOTS) {
		blocked[i].ms = ms;
		blocked[i].ns += toy_now_ns() - t;
	}
	return 0;
}

static uint64_t blocked_ns(uint64_t ms)
{
	int i;

	for (i = 0; i < BLOCK_SLOTS; i++)
		if (blocked[i].ms == ms)
			return blocked[i].ns;
	return 0;
}

/* A JIT function that waits ms: calls toy_block(ms) through its absolute address. */
static int emit_waiter(struct x86_buf *b, struct toy_fn *fn, uint32_t ms)
{
	toyfn__begin(b, fn);
	x86__mov_imm32(b, X86_RDI, ms);
	x86__call_abs(b, (uintptr_t)toy_block);
	return toyfn__end(b, fn);
}

int scenario_block(const struct toy_opts *o)
{
	uint32_t a_ms = o->ratio_a * BLOCK_UNIT_MS, b_ms = o->ratio_b * BLOCK_UNIT_MS;
	struct toy_fn *a, *bfn, *waiter;
	struct toy_region *r;
	uint64_t rounds;
	struct toy_jit j;
	struct x86_buf b;
	int err = -1;

	if (jit__init(&j, 3, o->instrument, o->sink))
		return -1;
	r = jit__map(&j, 3 * FN_BYTES);
	a = jit__fn(&j, "wait_a", false);
	bfn = jit__fn(&j, "wait_b", false);
	waiter = jit__fn(&j, "toy_waiter", false);
	if (!r || !a || !bfn || !waiter)
		goto cleanup;
	x86__init(&b, r->mem, r->size);
	if (emit_waiter(&b, a, a_ms) || emit_waiter(&b, bfn, b_ms) ||
	    emit_caller(&b, waiter, (struct toy_fn *const[]){ a, bfn }, 2, false) ||
	    jit__protect(r, true) || load_all(&j))
		goto cleanup;
	rounds = o->ms / (a_ms + b_ms);
	if (!rounds)
		rounds = 1;
	toy_out("block wait_a=%ums wait_b=%ums rounds=%llu", a_ms, b_ms,
		(unsigned long long)rounds);
	toyfn__entry(waiter)(rounds);
	if (expect_calls(waiter, 1) || expect_calls(a, rounds) || expect_calls(bfn, rounds))
		goto cleanup;
	if (a_ms != b_ms)	/* CLOCK_MONOTONIC around each sleep, summed */
		toy_out("blocked wait_a=%llu wait_b=%llu", (unsigned long long)blocked_ns(a_ms),
			(unsigned long long)blocked_ns(b_ms));
	jit__print_calls(&j);
	err = 0;
cleanup:
	jit__destroy(&j);
	return err;
}

/* One named thread of the threads scenario: calls its function until ms of its CPU passed. */
struct worker {
	const char *name;
	struct toy_fn *fn;
	uint64_t ms;
	uint64_t calls;
	pthread_t thread;
};

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t start;

	pthread_setname_np(pthread_self(), w->name);
	toy_out("thread %s tid=%d", w->name, (int)gettid());
	start = thread_cpu_ns();
	while (thread_cpu_ns() - start < w->ms * 1000000) {
		toyfn__entry(w->fn)(0);
		w->calls++;
	}
	return NULL;
}

int scenario_threads(const struct toy_opts *o)
{
	struct worker w[2] = { { .name = "worker-a" }, { .name = "worker-b" } };
	struct toy_region *r;
	struct toy_jit j;
	struct x86_buf b;
	struct unit u;
	int err = -1, i, started = 0;

	if (jit__init(&j, 3, o->instrument, o->sink))
		return -1;
	if (calibrate(&j, &u))
		goto cleanup;
	r = jit__map(&j, 2 * FN_BYTES);
	w[0].fn = jit__fn(&j, "work_a", false);
	w[1].fn = jit__fn(&j, "work_b", false);
	if (!r || !w[0].fn || !w[1].fn)
		goto cleanup;
	x86__init(&b, r->mem, r->size);
	for (i = 0; i < 2; i++) {
		toyfn__begin(&b, w[i].fn);
		toyfn__spin(&b, 1, u.iters, true);
		if (toyfn__end(&b, w[i].fn))
			goto cleanup;
	}
	if (jit__protect(r, true) || load_all(&j))
		goto cleanup;
	for (i = 0; i < 2; i++, started++) {
		w[i].ms = o->ms;
		if (pthread_create(&w[i].thread, NULL, work, &w[i])) {
			toy_err("pthread_create: out of resources");
			break;
		}
	}
	for (i = 0; i < started; i++)
		pthread_join(w[i].thread, NULL);
	if (started < 2 || expect_calls(w[0].fn, w[0].calls) ||
	    expect_calls(w[1].fn, w[1].calls))
		goto cleanup;
	jit__print_calls(&j);
	err = 0;
cleanup:
	jit__destroy(&j);
	return err;
}

