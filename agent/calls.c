// SPDX-License-Identifier: MIT
/* libjitrace-agent's enter and leave: into the thread's ring of the calls region, or to the stubs. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include "jitrace/agent.h"
#include "jt_callbuf.h"
#include "calls.h"
#include "stubs.h"

#define JT_API __attribute__((visibility("default")))
/*
 * Thread-local state read on every call: initial-exec, one %fs-relative load, where the
 * default model of a shared library costs a call to __tls_get_addr. Sixteen bytes fit the
 * static TLS that glibc keeps for libraries loaded by dlopen.
 */
#define JT_TLS __thread __attribute__((tls_model("initial-exec")))
/* Calls a thread that found no free slot makes through the stubs before it looks again. */
#define NO_SLOT_BACKOFF 4096
/* JITRACE_CALLS_RING's bounds: records a slot (a power of two; the collector's is 2^24). */
#define RING_MIN (1u << 10)
#define RING_MAX (1u << 22)

/* Defined in stubs.S; never a 5-byte NOP (see there), so one for parent and child. */
void jitrace_stub_calls_region(const void *addr, uint64_t size);

/*
 * What enter and leave read while the process has no region (none yet, or refused): a
 * header with no collector, so that they test one field, never a NULL pointer first.
 */
static struct jt_callbuf_hdr no_region;

/* Per process by nature, as agent.c's state (see there). */
static struct {
	pthread_mutex_t lock;		/* guards making the region */
	pthread_once_t once;		/* the thread-exit key and the fork handler */
	pthread_key_t key;		/* its destructor gives a thread's slot back */
	pid_t pid;			/* the process the region was made for */
	bool tsc;			/* records count the TSC (the region's clock says so) */
	uint32_t nr_recs;		/* records a slot: JT_CALLBUF_RECS, or JITRACE_CALLS_RING */
	size_t slot_size, size;		/* a slot's bytes and the region's, for nr_recs */
	_Atomic(struct jt_callbuf_hdr *) region;	/* &no_region: none (refused, or not yet) */
} calls = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.once = PTHREAD_ONCE_INIT,
	.region = &no_region,
};

static JT_TLS struct jt_callbuf_slot *my_slot;
static JT_TLS uint32_t my_backoff;
static JT_TLS uint32_t my_mask;		/* my_slot's ring: records less one */

static struct jt_callbuf_slot *slot_at(struct jt_callbuf_hdr *r, unsigned int i)
{
	return (struct jt_callbuf_slot *)((char *)r + JT_CALLBUF_HDR_SIZE +
					   (size_t)i * calls.slot_size);
}

/* A slot's table of sums and its summary stack: right after its ring, whatever its size. */
static struct jt_callbuf_sum *sums_of(struct jt_callbuf_slot *s)
{
	return (struct jt_callbuf_sum *)&s->recs[calls.nr_recs];
}

static struct jt_callbuf_frame *stack_of(struct jt_callbuf_slot *s)
{
	return (struct jt_callbuf_frame *)(sums_of(s) + JT_CALLBUF_SUMS);
}

/* At thread exit: the slot is the collector's to drain, then to free for another thread. */
static void slot_exit(void *arg)
{
	struct jt_callbuf_slot *s = arg;

	my_slot = NULL;
	__atomic_store_n(&s->state, JT_CALLBUF_EXITED, __ATOMIC_RELEASE);
}

static struct jt_callbuf_slot *claim_slot(struct jt_callbuf_hdr *r)
{
	unsigned int i;

