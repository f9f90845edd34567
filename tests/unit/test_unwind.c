// SPDX-License-Identifier: GPL-2.0
/*
 * Stack walks (user/host/unwind.h) over real stacks of this process, captured as the BPF side
 * will: the registers and a copy of the stack from sp. Inside a comparator that glibc's
 * qsort_r calls, inside functions built without frame pointers (one using rbp as a plain
 * register), and in threads blocked in nanosleep and pthread_cond_wait (caught there by a
 * signal, whose context holds the registers as a context switch leaves them). Every walk is
 * named through the files' symbols and compared with the chain the code makes, and with what
 * the kernel's frame-pointer walk gives. Then frame pointers over a synthetic JIT stack,
 * slices, limits and the splice of the two walks.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ucontext.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/cfi.h"
#include "host/elfsyms.h"
#include "host/unwind.h"
#include "base/util.h"

#define COPY_MAX (256u << 10)	/* the most of a stack copied */
#define MAX_IPS 128
#define NOFP __attribute__((noipa, optimize("omit-frame-pointer")))

/* What the BPF side hands over: the registers and a copy of the stack from sp. */
struct capture {
	struct jt_unwind_regs regs;
	uint64_t stack_end;	/* the end of the mapping that holds the stack: copied up to it */
	size_t len;
	uint8_t *stack;		/* COPY_MAX bytes */
	pid_t tid;
	atomic_int ready;	/* the thread is about to block */
	atomic_int done;	/* captured */
};

/* Read from the stack as the kernel would, not as C: ASan's red zones are in there. */
__attribute__((noinline, no_sanitize_address)) static void copy_stack(struct capture *cap)
{
	const volatile uint8_t *src = (const volatile uint8_t *)(uintptr_t)cap->regs.sp;
	size_t i, len = cap->stack_end - cap->regs.sp;

	if (len > COPY_MAX)
		len = COPY_MAX;
	for (i = 0; i < len; i++)
		cap->stack[i] = src[i];
	cap->len = len;
}

/* The registers of the function this expands in, as they are at this instruction. */
#define CAPTURE_REGS(cap)                                                                   \
	asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"                  \
		     : "=&r"((cap)->regs.ip), "=&r"((cap)->regs.sp), "=&r"((cap)->regs.bp))

/* The end of the mapping that holds addr (a stack), from /proc/self/maps. */
static uint64_t mapping_end(uint64_t addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long long s, e, end = 0;
	char line[640];

	while (f && !end && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &s, &e) == 2 && addr >= s && addr < e)
			end = e;
	if (f)
		fclose(f);
	return end;
}

/* This thread's stack, from its frame (a local's address may be ASan's fake stack). */
#define STACK_END() mapping_end((uintptr_t)__builtin_frame_address(0))

static struct capture *capture_new(void)
{
	struct capture *cap = calloc(1, sizeof(*cap));

	assert_non_null(cap);
	cap->stack = malloc(COPY_MAX);
	assert_non_null(cap->stack);
	cap->stack_end = STACK_END();
	assert_true(cap->stack_end > (uintptr_t)__builtin_frame_address(0));
	return cap;
}

static void capture_free(struct capture *cap)
{
	free(cap->stack);
	free(cap);
}

/* ---- where code is: the process's mappings, each file's CFI and symbols ---- */

struct file {
	char path[256];
	struct jt_cfi *cfi;
	struct jt_elfsyms *syms;
	bool debug;	/* named from its debug file too: static functions have names */
};

struct map {
	uint64_t start, end, pgoff;
	struct file *file;	/* NULL: anonymous ([vdso], JIT code) */
};

struct proc {
	struct map maps[512];
	size_t nr_maps;
	struct file files[32];
	size_t nr_files;
	bool fp_only;	/* the kernel's walk: no CFI anywhere */
	/* JIT code [rule_start, rule_end) whose runtime gives its frame's rule (a frame size) */
	uint64_t rule_start, rule_end;
	struct jt_cfi_rule rule;
	/* JIT code [interp_start, interp_end) that keeps its caller's sp at bp + sender_off */
	uint64_t interp_start, interp_end;
	int32_t sender_off;
};

/* The separate debug file of the file at fd (libc6-dbg's, by build id) open, or -1. */
static int open_debug(int fd)
{
	char id[128], path[320];

	if (jt_elfsyms__build_id(fd, id, sizeof(id)) < 2)
		return -1;
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	return open(path, O_RDONLY);
}

static struct file *file_of(struct proc *p, const char *path)
{
	struct file *f;
	size_t i;
	int fd, dfd, err;

	for (i = 0; i < p->nr_files; i++)
		if (!strcmp(p->files[i].path, path))
			return &p->files[i];
	assert_true(p->nr_files < 32);
	f = &p->files[p->nr_files++];
	snprintf(f->path, sizeof(f->path), "%s", path);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return f;
	f->cfi = jt_cfi__load(fd, &err);
	dfd = open_debug(fd);
	f->debug = dfd >= 0;
	f->syms = jt_elfsyms__load(fd, dfd, &err);
	if (dfd >= 0)
		close(dfd);
	close(fd);
	return f;
}

