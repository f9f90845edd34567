// SPDX-License-Identifier: GPL-2.0
/* Checking ring-buffer records and turning them into struct jt_event. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "decode.h"
#include "jt_javaname.h"

static size_t bounded_len(const char *s, size_t max)
{
	const char *nul = memchr(s, 0, max);

	return nul ? (size_t)(nul - s) : max;
}

int jt_decode(const void *data, size_t len, struct jt_event *ev)
{
	const struct jt_ev_hdr *h = data;

	if (len < sizeof(*h) || h->size > len || h->size < sizeof(*h))
		return -EINVAL;
	memset(ev, 0, offsetof(struct jt_event, name_buf));
	ev->ts = h->ts;
	ev->type = h->type;
	ev->pid = h->pid;
	ev->tid = h->tid;
	len = h->size;

	switch (h->type) {
	case JT_EV_ENTER:
	case JT_EV_LEAVE:
	case JT_EV_CODE_UNLOAD: {
		const struct jt_ev_call *c = data;

		if (len < sizeof(*c))
			return -EINVAL;
		ev->id = c->id;
		return 0;
	}
	case JT_EV_CODE_LOAD: {
		const struct jt_ev_code *c = data;

		if (len < JT_EV_CODE_FIXED || c->name_len >= JT_NAME_MAX ||
		    len < JT_EV_CODE_FIXED + c->name_len || !c->src || c->src >= JT_SRC_MAX)
			return -EINVAL;
		if (c->start + c->size < c->start)
			return -EINVAL;
		ev->id = c->id;
		ev->start = c->start;
		ev->size = c->size;
		ev->src = c->src;
		ev->unsure_us = c->unsure_us;
		ev->str = c->name;
		ev->str_len = bounded_len(c->name, c->name_len);
		return 0;
	}
	case JT_EV_JAVA_CODE: {
		const struct jt_ev_jcode *j = data;

		if (len < sizeof(*j) || j->class_len > JT_JCLASS_MAX ||
		    j->method_len > JT_JMETHOD_MAX || j->sig_len > JT_JSIG_MAX ||
		    j->start + j->size < j->start)
			return -EINVAL;
		ev->type = JT_EV_CODE_LOAD;
		ev->id = j->id;
		ev->start = j->start;
		ev->size = j->size;
		ev->src = JT_SRC_USDT;
		ev->str = ev->name_buf;
		ev->str_len = jt_java_name(ev->name_buf, sizeof(ev->name_buf), j->class_name,
					   j->class_len, j->method, j->method_len, j->sig,
					   j->sig_len);
		return 0;
	}
	case JT_EV_SAMPLE: {
		const struct jt_ev_sample *s = data;

		if (len < JT_EV_SAMPLE_FIXED || s->nr_kernel > JT_MAX_FRAMES ||
		    s->nr_user > JT_MAX_FRAMES ||
		    len < JT_EV_SAMPLE_FIXED + 8 * ((size_t)s->nr_kernel + s->nr_user))
			return -EINVAL;
		ev->cpu = s->cpu;
		ev->nr_kernel = s->nr_kernel;
		ev->nr_user = s->nr_user;
		ev->ips = s->ips;
		return 0;
	}
	case JT_EV_EXEC: {
		const struct jt_ev_exec *e = data;

		if (len < JT_EV_EXEC_FIXED || e->path_len >= JT_PATH_MAX ||
		    len < JT_EV_EXEC_FIXED + e->path_len)
			return -EINVAL;
		ev->comm = e->comm;
		ev->str = e->path;
		ev->str_len = bounded_len(e->path, e->path_len);
		return 0;
	}
	case JT_EV_EXIT:
	case JT_EV_FORK: {
		const struct jt_ev_proc *p = data;

		if (len < sizeof(*p))
			return -EINVAL;
		ev->child_pid = p->child_pid;
		ev->exit_code = p->exit_code;
		ev->comm = p->comm;
		return 0;
	}
	default:
		return -EINVAL;
	}
}