	if (my_backoff) {
		my_backoff--;
		return NULL;
	}
	for (i = 0; i < JT_CALLBUF_SLOTS; i++) {
		struct jt_callbuf_slot *s = slot_at(r, i);
		uint32_t free_state = JT_CALLBUF_FREE;

		if (__atomic_load_n(&s->state, __ATOMIC_RELAXED) != JT_CALLBUF_FREE ||
		    !__atomic_compare_exchange_n(&s->state, &free_state, JT_CALLBUF_CLAIMED, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			continue;
		/* published to the collector with the first record's release of head; the
		 * sums and stack of the thread before were read and given back */
		s->tid = (uint32_t)gettid();
		s->depth = 0;
		s->deep = 0;
		memset(sums_of(s), 0, JT_CALLBUF_SUMS * sizeof(struct jt_callbuf_sum));
		if (pthread_setspecific(calls.key, s)) {
			__atomic_store_n(&s->state, JT_CALLBUF_EXITED, __ATOMIC_RELEASE);
			break;	/* without a destructor the slot would never be given back */
		}
		my_mask = calls.nr_recs - 1;
		my_slot = s;
		return s;
	}
	__atomic_fetch_add(&r->no_slot, 1, __ATOMIC_RELAXED);
	my_backoff = NO_SLOT_BACKOFF;
	return NULL;
}

/* The vDSO's CLOCK_MONOTONIC: the clock BPF stamps with. */
static inline uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static inline uint64_t read_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	return 0;	/* never: tsc_clock() says no here */
#endif
}

/*
 * Whether records may count the TSC: only where the kernel itself keeps time by it (it
 * found it invariant and in step across CPUs) and the CPU says it never stops or changes
 * rate, so that the collector's pairs of rdtsc and clock_gettime put every record on
 * CLOCK_MONOTONIC. JITRACE_CALLS_CLOCK=monotonic says no (tests, comparisons).
 */
static bool tsc_clock(void)
{
#if defined(__x86_64__) || defined(__i386__)
	const char *want = secure_getenv("JITRACE_CALLS_CLOCK");
	unsigned int a, b, c, d;
	char src[16] = "";
	FILE *f;

	if (want && !strcmp(want, "monotonic"))
		return false;
	if (!__get_cpuid(0x80000007, &a, &b, &c, &d) || !(d & (1u << 8)))
		return false;
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	if (!f)
		return false;
	if (!fgets(src, sizeof(src), f))
		src[0] = 0;
	fclose(f);
	return !strcmp(src, "tsc\n");
#else
	return false;
#endif
}

static inline uint64_t now_ticks(void)
{
	return calls.tsc ? read_tsc() : monotonic_ns();
}

/*
 * The time the uprobe of the stub JT_STUB_CALL is about to call (stub, or its twin in a
 * forked child) logs for a call: the TSC, read here, while a uprobe sits on it (its first
 * byte is no longer stubs.S's: an int3, or the call an optimized uprobe put there) and the
 * process's records count the TSC; else 0, and the uprobe reads the kernel's clock, which
 * costs it more than rdtsc costs here (bench/RESULTS.md). Untraced, a load and a compare of
 * a byte the call is about to run.
 */
static inline uint64_t stub_ts(const void *stub, const void *twin)
{
	const volatile uint8_t *first = jt_agent_forked ? twin : stub;
	uint8_t untraced = jt_agent_forked ? JT_STUB_NOP1_BYTE : JT_STUB_NOP5_BYTE;

	if (__builtin_expect(*first == untraced, 1) || !calls.tsc)
		return 0;
	return read_tsc();
}

/* The time for stub(id, ts), jt_stub_enter_direct's or jt_stub_leave_direct's */
#define STUB_TS(stub) stub_ts((const void *)stub, (const void *)stub##_forked)

/*
 * n records (one, or a span's two) into slot s's ring, published together. A full ring
 * never waits on the collector: the records are counted lost, and the program runs on.
 */
static inline void put_at(struct jt_callbuf_slot *s, const struct jt_callbuf_rec *recs,
			  unsigned int n)
{
	uint64_t head = s->head;
	unsigned int i;

	if (head + n - __atomic_load_n(&s->tail, __ATOMIC_ACQUIRE) > (uint64_t)my_mask + 1) {
		__atomic_store_n(&s->dropped, s->dropped + n, __ATOMIC_RELAXED);
		return;
	}
	for (i = 0; i < n; i++)
		s->recs[(head + i) & my_mask] = recs[i];
	__atomic_store_n(&s->head, head + n, __ATOMIC_RELEASE);
}

/* Where method id's sums are in s's table, claimed if new; NULL when it finds no room. */
static struct jt_callbuf_sum *sum_find(struct jt_callbuf_slot *s, uint64_t id)
{
	unsigned int h = (unsigned int)((id * 0x9e3779b97f4a7c15ULL) >> 56), i;