/* This process's executable mappings, read now (after a capture, the thread still there). */
static struct proc *proc_read(void)
{
	struct proc *p = calloc(1, sizeof(*p));
	FILE *f = fopen("/proc/self/maps", "r");
	char line[640];

	assert_non_null(p);
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && p->nr_maps < 512) {
		unsigned long long s, e, off;
		char perms[8];
		int n = 0;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &n) != 4 ||
		    perms[2] != 'x')
			continue;
		line[strcspn(line, "\n")] = '\0';
		p->maps[p->nr_maps++] = (struct map){
			s, e, off, n && line[n] == '/' ? file_of(p, line + n) : NULL
		};
	}
	fclose(f);
	return p;
}

static void proc_free(struct proc *p)
{
	size_t i;

	for (i = 0; i < p->nr_files; i++) {
		jt_cfi__free(p->files[i].cfi);
		if (p->files[i].syms)
			jt_elfsyms__free(p->files[i].syms);
	}
	free(p);
}

static const struct map *map_of(const struct proc *p, uint64_t ip)
{
	size_t i;

	for (i = 0; i < p->nr_maps; i++)
		if (ip >= p->maps[i].start && ip < p->maps[i].end)
			return &p->maps[i];
	return NULL;
}

static bool find(void *ctx, uint64_t ip, bool leaf, struct jt_unwind_code *code)
{
	const struct proc *p = ctx;
	const struct map *m = map_of(p, ip);

	(void)leaf;
	if (!m)
		return false;
	if (ip >= p->rule_start && ip < p->rule_end) {
		code->has_rule = true;
		code->rule = p->rule;
	}
	if (ip >= p->interp_start && ip < p->interp_end) {
		code->sender_sp = true;
		code->sender_sp_off = p->sender_off;
	}
	code->cfi = m->file && !p->fp_only ? m->file->cfi : NULL;
	code->off = ip - m->start + m->pgoff;
	return true;
}

/* Frame i's function (a return address names the call before it), or "?". */
static const char *name_of(const struct proc *p, const uint64_t *ips, unsigned int i)
{
	uint64_t ip = ips[i] - (i > 0);
	const struct map *m = map_of(p, ip);
	const struct jt_sym *s;
	size_t idx;

	if (!m || !m->file || !m->file->syms)
		return "?";
	s = jt_elfsyms__find(m->file->syms, ip - m->start + m->pgoff, &idx);
	return s ? s->name : "?";
}

static void chain_str(const struct proc *p, const uint64_t *ips, unsigned int n, char *buf,
		      size_t cap)
{
	size_t len = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < n && len < cap; i++)
		len += snprintf(buf + len, cap - len, "%s%s", i ? " <- " : "", name_of(p, ips, i));
}

/*
 * Frame i's name matches one of the alternatives in want ("a|b"). "~a": a static function,
 * named only from its file's debug symbols: "?" where the file has none (no libc6-dbg).
 * "*": any frame.
 */
static bool frame_is(const struct proc *p, const uint64_t *ips, unsigned int i, const char *want)
{
	const char *name = name_of(p, ips, i);
	const struct map *m = map_of(p, ips[i] - (i > 0));
	size_t n = strlen(name);

	if (!strcmp(want, "*"))
		return true;	/* a frame of a library this does not test (cmocka's runner) */
	if (want[0] == '~') {
		want++;
		if (m && m->file && !m->file->debug)
			return !strcmp(name, "?");
	}

	for (;;) {
		const char *bar = strchr(want, '|');
		size_t w = bar ? (size_t)(bar - want) : strlen(want);

		if (w == n && !strncmp(name, want, n))
			return true;
		if (!bar)
			return false;
		want = bar + 1;
	}
}

/* The frames of ips are exactly want[0..nr) by name. */
static bool chain_is(const struct proc *p, const uint64_t *ips, unsigned int n,
		     const char *const *want, unsigned int nr)
{
	unsigned int i;

	if (n != nr)
		return false;
	for (i = 0; i < nr; i++)
		if (!frame_is(p, ips, i, want[i]))
			return false;
	return true;
}

/* Some frame of ips is named name. */
static bool chain_has(const struct proc *p, const uint64_t *ips, unsigned int n, const char *name)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!strcmp(name_of(p, ips, i), name))
			return true;
	return false;
}

static const char *end_str(enum jt_unwind_end end)
{
	switch (end) {
	case JT_UNWIND_OUTERMOST:
		return "outermost";
	case JT_UNWIND_SLICE:
		return "slice";
	case JT_UNWIND_LOST:
		return "lost";
	case JT_UNWIND_MAX_FRAMES:
		return "max frames";
	}
	return "?";
}

/* The walk of a capture; with fp_only, the kernel's frame-pointer walk of it. */
static unsigned int walk(struct proc *p, const struct capture *cap, size_t len, bool fp_only,
			 uint64_t *ips, unsigned int max, enum jt_unwind_end *end,
			 struct jt_unwind_regs *last)
{
	struct jt_unwind_regs regs = cap->regs;
	unsigned int n;

	p->fp_only = fp_only;
	n = jt_unwind(&regs, cap->stack, cap->regs.sp, len, find, p, ips, NULL, max, end);
	p->fp_only = false;
	if (last)
		*last = regs;
	return n;
}

