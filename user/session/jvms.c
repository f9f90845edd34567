// SPDX-License-Identifier: GPL-2.0
/* The running JVMs a live session asks for their code's names: which ones, what, and what it says. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/procfs.h"
#include "session/guard.h"
#include "session/jvms.h"
#include "sources/jvm_attach.h"
#include "base/util.h"

/* The processes to look at: o's, or every one in proc_root but ours. How many, -ENOMEM. */
static int candidates(const struct jt_jvms_opts *o, uint32_t **out)
{
	uint32_t *v;

	if (!o->nr_pids)
		return jt_procfs__list_pids(o->proc_root, out);
	v = malloc(o->nr_pids * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, o->pids, o->nr_pids * sizeof(*v));
	*out = v;
	return o->nr_pids;
}

/*
 * The agent's path as pid sees it: the same file (device and inode) inside its root, which
 * HotSpot's "load" can then open; else why not. 0 or -errno.
 */
static int agent_visible(const struct jt_jvms_opts *o, uint32_t pid, char *why, size_t cap)
{
	char path[PATH_MAX];
	struct stat ours, theirs;

	if (stat(o->agent, &ours)) {
		snprintf(why, cap, "%s: %s", o->agent, strerror(errno));
		return -errno;
	}
	if (snprintf(path, sizeof(path), "%s/%u/root%s", o->proc_root, pid, o->agent) >=
	    (int)sizeof(path) || stat(path, &theirs) || theirs.st_dev != ours.st_dev ||
	    theirs.st_ino != ours.st_ino) {
		snprintf(why, cap, "%s is not the same file inside its root (a container's): "
			 "the agent cannot be loaded there", o->agent);
		return -ENOENT;
	}
	return 0;
}

/*
 * What the JVM's answer means: NULL if it did what was asked, else why not (in buf). The
 * "load" answer is "0" and "return code: N", N being Agent_OnAttach's.
 */
static const char *judge(const struct jt_jvms_opts *o, int code, const char *text, char *buf,
			 size_t cap)
{
	const char *rc = strstr(text, "return code: ");
	size_t len = strcspn(text, "\n");

	if (!code && (!o->agent || (rc && atoi(rc + 13) == 0)))
		return NULL;
	if (!o->agent && strstr(text, "Unknown diagnostic command"))
		return "it has no Compiler.perfmap (JDK 17 or later has)";
	snprintf(buf, cap, "it answered %d%s%.*s", code, len ? ": " : "", (int)(len > 200 ? 200 : len),
		 text);
	return buf;
}

int jt_jvms__ask(const struct jt_jvms_opts *o)
{
	const char *perfmap[] = { "Compiler.perfmap", NULL };
	const char *load[] = { o->agent, "true", o->agent_calls ? "calls" : "", NULL };
	char why[JT_JVM_ATTACH_WHY_MAX], text[JT_JVM_ATTACH_TEXT_MAX], buf[320];
	struct jt_jvm_call **calls;
	uint32_t *pids = NULL;
	int n, i, nr = 0, code, done = 0;
	const char *bad;

	n = candidates(o, &pids);
	calls = n > 0 ? calloc(n, sizeof(*calls)) : NULL;
	if (n < 0 || (n > 0 && !calls)) {
		jt_err("out of memory looking for JVMs");
		free(pids);
		return 0;
	}
	/* all at once: each waits for its JVM's listener, and for its map to be written */
	for (i = 0; i < n; i++) {
		if (jt_jvm_attach__is_jvm(o->proc_root, pids[i]) != 1)
			continue;
		if (o->agent && agent_visible(o, pids[i], why, sizeof(why))) {
			jt_err("pid %u: JVM not attached: %s; its JIT frames stay [java jit]",
			       pids[i], why);
			continue;
		}
		/* before the map is asked for: whether it was there before any session */
		if (!o->agent && o->guard)
			jt_guard__jvm_map(o->guard, pids[i]);
		calls[nr] = jt_jvm_attach__start(o->proc_root, pids[i], o->agent ? "load" : "jcmd",
						 o->agent ? load : perfmap, o->timeout_ms, why);
		if (!calls[nr])
			jt_err("pid %u: JVM not attached: %s; its JIT frames stay [java jit]",
			       pids[i], why);
		else
			nr++;
	}
	for (i = 0; i < nr; i++) {
		uint32_t pid = jt_jvm_attach__pid(calls[i]);

		if (jt_jvm_attach__finish(calls[i], &code, text, why)) {
			jt_err("pid %u: JVM not attached: %s; its JIT frames stay [java jit]", pid,
			       why);
			continue;
		}
		bad = judge(o, code, text, buf, sizeof(buf));
		if (bad)
			jt_err("pid %u: the JVM refused %s: %s; its JIT frames stay [java jit]",
			       pid, o->agent ? "to load the agent" : "Compiler.perfmap", bad);
		else
			done++;
	}
	free(calls);
	free(pids);
	return done;
}