	for (i = 0; i < JT_CALLBUF_PROBES; i++) {
		struct jt_callbuf_sum *e = &sums_of(s)[(h + i) & (JT_CALLBUF_SUMS - 1)];

		if (e->id == id)
			return e;
		if (!e->id) {
			/* the id before any count: a reader that sees counts sees whose */
			__atomic_store_n(&e->id, id, __ATOMIC_RELEASE);
			return e;
		}
	}
	return NULL;
}

/* Summary mode's enter: true when it is on the stack and summed, false to write it. */
static bool sum_enter(struct jt_callbuf_slot *s, uint64_t id, uint64_t t)
{
	struct jt_callbuf_frame *f;
	struct jt_callbuf_sum *e;

	if (s->depth >= JT_CALLBUF_DEPTH) {
		s->deep++;
		return false;
	}
	e = sum_find(s, id);
	f = &stack_of(s)[s->depth++];
	*f = (struct jt_callbuf_frame){ .id = id, .enter = t, .entry = e ? e - sums_of(s) : -1 };
	if (!e) {
		__atomic_store_n(&s->spilled, s->spilled + 1, __ATOMIC_RELAXED);
		return false;
	}
	e->open++;
	return true;
}

/*
 * Close the frame on top of s's stack at t: into its sums, or (a spilled one) its leave
 * into the ring, or (one that took min or more) a span into the ring.
 */
static void sum_close(struct jt_callbuf_slot *s, uint64_t t, uint64_t min)
{
	struct jt_callbuf_frame *f = &stack_of(s)[--s->depth];
	uint64_t d = t > f->enter ? t - f->enter : 0, self = d > f->child ? d - f->child : 0;
	struct jt_callbuf_sum *e;

	if (s->depth)
		stack_of(s)[s->depth - 1].child += d;
	if (f->entry < 0) {
		put_at(s, &(struct jt_callbuf_rec){ t, f->id | JT_CALLBUF_LEAVE }, 1);
		return;
	}
	e = &sums_of(s)[f->entry];
	e->open--;
	if (d >= min) {
		struct jt_callbuf_rec span[2] = { { t, f->id | JT_CALLBUF_SPAN }, { f->enter, self } };

		put_at(s, span, 2);
		return;
	}
	/* each counter alone is read whole; they only grow, and the reader takes deltas */
	__atomic_store_n(&e->calls, e->calls + 1, __ATOMIC_RELAXED);
	if (!e->open)	/* a recursive method's time counts at its outermost activation */
		__atomic_store_n(&e->incl, e->incl + d, __ATOMIC_RELAXED);
	__atomic_store_n(&e->excl, e->excl + self, __ATOMIC_RELAXED);
}

/*
 * Summary mode's leave: it closes the innermost open call of its method, and the calls
 * above it that never left (an exception unwound them) at the same time. False when it
 * closes none (a call entered before summary mode, or beyond the stack): write it.
 */
static bool sum_leave(struct jt_callbuf_hdr *r, struct jt_callbuf_slot *s, uint64_t id,
		      uint64_t t)
{
	uint64_t min = __atomic_load_n(&r->min, __ATOMIC_RELAXED);
	unsigned int k;

	if (s->deep) {
		s->deep--;
		return false;
	}
	for (k = s->depth; k > 0 && stack_of(s)[k - 1].id != id; k--)
		;
	if (!k)
		return false;
	while (s->depth >= k)
		sum_close(s, t, min);
	return true;
}

/*
 * The recording path, out of line: into the thread's ring (or its sums), or the stub when
 * the thread has no slot.
 */
static __attribute__((noinline)) void calls_record(struct jt_callbuf_hdr *r, uint64_t id, bool leave)
{
	struct jt_callbuf_slot *s = my_slot;
	uint64_t t;

	id &= ~JT_CALLBUF_KINDS;
	if (__builtin_expect(!s, 0) && !(s = claim_slot(r))) {
		if (leave)
			JT_STUB_CALL(jt_stub_leave_direct, id, STUB_TS(jt_stub_leave_direct));
		else
			JT_STUB_CALL(jt_stub_enter_direct, id, STUB_TS(jt_stub_enter_direct));
		return;
	}
	t = now_ticks();
	if (__atomic_load_n(&r->mode, __ATOMIC_RELAXED) == JT_CALLBUF_MODE_SUM &&
	    (leave ? sum_leave(r, s, id, t) : sum_enter(s, id, t)))
		return;
	put_at(s, &(struct jt_callbuf_rec){ t, leave ? id | JT_CALLBUF_LEAVE : id }, 1);
}

/*
 * Untraced, three loads (the region's pointer, its collector, the stub's first byte) and two
 * tests more than calling the stub directly: no collector, the stub as before, reached by
 * a jump. Both ways end in a jump, so this needs no frame of its own.
 */
JT_API void jitrace_method_enter(uint64_t method_id)
{
	struct jt_callbuf_hdr *r = atomic_load_explicit(&calls.region, memory_order_acquire);

	if (__builtin_expect(__atomic_load_n(&r->collector, __ATOMIC_RELAXED) != 0, 0))
		calls_record(r, method_id, false);
	else
		JT_STUB_CALL(jt_stub_enter_direct, method_id, STUB_TS(jt_stub_enter_direct));
}

JT_API void jitrace_method_leave(uint64_t method_id)
{
	struct jt_callbuf_hdr *r = atomic_load_explicit(&calls.region, memory_order_acquire);

	if (__builtin_expect(__atomic_load_n(&r->collector, __ATOMIC_RELAXED) != 0, 0))
		calls_record(r, method_id, true);
	else
		JT_STUB_CALL(jt_stub_leave_direct, method_id, STUB_TS(jt_stub_leave_direct));
}

/*
 * Hand the region's memfd to the collector listening on JT_CALLBUF_SOCK, if one does:
 * true if it went. A connection the kernel queues until the collector accepts it, and one
 * message on it, neither waiting (no listener, or a full backlog: false, and the region
 * waits to be found through /proc and the stub as before).
 */
static bool hand_over(int fd)
{
	/* JITRACE_CALLS_SOCK: another listener's path, or empty for none (tests) */
	const char *path = secure_getenv("JITRACE_CALLS_SOCK") ?: JT_CALLBUF_SOCK;
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	uint64_t magic = JT_CALLBUF_MAGIC;
	struct iovec iov = { &magic, sizeof(magic) };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	bool sent;
	int s;

	if (!*path || strlen(path) >= sizeof(sun.sun_path))
		return false;
	strcpy(sun.sun_path, path);
	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return false;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	sent = !connect(s, (struct sockaddr *)&sun, sizeof(sun)) &&
	       sendmsg(s, &msg, MSG_DONTWAIT | MSG_NOSIGNAL) == sizeof(magic);
	close(s);	/* what was sent stays queued for the collector */
	return sent;
}

/*
 * Whether the collector the region was just handed to wants sums from the first call
 * (JT_CALLBUF_WANT, root's and written by root only: no one else can switch this on).
 */
static bool wants_sums(void)
{
	char buf[8] = "";
	struct stat st;
	ssize_t n;
	int fd = open(JT_CALLBUF_WANT, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return false;
	n = !fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_uid == 0 && !(st.st_mode & 022) ?
	    read(fd, buf, sizeof(buf) - 1) : -1;
	close(fd);
	return n == 4 && !memcmp(buf, "sum\n", 4);
}

/*
 * The ring a slot holds: JT_CALLBUF_RECS records, or JITRACE_CALLS_RING's (a power of two
 * within bounds: a thread calling faster than jitrace can drain for a while, or a jitrace
 * kept off its CPU longer than the default ring lasts, loses less). The region is sparse:
 * only the pages a thread writes are made.
 */
static void ring_geometry(void)
{
	const char *want = secure_getenv("JITRACE_CALLS_RING");
	unsigned long n = want && *want ? strtoul(want, NULL, 0) : 0;

	calls.nr_recs = JT_CALLBUF_RECS;
	if (n >= RING_MIN && n <= RING_MAX && !(n & (n - 1)))
		calls.nr_recs = n;
	else if (want && *want)
		fprintf(stderr, "jitrace-agent: JITRACE_CALLS_RING=%s is not a power of two from "
			"%u to %u: %u records a thread\n", want, RING_MIN, RING_MAX, calls.nr_recs);
	calls.slot_size = offsetof(struct jt_callbuf_slot, recs) +
			  (size_t)calls.nr_recs * sizeof(struct jt_callbuf_rec) +
			  JT_CALLBUF_SUMS * sizeof(struct jt_callbuf_sum) +
			  JT_CALLBUF_DEPTH * sizeof(struct jt_callbuf_frame);
	calls.slot_size = (calls.slot_size + 63) & ~(size_t)63;
	calls.size = JT_CALLBUF_HDR_SIZE + JT_CALLBUF_SLOTS * calls.slot_size;
}

/*
 * A sealed memfd of mode 0600, mapped shared and announced through the stub. Sparse: a
 * slot's pages are touched only by a thread that writes calls. NULL when the kernel says
 * no (said once); enter and leave then use the stubs.
 */
static struct jt_callbuf_hdr *make_region(void)
{
	struct jt_callbuf_hdr *r;
	const char *what;
	int fd;

	ring_geometry();
	fd = memfd_create(JT_CALLBUF_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0) {
		what = "memfd_create";
		goto fail;
	}
	what = "fchmod 0600";
	if (fchmod(fd, 0600))
		goto fail;
	what = "ftruncate";
	if (ftruncate(fd, calls.size))
		goto fail;
	/* no shrinking under a collector's mapping (it would fault), no growing either */
	what = "sealing";
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto fail;
	what = "mmap";
	r = mmap(NULL, calls.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED)
		goto fail;
	r->version = JT_CALLBUF_VERSION;
	r->owner = (uint32_t)getpid();
	r->nr_slots = JT_CALLBUF_SLOTS;
	r->nr_recs = calls.nr_recs;
	r->slot_size = calls.slot_size;
	r->nr_sums = JT_CALLBUF_SUMS;
	r->min = UINT64_MAX;
	r->made = monotonic_ns();	/* after any exec of ours: the collector tells images apart */
	/* once a region: every record of it counts the one clock */
	calls.tsc = tsc_clock();
	r->clock = calls.tsc ? JT_CALLBUF_CLOCK_TSC : JT_CALLBUF_CLOCK_MONO;
	/* named before it is sent: the collector may look at once */
	r->collector = JT_CALLBUF_HANDED;
	__atomic_store_n(&r->magic, JT_CALLBUF_MAGIC, __ATOMIC_RELEASE);
	if (!hand_over(fd))
		__atomic_store_n(&r->collector, 0, __ATOMIC_RELEASE);
	else if (wants_sums())	/* before any call: the collector sets min when it takes it */
		__atomic_store_n(&r->mode, JT_CALLBUF_MODE_SUM, __ATOMIC_RELEASE);
	close(fd);	/* the mapping keeps it; root finds it through /proc/PID/map_files */
	return r;
fail:
	fprintf(stderr, "jitrace-agent: calls go through the stubs: %s: %s\n", what,
		strerror(errno));
	if (fd >= 0)
		close(fd);
	return NULL;
}

static void publish(struct jt_callbuf_hdr *r)
{
	calls.pid = getpid();
	if (!r)
		return;
	atomic_store_explicit(&calls.region, r, memory_order_release);
	jitrace_stub_calls_region(r, calls.size);
}

/*
 * In a forked child: the parent's region is shared memory, so writing there would put the
 * child's calls into the parent's rings. The child makes its own (its only thread is this
 * one, whose slot was the parent's).
 */
static void on_fork_child(void)
{
	struct jt_callbuf_hdr *old = atomic_load_explicit(&calls.region, memory_order_relaxed);

	my_slot = NULL;
	my_backoff = 0;
	pthread_setspecific(calls.key, NULL);
	pthread_mutex_init(&calls.lock, NULL);
	atomic_store_explicit(&calls.region, &no_region, memory_order_relaxed);
	if (old != &no_region) {
		munmap(old, calls.size);
		publish(make_region());
	}
}

static void setup_once(void)
{
	if (pthread_key_create(&calls.key, slot_exit) ||
	    pthread_atfork(NULL, NULL, on_fork_child)) {
		fprintf(stderr, "jitrace-agent: calls go through the stubs: no thread key\n");
		calls.pid = -1;	/* never make a region: a thread's slot could not be freed */
	}
}

void jt_agent_calls_start(void)
{
	pid_t pid = getpid();

	if (calls.pid == pid)
		return;		/* made, or refused, already */
	pthread_once(&calls.once, setup_once);
	pthread_mutex_lock(&calls.lock);
	if (calls.pid != pid && calls.pid != -1)
		publish(make_region());
	pthread_mutex_unlock(&calls.lock);
}