/*
 * The unwind of cap is want[0..nr), from the leaf to the thread's start, the stack's end;
 * the kernel's frame-pointer walk of the same copy misses want[miss].
 */
static void check_capture(const struct capture *ccap, const char *const *want, unsigned int nr,
			  unsigned int miss)
{
	struct capture *cap = (struct capture *)ccap;
	uint64_t ips[MAX_IPS], fp[MAX_IPS];
	enum jt_unwind_end end, fp_end;
	struct proc *p = proc_read();
	unsigned int n, nr_fp;
	char s[4096], s_fp[4096];

	n = walk(p, cap, cap->len, false, ips, MAX_IPS, &end, NULL);
	nr_fp = walk(p, cap, cap->len, true, fp, MAX_IPS, &fp_end, NULL);
	chain_str(p, ips, n, s, sizeof(s));
	chain_str(p, fp, nr_fp, s_fp, sizeof(s_fp));
	print_message("unwound (%s): %s\n", end_str(end), s);
	print_message("frame pointers only (%s): %s\n", end_str(fp_end), s_fp);
	if (end != JT_UNWIND_OUTERMOST || !chain_is(p, ips, n, want, nr))
		fail_msg("unwound (%s): %s", end_str(end), s);
	/* what this is for: the kernel's walk loses frames here */
	assert_int_equal(fp[0], ips[0]);
	if (chain_has(p, fp, nr_fp, want[miss]))
		fail_msg("the frame-pointer walk has %s: %s", want[miss], s_fp);
	proc_free(p);
}

/* How every stack of the main thread here ends: cmocka's runner, then the program's start. */
#define MAIN_THREAD_START "*", "_cmocka_run_group_tests", "main", "~__libc_start_call_main", \
		"__libc_start_main", "_start"

/* ---- a comparator called by glibc's qsort_r (msort, built without frame pointers) ---- */

__attribute__((noinline, used)) int jt_test_compare_capture(const void *a, const void *b,
							      void *arg)
{
	struct capture *cap = arg;

	if (!atomic_load(&cap->done)) {
		CAPTURE_REGS(cap);
		copy_stack(cap);
		atomic_store(&cap->done, 1);
	}
	return *(const int *)a - *(const int *)b;
}

typedef void qsort_r_fn(void *, size_t, size_t, int (*)(const void *, const void *, void *),
			void *);

/* glibc's qsort_r itself: under ASan, qsort_r is the sanitizer's, which calls the comparator */
static qsort_r_fn *libc_qsort_r(void)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), *sym;

	assert_non_null(h);
	sym = dlsym(h, "qsort_r");
	dlclose(h);
	assert_non_null(sym);
	return (qsort_r_fn *)sym;
}

__attribute__((noinline, used)) int jt_test_sort_and_capture(qsort_r_fn *sort,
							       struct capture *cap)
{
	int v[2] = { 2, 1 };

	sort(v, 2, sizeof(v[0]), jt_test_compare_capture, cap);
	return v[0] * 10 + v[1];
}

static void comparator_called_by_qsort_r_unwinds_to_start(void **state)
{
	static const char *const want[] = {
		"jt_test_compare_capture", "~msort_with_tmp.part.0", "qsort_r",
		"jt_test_sort_and_capture", "comparator_called_by_qsort_r_unwinds_to_start",
		MAIN_THREAD_START,
	};
	struct capture *cap = capture_new();

	(void)state;
	assert_int_equal(jt_test_sort_and_capture(libc_qsort_r(), cap), 12);
	assert_true(cap->done);
	check_capture(cap, want, JT_ARRAY_SIZE(want), 3);
	capture_free(cap);
}

/* ---- functions built without frame pointers, the leaf using rbp as a plain register ---- */

NOFP int jt_test_nofp_inner(struct capture *cap)
{
	/* as pthread_cond_wait does: rbp saved (CFI says where), then a value of its own */
	asm volatile("mov $0x1234567, %%rbp\n\t"
		     "lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
		     : "=&r"(cap->regs.ip), "=&r"(cap->regs.sp), "=&r"(cap->regs.bp)
		     :
		     : "rbp");
	copy_stack(cap);
	return cap->regs.bp == 0x1234567;
}

NOFP int jt_test_nofp_outer(struct capture *cap)
{
	return jt_test_nofp_inner(cap) + 1;
}

__attribute__((noinline, used)) int jt_test_fp_caller(struct capture *cap)
{
	return jt_test_nofp_outer(cap) * 3;
}

static void functions_without_frame_pointers_unwind_through_cfi(void **state)
{
	static const char *const want[] = {
		"jt_test_nofp_inner", "jt_test_nofp_outer", "jt_test_fp_caller",
		"functions_without_frame_pointers_unwind_through_cfi", MAIN_THREAD_START,
	};
	struct capture *cap = capture_new();

	(void)state;
	assert_int_equal(jt_test_fp_caller(cap), 6);
	check_capture(cap, want, JT_ARRAY_SIZE(want), 1);
	capture_free(cap);
}

/* ---- a call as a function's last instruction: its return address is the next function ---- */

