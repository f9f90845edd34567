// SPDX-License-Identifier: GPL-2.0
/* The ring buffer's edge: checking its records and making the collector's events of them. */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "sources/ring_decode.h"
#include "host/procfs.h"
#include "jt_javaname.h"
#include "jt_log_format.h"

static size_t bounded_len(const char *s, size_t max)
{
	const char *nul = memchr(s, 0, max);

	return nul ? (size_t)(nul - s) : max;
}

static int decode_code(const struct jt_ev_code *c, size_t len, struct jt_event *ev)
{
	if (len < JT_EV_CODE_FIXED || c->name_len >= JT_NAME_MAX ||
	    len < JT_EV_CODE_FIXED + c->name_len || !c->src || c->src >= JT_SRC_MAX)
		return -EINVAL;
	if (c->start + c->size < c->start)
		return -EINVAL;
	ev->id = c->id;
	ev->start = c->start;
	ev->size = c->size;
	ev->src = c->src;
	jt_event__put_str(ev, c->name, bounded_len(c->name, c->name_len));
	return 0;
}

static int decode_jcode(const struct jt_ev_jcode *j, size_t len, struct jt_event *ev)
{
	char *name = (char *)ev->tail;
	size_t n;

	if (len < sizeof(*j) || j->class_len > JT_JCLASS_MAX || j->method_len > JT_JMETHOD_MAX ||
	    j->sig_len > JT_JSIG_MAX || j->start + j->size < j->start)
		return -EINVAL;
	ev->type = JT_EV_CODE_LOAD;
	ev->id = j->id;
	ev->start = j->start;
	ev->size = j->size;
	ev->src = JT_SRC_USDT;
	n = jt_java_name(name, JT_NAME_MAX, j->class_name, j->class_len, j->method,
			 j->method_len, j->sig, j->sig_len);
	jt_event__put_str(ev, name, bounded_len(name, n));
	return 0;
}

/* A sample's copy of its user stack (avail bytes at at), after its ips in ev's tail. */
static int decode_ustack(const uint8_t *at, size_t avail, struct jt_event *ev)
{
	struct jt_ev_ustack u;
	size_t n = 8 * ((size_t)ev->nr_kernel + ev->nr_user);

	if (avail < sizeof(u))
		return -EINVAL;
	memcpy(&u, at, sizeof(u));	/* after the ips: aligned only to 8, as they are */
	if (!ev->nr_user || u.len > JT_USTACK_MAX || u.len > avail - sizeof(u))
		return -EINVAL;
	ev->off_sp = u.sp;
	ev->off_bp = u.bp;
	ev->off_stack_len = u.len;
	ev->len = jt_event__size(n + u.len);
	memcpy((char *)ev->tail + n, at + sizeof(u), u.len);
	return 0;
}

static int decode_sample(const struct jt_ev_sample *s, size_t len, struct jt_event *ev)
{
	size_t n;

	if (len < JT_EV_SAMPLE_FIXED || s->nr_kernel > JT_MAX_FRAMES ||
	    s->nr_user > JT_MAX_FRAMES)
		return -EINVAL;
	n = (size_t)s->nr_kernel + s->nr_user;
	if (len < JT_EV_SAMPLE_FIXED + 8 * n)
		return -EINVAL;
	ev->cpu = s->cpu;
	memcpy(ev->thread, s->comm, sizeof(ev->thread));
	if (s->h.flags & JT_SAMPLE_LEAF_XOL)
		ev->flags |= JT_EVENT_LEAF_XOL;
	if (s->h.flags & JT_SAMPLE_LEAF_TRAMP)
		ev->flags |= JT_EVENT_LEAF_TRAMP;
	if (s->h.flags & JT_SAMPLE_FP_WALK)
		ev->flags |= JT_EVENT_FP_WALK;
	ev->nr_kernel = s->nr_kernel;
	ev->nr_user = s->nr_user;
	ev->len = jt_event__size(8 * n);
	memcpy(ev->tail, s->ips, 8 * n);
	if (s->h.flags & JT_SAMPLE_USTACK)
		return decode_ustack((const uint8_t *)s->ips + 8 * n,
				     len - JT_EV_SAMPLE_FIXED - 8 * n, ev);
	return 0;
}

static int decode_offcpu(const struct jt_ev_offcpu *o, size_t len, struct jt_event *ev)
{
	size_t n;

	if (len < JT_EV_OFFCPU_SHORT || !o->state || o->state >= JT_OFF_MAX ||
	    o->left_ts > o->h.ts || !o->count)
		return -EINVAL;
	memcpy(ev->thread, o->comm, sizeof(ev->thread));
	ev->cpu = o->cpu;
	ev->off_ns = o->off_ns;
	ev->off_left_ts = o->left_ts;
	ev->off_count = o->count;
	ev->off_state = o->state;
	if (len < JT_EV_OFFCPU_FIXED) {	/* a sum of short waits: no stacks */
		if (o->nr_kernel || o->nr_user || o->stack_len)
			return -EINVAL;
		return 0;
	}
	if (o->nr_kernel > JT_MAX_FRAMES || o->nr_user > JT_MAX_FRAMES ||
	    o->stack_len > JT_OFF_STACK_BYTES)
		return -EINVAL;
	n = (size_t)o->nr_kernel + o->nr_user;
	if (len < JT_EV_OFFCPU_FIXED + 8 * n)
		return -EINVAL;
	ev->nr_kernel = o->nr_kernel;
	ev->nr_user = o->nr_user;
	ev->off_sp = o->sp;
	ev->off_bp = o->bp;
	ev->off_stack_len = o->stack_len;
	ev->len = jt_event__size(8 * n + o->stack_len);
	memcpy(ev->tail, o->ips, 8 * n);
	memcpy((char *)ev->tail + 8 * n, o->stack, o->stack_len);
	return 0;
}

