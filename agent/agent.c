// SPDX-License-Identifier: MIT
/* libjitrace-agent core: method ids, the perf map, and the calls into the traced stubs. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitrace/agent.h"

#define JT_API __attribute__((visibility("default")))
#define JT_MAP_LINE_MAX 4096

/* Defined in stubs.S; jitrace's uprobes read their arguments. */
void jitrace_stub_code_load(uint64_t id, const void *code, uint64_t size, const char *name);
void jitrace_stub_code_unload(uint64_t id);

/*
 * The agent is loaded once into a runtime process, so its state is per process by nature:
 * this is the one place in jitrace that keeps a global.
 */
static struct {
	pthread_mutex_t lock;	/* guards opening the map */
	int map_fd;		/* -1: not open yet or refused */
	pid_t map_pid;		/* the process the map belongs to (reopen after fork) */
	atomic_uint_fast64_t next_id;
} agent = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.map_fd = -1,
	.next_id = 1,
};

/*
 * Open /tmp/perf-PID.map afresh for appending, refusing anything planted there by someone
 * else.
 */
static int open_map(pid_t pid)
{
	char path[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "jitrace-agent: not writing %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_nlink != 1) {
		fprintf(stderr, "jitrace-agent: not writing %s: not a regular file of ours\n",
			path);
		close(fd);
		return -1;
	}
	/*
	 * Lines already there were left by an earlier process with our pid (pids are
	 * reused): they describe its code, not ours. This is our first use of the map.
	 */
	if (ftruncate(fd, 0))
		fprintf(stderr, "jitrace-agent: truncating stale %s: %s\n", path, strerror(errno));
	return fd;
}

static int map_fd(void)
{
	pid_t pid = getpid();
	int fd;

	pthread_mutex_lock(&agent.lock);
	if (agent.map_pid != pid) {	/* first use, or we are a forked child */
		if (agent.map_fd >= 0)
			close(agent.map_fd);
		agent.map_fd = open_map(pid);
		agent.map_pid = pid;
	}
	fd = agent.map_fd;
	pthread_mutex_unlock(&agent.lock);
	return fd;
}

/* One write() a line: O_APPEND keeps lines whole between threads and nothing is held. */
static void write_map_line(const void *code, size_t size, const char *name)
{
	char line[JT_MAP_LINE_MAX];
	int fd = map_fd();
	int n, i, start;

	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "%" PRIxPTR " %zx ", (uintptr_t)code, size);
	start = n;
	n += snprintf(line + n, sizeof(line) - n - 1, "%s", name);
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	for (i = start; i < n; i++)	/* a newline in a name would split the line */
		if (line[i] == '\n' || line[i] == '\r')
			line[i] = ' ';
	line[n++] = '\n';
	if (write(fd, line, n) != n) {
		/* a full /tmp must not break the runtime; the uprobe still sees the load */
	}
}

JT_API uint64_t jitrace_code_load(const void *code, size_t size, const char *name)
{
	uint64_t id = atomic_fetch_add_explicit(&agent.next_id, 1, memory_order_relaxed);

	if (!name)
		name = "";
	if (size)	/* a definition for calls only covers no code: nothing for perf */
		write_map_line(code, size, name);
	jitrace_stub_code_load(id, code, size, name);
	return id;
}

JT_API void jitrace_code_unload(uint64_t method_id)
{
	jitrace_stub_code_unload(method_id);
}