NOFP __attribute__((noreturn)) void jt_test_capture_and_jump(struct capture *cap, jmp_buf *jb)
{
	CAPTURE_REGS(cap);
	copy_stack(cap);
	longjmp(*jb, 1);
}

NOFP void jt_test_ends_in_a_call(struct capture *cap, jmp_buf *jb)
{
	/* rbp no frame pointer: a lookup at the return address itself would go wrong */
	asm volatile("mov $0x1234567, %%rbp" ::: "rbp");
	jt_test_capture_and_jump(cap, jb);
}

static void a_call_that_does_not_return_is_looked_up_at_the_call(void **state)
{
	static const char *const want[] = {
		"jt_test_capture_and_jump", "jt_test_ends_in_a_call",
		"a_call_that_does_not_return_is_looked_up_at_the_call", MAIN_THREAD_START,
	};
	struct capture *cap = capture_new();
	jmp_buf jb;

	(void)state;
	if (!setjmp(jb))
		jt_test_ends_in_a_call(cap, &jb);
	check_capture(cap, want, JT_ARRAY_SIZE(want), 1);
	capture_free(cap);
}

/* ---- threads blocked in the kernel, caught by a signal as a context switch would ---- */

/* The signal's context is the thread's user state in the syscall: what BPF will read. */
static void on_signal(int sig, siginfo_t *si, void *uc_)
{
	struct capture *cap = si->si_value.sival_ptr;
	const ucontext_t *uc = uc_;

	(void)sig;
	cap->regs.ip = uc->uc_mcontext.gregs[REG_RIP];
	cap->regs.sp = uc->uc_mcontext.gregs[REG_RSP];
	cap->regs.bp = uc->uc_mcontext.gregs[REG_RBP];
	copy_stack(cap);
	atomic_store(&cap->done, 1);
}

/* As a program's wait_long(): no frame pointer, nanosleep's caller. */
NOFP void jt_test_wait_long(atomic_int *done)
{
	while (!atomic_load(done))
		nanosleep(&(struct timespec){ 10, 0 }, NULL);
}

__attribute__((noinline, used)) void *jt_test_sleeper(void *arg)
{
	struct capture *cap = arg;

	cap->tid = gettid();
	cap->stack_end = STACK_END();
	atomic_store(&cap->ready, 1);
	jt_test_wait_long(&cap->done);
	return cap;
}

/* A mutex, a condition and a flag: what the waiter waits on. */
struct cond {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool go;
	struct capture *cap;
};

NOFP void jt_test_wait_cond(struct cond *c)
{
	pthread_mutex_lock(&c->lock);
	while (!c->go)
		pthread_cond_wait(&c->cond, &c->lock);
	pthread_mutex_unlock(&c->lock);
}

__attribute__((noinline, used)) void *jt_test_waiter(void *arg)
{
	struct cond *c = arg;

	c->cap->tid = gettid();
	c->cap->stack_end = STACK_END();
	atomic_store(&c->cap->ready, 1);
	jt_test_wait_cond(c);
	return c;
}

/* Whether thread tid sleeps in the kernel ('S' in its stat). */
static bool sleeping(pid_t tid)
{
	char path[64], buf[512], *paren;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return paren && paren[1] == ' ' && paren[2] == 'S';
}

/* Once the thread th has blocked, signal it and wait for its capture. */
static void catch_blocked(pthread_t th, struct capture *cap)
{
	struct sigaction sa = { .sa_sigaction = on_signal, .sa_flags = SA_SIGINFO }, old;
	int i;

	assert_int_equal(sigaction(SIGUSR1, &sa, &old), 0);
	for (i = 0; i < 5000 && !(atomic_load(&cap->ready) && sleeping(cap->tid)); i++)
		usleep(1000);
	assert_true(i < 5000);
	usleep(20000);	/* 'S' already, but let it settle into its wait */
	assert_true(sleeping(cap->tid));
	assert_int_equal(pthread_sigqueue(th, SIGUSR1, (union sigval){ .sival_ptr = cap }), 0);
	for (i = 0; i < 5000 && !atomic_load(&cap->done); i++)
		usleep(1000);
	assert_true(atomic_load(&cap->done));
	assert_int_equal(sigaction(SIGUSR1, &old, NULL), 0);
}

static void thread_blocked_in_nanosleep_unwinds_to_its_start(void **state)
{
	static const char *const want[] = {
		"clock_nanosleep", "nanosleep|__nanosleep", "jt_test_wait_long", "jt_test_sleeper",
		"~start_thread", "~clone3|__clone3|__GI___clone3",
	};
	struct capture *cap = capture_new();
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, jt_test_sleeper, cap), 0);
	catch_blocked(th, cap);
	check_capture(cap, want, JT_ARRAY_SIZE(want), 2);
	assert_int_equal(pthread_join(th, NULL), 0);
	capture_free(cap);
}