static void put_comm(struct jt_event *ev, const char *comm)
{
	memcpy(ev->comm, comm, JT_COMM_LEN);
}

/* The command line after the path in ev's tail: NULs between arguments become spaces. */
static void put_args(struct jt_event *ev, const char *args, size_t n)
{
	char *t = (char *)ev->tail + ev->str_len + 1;
	size_t i;

	while (n && !args[n - 1])
		n--;
	for (i = 0; i < n; i++)
		t[i] = args[i] ? args[i] : ' ';
	ev->args_len = n;
	ev->len = jt_event__size(ev->str_len + 1 + n + 1);
	memset(t + n, 0, (char *)ev + ev->len - (t + n));
}

static int decode_exec(const struct jt_ev_exec *e, size_t len, struct jt_event *ev)
{
	if (len < JT_EV_EXEC_FIXED || e->path_len >= JT_PATH_MAX ||
	    len < JT_EV_EXEC_FIXED + e->path_len)
		return -EINVAL;
	put_comm(ev, e->comm);
	jt_event__put_str(ev, e->path, bounded_len(e->path, e->path_len));
	/* a record without its arguments' slot (an older jitrace's) has none */
	if (len >= sizeof(*e) && e->args_len <= JT_ARGS_MAX)
		put_args(ev, e->args, e->args_len);
	return 0;
}

static int decode_inline(const struct jt_ev_inline *in, size_t len, struct jt_event *ev)
{
	if (len < sizeof(*in) || in->len > JT_INLINE_CHUNK || in->off > in->total ||
	    in->len > in->total - in->off || in->total > JT_INLINE_BYTES_MAX)
		return -EINVAL;
	ev->inl_of = in->id;
	ev->inl_off = in->off;
	ev->inl_total = in->total;
	jt_event__put_str(ev, (const char *)in->data, in->len);
	return 0;
}

static int decode_mmap(const struct jt_ev_mmap *m, size_t len, struct jt_event *ev)
{
	if (len < JT_EV_MMAP_FIXED || m->path_len >= JT_PATH_MAX ||
	    len < JT_EV_MMAP_FIXED + m->path_len || m->end <= m->start)
		return -EINVAL;
	ev->map_start = m->start;
	ev->map_end = m->end;
	ev->map_pgoff = m->pgoff;
	if (m->flags & JT_MMAP_VDSO) {
		jt_event__put_str(ev, "[vdso]", 6);
		return 0;
	}
	if (m->flags & JT_MMAP_ANON) {	/* no file: the empty path, as /proc/PID/maps has it */
		jt_event__put_str(ev, "", 0);
		return 0;
	}
	jt_event__put_str(ev, m->path, bounded_len(m->path, m->path_len));
	/* a memfd is its process's own memory (JIT code): no file to read symbols from */
	if (!jt_procfs__anon_path(jt_event__str(ev))) {
		ev->map_ino = m->ino;
		ev->map_dev = makedev(m->dev >> 20, m->dev & 0xfffff);
	}
	return 0;
}

int jt_decode(const void *data, size_t len, union jt_event_buf *out)
{
	const struct jt_ev_hdr *h = data;
	struct jt_event *ev = &out->ev;

	if (len < sizeof(*h) || h->size > len || h->size < sizeof(*h))
		return -EINVAL;
	memset(ev, 0, JT_EVENT_FIXED);
	ev->ts = h->ts;
	ev->len = JT_EVENT_FIXED;
	ev->type = h->type;
	ev->pid = h->pid;
	ev->tid = h->tid;
	len = h->size;

	switch (h->type) {
	case JT_EV_ENTER:
	case JT_EV_LEAVE:
	case JT_EV_CODE_UNLOAD:
		if (len < sizeof(struct jt_ev_call))
			return -EINVAL;
		ev->id = ((const struct jt_ev_call *)data)->id;
		return 0;
	case JT_EV_CALL_SUM: {
		const struct jt_ev_callsum *s = data;

		if (len < sizeof(*s))
			return -EINVAL;
		ev->sum_of = s->id;
		ev->sum_calls = s->calls;
		ev->sum_incl_ns = s->incl_ns;
		ev->sum_excl_ns = s->excl_ns;
		return 0;
	}
	case JT_EV_CALL_SPAN: {
		const struct jt_ev_span *s = data;

		if (len < sizeof(*s))
			return -EINVAL;
		ev->sum_of = s->id;
		ev->sum_calls = 1;
		ev->sum_incl_ns = s->enter_ts;
		ev->sum_excl_ns = s->self_ns;
		return 0;
	}
	case JT_EV_CODE_LOAD:
		return decode_code(data, len, ev);
	case JT_EV_JAVA_CODE:
		return decode_jcode(data, len, ev);
	case JT_EV_SAMPLE:
		return decode_sample(data, len, ev);
	case JT_EV_OFFCPU:
		return decode_offcpu(data, len, ev);
	case JT_EV_EXEC:
		return decode_exec(data, len, ev);
	case JT_EV_MMAP:
		return decode_mmap(data, len, ev);
	case JT_EV_CODE_INLINE:
		return decode_inline(data, len, ev);
	case JT_EV_EXIT:
	case JT_EV_FORK: {
		const struct jt_ev_proc *p = data;

		if (len < sizeof(*p))
			return -EINVAL;
		ev->child_pid = p->child_pid;
		ev->exit_code = p->exit_code;
		put_comm(ev, p->comm);
		return 0;
	}
	default:
		return -EINVAL;
	}
}
