// SPDX-License-Identifier: GPL-2.0
/*
 * A process's and a thread's definitions in the log: written once, before anything of
 * theirs that needs a name (and a thread's again when it renames itself). Below the rest
 * of the collector: its dispatch, its live code and its frames all define through here.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "join/collector_int.h"
#include "host/procfs.h"
#include "base/util.h"

#define CMDLINE_MAX 4096

void jt_coll_set_comm(struct proc *p, const char *comm)
{
	memcpy(p->comm, comm, sizeof(p->comm));
	p->comm[sizeof(p->comm) - 1] = 0;
}

/* The process's identity, written once before anything of it that needs a name. */
int jt_coll_proc_define(struct jt_collector *c, struct proc *p, uint64_t ts)
{
	union {
		struct jt_rec_proc rec;
		char bytes[sizeof(struct jt_rec_proc) + CMDLINE_MAX + 8];
	} u;
	int n;
	size_t size;

	if (p->defined)
		return 0;
	if (p->cmdline) {	/* what its exec said: it may be gone by now */
		n = strnlen(p->cmdline, CMDLINE_MAX - 1);
		memcpy(u.rec.cmdline, p->cmdline, n);
	} else {
		n = jt_procfs__read_cmdline(c->proc_root, p->pid, u.rec.cmdline, CMDLINE_MAX);
	}
	if (n < 0)
		n = 0;
	if (!p->comm[0])
		jt_procfs__read_comm(c->proc_root, p->pid, p->comm);
	size = jt_round8(sizeof(u.rec) + n);
	memset(u.rec.cmdline + n, 0, size - sizeof(u.rec) - n);
	u.rec.h = (struct jt_rec_hdr){ .type = JT_REC_PROC, .size = size, .ts = ts };
	u.rec.pid = p->pid;
	u.rec.cmdline_len = n;
	u.rec.reserved = 0;
	memcpy(u.rec.comm, p->comm, sizeof(u.rec.comm));
	p->defined = true;
	return jt_sink__emit(&c->sink, &u.rec.h);
}

/* The sampled thread's name, written when first seen and whenever it changes. */
int jt_coll_thread_define(struct jt_collector *c, struct proc *p, const struct jt_event *ev)
{
	char *name = jt_hash__get(&p->threads, ev->tid);
	struct jt_rec_thread rec;

	if (!ev->thread[0] || (name && !memcmp(name, ev->thread, JT_COMM_LEN)))
		return 0;	/* nothing said (a crafted record), or nothing new */
	if (!name) {
		name = malloc(JT_COMM_LEN);
		if (!name || jt_hash__put(&p->threads, ev->tid, name)) {
			free(name);
			jt_err("out of memory");
			return -ENOMEM;
		}
	}
	memcpy(name, ev->thread, JT_COMM_LEN);
	rec = (struct jt_rec_thread){
		.h = { .type = JT_REC_THREAD, .size = sizeof(rec), .ts = ev->ts },
		.pid = p->pid, .tid = ev->tid,
	};
	memcpy(rec.comm, name, JT_COMM_LEN);
	c->st.threads++;
	return jt_sink__emit(&c->sink, &rec.h);
}