static void thread_blocked_in_pthread_cond_wait_unwinds_to_its_start(void **state)
{
	static const char *const want[] = {
		"~__futex_abstimed_wait_common", "pthread_cond_wait", "jt_test_wait_cond",
		"jt_test_waiter", "~start_thread", "~clone3|__clone3|__GI___clone3",
	};
	struct cond c = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false, NULL };
	pthread_t th;

	(void)state;
	c.cap = capture_new();
	assert_int_equal(pthread_create(&th, NULL, jt_test_waiter, &c), 0);
	catch_blocked(th, c.cap);
	check_capture(c.cap, want, JT_ARRAY_SIZE(want), 2);
	pthread_mutex_lock(&c.lock);
	c.go = true;
	pthread_cond_signal(&c.cond);
	pthread_mutex_unlock(&c.lock);
	assert_int_equal(pthread_join(th, NULL), 0);
	capture_free(c.cap);
}

/* ---- a synthetic JIT stack: code without CFI, built with frame pointers ---- */

#define JIT_START 0x100000000ull	/* JIT code here: in no file, so no CFI */
#define JIT_END (JIT_START + 0x10000)
#define SYN_BASE 0x7f0000100000ull	/* the user address the copy was taken from */

/*
 * clock_nanosleep (glibc: CFI, no frame pointer) called from JIT frames j1 <- j2 <- j3 <- j4,
 * j4 the outermost (its rbp 0, as _start leaves it): a JIT runtime blocking in libc.
 */
struct synth {
	uint64_t words[32];
	struct jt_unwind_regs regs;
	uint64_t ips[5];	/* the walk it makes: leaf, j1, j2, j3, j4 */
};

static void synth_put(struct synth *s, uint64_t addr, uint64_t v)
{
	s->words[(addr - SYN_BASE) / 8] = v;
}

static void synth_make(struct synth *s)
{
	uint64_t bp1 = SYN_BASE + 0x30, bp2 = SYN_BASE + 0x70, bp3 = SYN_BASE + 0xb0;
	uint64_t leaf = (uintptr_t)clock_nanosleep;	/* its first instruction: CFA = rsp + 8 */
	uint64_t j1 = JIT_START + 0x110, j2 = JIT_START + 0x220, j3 = JIT_START + 0x330;
	uint64_t j4 = JIT_START + 0x440;

	memset(s, 0, sizeof(*s));
	synth_put(s, SYN_BASE, j1);	/* the call into clock_nanosleep pushed it */
	synth_put(s, bp1, bp2);
	synth_put(s, bp1 + 8, j2);
	synth_put(s, bp2, bp3);
	synth_put(s, bp2 + 8, j3);
	synth_put(s, bp3, 0);
	synth_put(s, bp3 + 8, j4);
	s->regs = (struct jt_unwind_regs){ leaf, SYN_BASE, bp1 };
	memcpy(s->ips, (uint64_t[]){ leaf, j1, j2, j3, j4 }, sizeof(s->ips));
}

/* This process's mappings and the JIT code's. */
static struct proc *proc_with_jit(void)
{
	struct proc *p = proc_read();

	assert_null(map_of(p, JIT_START));
	assert_null(map_of(p, JIT_END - 1));
	assert_true(p->nr_maps < 512);
	p->maps[p->nr_maps++] = (struct map){ JIT_START, JIT_END, 0, NULL };
	return p;
}

static unsigned int synth_walk_bps(struct proc *p, const struct synth *s, size_t len,
				   bool fp_only, uint64_t *ips, uint64_t *bps, unsigned int max,
				   enum jt_unwind_end *end, struct jt_unwind_regs *last)
{
	*last = s->regs;
	p->fp_only = fp_only;
	max = jt_unwind(last, s->words, SYN_BASE, len, find, p, ips, bps, max, end);
	p->fp_only = false;
	return max;
}

static unsigned int synth_walk(struct proc *p, const struct synth *s, size_t len, bool fp_only,
			       uint64_t *ips, unsigned int max, enum jt_unwind_end *end,
			       struct jt_unwind_regs *last)
{
	return synth_walk_bps(p, s, len, fp_only, ips, NULL, max, end, last);
}

static void frame_pointers_where_code_has_no_cfi(void **state)
{
	struct proc *p = proc_with_jit();
	struct jt_unwind_regs last;
	enum jt_unwind_end end;
	uint64_t ips[16];
	struct synth s;
	unsigned int n;

	(void)state;
	synth_make(&s);
	n = synth_walk(p, &s, sizeof(s.words), false, ips, 16, &end, &last);
	assert_int_equal(end, JT_UNWIND_OUTERMOST);
	assert_int_equal(n, 5);
	assert_memory_equal(ips, s.ips, sizeof(s.ips));
	assert_string_equal(name_of(p, ips, 0), "clock_nanosleep");
	assert_int_equal(last.ip, s.ips[4]);
	assert_int_equal(last.bp, 0);

	/* the kernel's walk loses j1: clock_nanosleep pushed no rbp, rbp is j1's frame */
	n = synth_walk(p, &s, sizeof(s.words), true, ips, 16, &end, &last);
	assert_int_equal(end, JT_UNWIND_OUTERMOST);
	assert_int_equal(n, 4);
	assert_memory_equal(ips, ((uint64_t[]){ s.ips[0], s.ips[2], s.ips[3], s.ips[4] }),
			    4 * sizeof(uint64_t));
	proc_free(p);
}

static void a_short_copy_ends_in_a_slice_that_splices_with_the_kernel_walk(void **state)
{
	uint64_t ips[16], fp[16], out[16];
	struct proc *p = proc_with_jit();
	struct jt_unwind_regs last;
	enum jt_unwind_end end, fp_end;
	unsigned int n, nr_fp, nr_out;
	struct synth s;
	size_t len;

	(void)state;
	synth_make(&s);
	nr_fp = synth_walk(p, &s, sizeof(s.words), true, fp, 16, &fp_end, &last);
	assert_int_equal(nr_fp, 4);

	/* j2's frame is not in the first 0x40 bytes */
	n = synth_walk(p, &s, 0x40, false, ips, 16, &end, &last);
	assert_int_equal(end, JT_UNWIND_SLICE);
	assert_int_equal(n, 3);
	assert_memory_equal(ips, s.ips, 3 * sizeof(uint64_t));
	assert_int_equal(last.ip, s.ips[2]);	/* the frame it stopped at, to go on from */
	assert_int_equal(last.sp, SYN_BASE + 0x40);
	assert_int_equal(last.bp, SYN_BASE + 0x70);
	nr_out = jt_unwind__splice(ips, n, end, fp, nr_fp, out, 16);
	assert_int_equal(nr_out, 5);
	assert_memory_equal(out, s.ips, sizeof(s.ips));	/* j1 back, the rest from the kernel */
	assert_int_equal(jt_unwind__splice(ips, n, end, fp, nr_fp, out, 4), 4);

	/* cut anywhere: a prefix of the whole walk, a slice until the copy holds it all */
	for (len = 0; len <= sizeof(s.words); len++) {
		n = synth_walk(p, &s, len, false, ips, 16, &end, &last);
		assert_true(n >= 1 && n <= 5);
		assert_memory_equal(ips, s.ips, n * sizeof(uint64_t));
		assert_int_equal(last.ip, ips[n - 1]);
		if (end != JT_UNWIND_SLICE) {
			assert_int_equal(end, JT_UNWIND_OUTERMOST);
			assert_int_equal(n, 5);
			assert_true(len >= 0xc0);
		}
		nr_out = jt_unwind__splice(ips, n, end, fp, nr_fp, out, 16);
		if (n == 1) {	/* not even the leaf stepped: the kernel's walk as it is */
			assert_int_equal(nr_out, nr_fp);
			assert_memory_equal(out, fp, nr_fp * sizeof(uint64_t));
		} else if (n == 2) {	/* stopped in j1, which the kernel's walk lacks */
			assert_int_equal(nr_out, 2);
			assert_memory_equal(out, s.ips, 2 * sizeof(uint64_t));
		} else {
			assert_int_equal(nr_out, 5);
			assert_memory_equal(out, s.ips, sizeof(s.ips));
		}
	}
	proc_free(p);
}

static void a_real_copy_cut_anywhere_gives_a_prefix(void **state)
{
	uint64_t full[MAX_IPS], ips[MAX_IPS];
	struct capture *cap = capture_new();
	struct jt_unwind_regs last;
	enum jt_unwind_end end;
	unsigned int n, nr_full, slices = 0;
	struct proc *p;
	size_t len;

	(void)state;
	assert_int_equal(jt_test_fp_caller(cap), 6);
	p = proc_read();
	nr_full = walk(p, cap, cap->len, false, full, MAX_IPS, &end, NULL);
	assert_int_equal(end, JT_UNWIND_OUTERMOST);
	for (len = 0; len <= cap->len; len += 4) {
		n = walk(p, cap, len, false, ips, MAX_IPS, &end, &last);
		assert_true(n >= 1 && n <= nr_full);
		assert_memory_equal(ips, full, n * sizeof(uint64_t));
		assert_int_equal(last.ip, ips[n - 1]);
		if (end == JT_UNWIND_SLICE)
			slices++;
		else
			assert_int_equal(n, nr_full);
	}
	assert_true(slices > 0);
	assert_int_equal(walk(p, cap, cap->len, false, ips, 3, &end, &last), 3);
	assert_int_equal(end, JT_UNWIND_MAX_FRAMES);
	assert_int_equal(last.ip, full[2]);
	proc_free(p);
	capture_free(cap);
}

/*
 * A JIT code body without frame pointer whose runtime gives its frame's size (as HotSpot's
 * nmethods): the walk steps it by that rule, then the JIT frames by their frame pointers.
 * In an epilogue, after rbp was popped, CFI still says rbp is saved in a slot now below the
 * stack pointer: the register holds the caller's value again, and the walk goes on with it.
 */
static void a_jit_rule_steps_a_frameless_body_and_a_popped_rbp_is_the_callers(void **state)
{
	struct proc *p = proc_with_jit();
	uint64_t body = JIT_START + 0x800, ips[16];
	struct jt_unwind_regs last;
	enum jt_unwind_end end;
	struct synth s;
	unsigned int n;

	(void)state;
	p->rule_start = body;
	p->rule_end = body + 0x100;
	/* frame size 32: CFA = rsp + 32, the return address below it, rbp untouched */
	p->rule = (struct jt_cfi_rule){ .cfa_reg = JT_CFI_SP, .cfa_off = 32, .ra_off = -8 };
	synth_make(&s);
	synth_put(&s, SYN_BASE + 0x18, s.ips[1]);	/* the call into the body pushed j1 */
	s.regs.ip = s.ips[0] = body + 0x10;
	n = synth_walk(p, &s, sizeof(s.words), false, ips, 16, &end, &last);
	assert_int_equal(end, JT_UNWIND_OUTERMOST);
	assert_int_equal(n, 5);
	assert_memory_equal(ips, s.ips, sizeof(s.ips));

	/* the same frame in its epilogue: rbp's slot (CFA - 40) is below rsp, popped */
	p->rule.bp_saved = true;
	p->rule.bp_off = -40;
	n = synth_walk(p, &s, sizeof(s.words), false, ips, 16, &end, &last);
	assert_int_equal(end, JT_UNWIND_OUTERMOST);
	assert_int_equal(n, 5);
	assert_memory_equal(ips, s.ips, sizeof(s.ips));

	/* by frame pointers alone the body's caller j1 is lost, as the kernel's walk loses it */
	p->rule_end = p->rule_start;
	n = synth_walk(p, &s, sizeof(s.words), false, ips, 16, &end, &last);
	assert_int_equal(n, 4);
	assert_int_equal(ips[1], s.ips[2]);
	proc_free(p);
}

/*
 * HotSpot's interpreter (frame pointers) called from compiled code through an adapter that
 * extended the caller's frame: the caller's sp is the sender sp the interpreted frame keeps
 * at bp - 8, which the caller's frame size counts from, not bp + 16. Each frame's bp is
 * given for the interpreted frame's method, kept at its bp.
 */
static void an_interpreted_frame_returns_to_its_sender_sp(void **state)
{
	struct proc *p = proc_with_jit();
	uint64_t interp = JIT_START + 0x900, comp = JIT_START + 0x800, ips[16], bps[16];
	uint64_t fp = SYN_BASE + 0x40, sender = SYN_BASE + 0x80, bp_out = SYN_BASE + 0xe8;
	struct jt_unwind_regs last;
	enum jt_unwind_end end;
	struct synth s;
	unsigned int n;

	(void)state;
	p->interp_start = interp;
	p->interp_end = interp + 0x100;
	p->sender_off = -8;
	p->rule_start = comp;
	p->rule_end = comp + 0x100;
	/* the compiled caller: frame size 4 words, its rbp saved below the return address */
	p->rule = (struct jt_cfi_rule){ .cfa_reg = JT_CFI_SP, .cfa_off = 32, .bp_saved = true,
					.bp_off = -16, .ra_off = -8 };
	memset(&s, 0, sizeof(s));
	synth_put(&s, fp - 8, sender);		/* 0x40 past bp + 16: the adapter's */
	synth_put(&s, fp, 0x5a5a);		/* the compiled caller keeps no frame pointer */
	synth_put(&s, fp + 8, comp + 0x21);	/* the interpreted frame's return address */
	synth_put(&s, sender + 0x10, bp_out);	/* the compiled frame's saved rbp */
	synth_put(&s, sender + 0x18, JIT_START + 0x331);	/* ... and return address */
	synth_put(&s, bp_out, 0);		/* j3: the outermost, by frame pointers */
	synth_put(&s, bp_out + 8, JIT_START + 0x441);
	s.regs = (struct jt_unwind_regs){ interp + 0x10, SYN_BASE, fp };
	n = synth_walk_bps(p, &s, sizeof(s.words), false, ips, bps, 16, &end, &last);
	assert_int_equal(end, JT_UNWIND_OUTERMOST);
	assert_int_equal(n, 4);
	assert_memory_equal(ips, ((uint64_t[]){ interp + 0x10, comp + 0x21, JIT_START + 0x331,
						 JIT_START + 0x441 }), 4 * sizeof(uint64_t));
	assert_memory_equal(bps, ((uint64_t[]){ fp, 0x5a5a, bp_out, 0 }), 4 * sizeof(uint64_t));

	/* a sender sp below the frame's own return address is no sender's: lost */
	synth_put(&s, fp - 8, fp + 8);
	n = synth_walk(p, &s, sizeof(s.words), false, ips, 16, &end, &last);
	assert_int_equal(end, JT_UNWIND_LOST);
	assert_int_equal(n, 1);
	/* nor one that would need a rule besides: the sender sp goes with frame pointers */
	synth_put(&s, fp - 8, sender);
	p->rule_start = interp;
	p->rule_end = interp + 0x100;
	n = synth_walk(p, &s, sizeof(s.words), false, ips, 16, &end, &last);
	assert_int_equal(end, JT_UNWIND_LOST);
	assert_int_equal(n, 1);
	proc_free(p);
}

static void bad_frames_end_the_walk_lost(void **state)
{
	uint64_t ips[16], out[16], fp[3] = { 1, 2, 3 };
	struct proc *p = proc_with_jit();
	struct jt_unwind_regs last;
	enum jt_unwind_end end;
	struct synth s;
	unsigned int n;

	(void)state;
	/* a return address into nothing mapped: the walk stops at the frame before */
	synth_make(&s);
	synth_put(&s, SYN_BASE + 0x38, 0x5);
	n = synth_walk(p, &s, sizeof(s.words), false, ips, 16, &end, &last);
	assert_int_equal(end, JT_UNWIND_LOST);
	assert_int_equal(n, 2);
	assert_int_equal(last.ip, s.ips[1]);
	assert_int_equal(jt_unwind__splice(ips, n, end, fp, 3, out, 16), 2);

	/* a frame pointer that points at itself: the stack pointer stops growing */
	synth_make(&s);
	synth_put(&s, SYN_BASE + 0x70, SYN_BASE + 0x70);
	n = synth_walk(p, &s, sizeof(s.words), false, ips, 16, &end, &last);
	assert_int_equal(end, JT_UNWIND_LOST);
	assert_int_equal(n, 4);

	/* rbp not a frame pointer: misaligned, below sp */
	synth_make(&s);
	synth_put(&s, SYN_BASE + 0x30, SYN_BASE + 0x71);
	n = synth_walk(p, &s, sizeof(s.words), false, ips, 16, &end, &last);
	assert_int_equal(end, JT_UNWIND_LOST);
	assert_int_equal(n, 3);
	synth_make(&s);
	s.regs.bp = SYN_BASE - 0x100;
	n = synth_walk(p, &s, sizeof(s.words), false, ips, 16, &end, &last);
	assert_int_equal(end, JT_UNWIND_LOST);
	assert_int_equal(n, 2);

	/* a leaf in nothing mapped: lost at the first step, and the kernel's walk is kept */
	synth_make(&s);
	s.regs.ip = 0x7;
	n = synth_walk(p, &s, sizeof(s.words), false, ips, 16, &end, &last);
	assert_int_equal(end, JT_UNWIND_LOST);
	assert_int_equal(n, 1);
	assert_int_equal(ips[0], 0x7);
	assert_int_equal(jt_unwind__splice(ips, n, end, fp, 3, out, 16), 3);
	assert_memory_equal(out, fp, sizeof(fp));

	/* room for none */
	synth_make(&s);
	assert_int_equal(synth_walk(p, &s, sizeof(s.words), false, ips, 0, &end, &last), 0);
	assert_int_equal(end, JT_UNWIND_MAX_FRAMES);
	proc_free(p);
}

static void splice_joins_at_the_same_recursion_depth(void **state)
{
	enum { L = 100, A, R, B, X };
	/* the unwind found A (the kernel's walk lost it) and three levels of R, then sliced */
	uint64_t ips[16] = { L, A, R, R, R }, fp[] = { L, R, R, R, R, R, B }, out[16];
	uint64_t want[] = { L, A, R, R, R, R, R, B };
	unsigned int n;

	(void)state;
	n = jt_unwind__splice(ips, 5, JT_UNWIND_SLICE, fp, 7, out, 16);
	assert_int_equal(n, 8);	/* five levels of R, as there were, not eight */
	assert_memory_equal(out, want, sizeof(want));
	n = jt_unwind__splice(ips, 5, JT_UNWIND_SLICE, fp, 7, ips, 16);	/* in place */
	assert_int_equal(n, 8);
	assert_memory_equal(ips, want, sizeof(want));
	assert_int_equal(jt_unwind__splice(ips, 5, JT_UNWIND_SLICE, fp, 7, out, 6), 6);
	assert_memory_equal(out, want, 6 * sizeof(uint64_t));

	/* the kernel's walk never reaches that place, or the unwind did not slice: as unwound */
	memcpy(ips, (uint64_t[]){ L, A, X }, 3 * sizeof(uint64_t));
	assert_int_equal(jt_unwind__splice(ips, 3, JT_UNWIND_SLICE, fp, 7, out, 16), 3);
	assert_int_equal(jt_unwind__splice(ips, 3, JT_UNWIND_OUTERMOST, fp, 7, out, 16), 3);
	assert_int_equal(jt_unwind__splice(ips, 3, JT_UNWIND_LOST, fp, 7, out, 16), 3);
	assert_memory_equal(out, ips, 3 * sizeof(uint64_t));
	/* no kernel walk at all: the leaf alone */
	assert_int_equal(jt_unwind__splice(ips, 1, JT_UNWIND_LOST, fp, 0, out, 16), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(comparator_called_by_qsort_r_unwinds_to_start),
		cmocka_unit_test(functions_without_frame_pointers_unwind_through_cfi),
		cmocka_unit_test(a_call_that_does_not_return_is_looked_up_at_the_call),
		cmocka_unit_test(thread_blocked_in_nanosleep_unwinds_to_its_start),
		cmocka_unit_test(thread_blocked_in_pthread_cond_wait_unwinds_to_its_start),
		cmocka_unit_test(frame_pointers_where_code_has_no_cfi),
		cmocka_unit_test(a_short_copy_ends_in_a_slice_that_splices_with_the_kernel_walk),
		cmocka_unit_test(a_real_copy_cut_anywhere_gives_a_prefix),
		cmocka_unit_test(a_jit_rule_steps_a_frameless_body_and_a_popped_rbp_is_the_callers),
		cmocka_unit_test(an_interpreted_frame_returns_to_its_sender_sp),
		cmocka_unit_test(bad_frames_end_the_walk_lost),
		cmocka_unit_test(splice_joins_at_the_same_recursion_depth),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
