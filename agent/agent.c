// SPDX-License-Identifier: MIT
/* libjitrace-agent core: method ids, the perf map, and the calls into the traced stubs. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <dirent.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitrace/agent.h"
#include "calls.h"
#include "stubs.h"

#define JT_API __attribute__((visibility("default")))
#define JT_MAP_LINE_MAX 4096

bool jt_agent_forked;

static void on_fork_child(void)
{
	jt_agent_forked = true;
}

/*
 * At load, before any stub can be hit: a process that forks after its first stub call must
 * have its child on the twins (stubs.h) whatever else of the agent it used.
 */
__attribute__((constructor)) static void agent_init(void)
{
	if (pthread_atfork(NULL, NULL, on_fork_child))
		fprintf(stderr, "jitrace-agent: no fork handler: a forked child that calls the "
			"agent may fault under an optimized uprobe\n");
}

/*
 * The agent is loaded once into a runtime process, so its state is per process by nature:
 * this is the one place in jitrace that keeps a global.
 */
static struct {
	pthread_mutex_t lock;	/* guards opening the map */
	int map_fd;		/* -1: not open yet or refused */
	pid_t map_pid;		/* the process the map belongs to (reopen after fork) */
	bool map_off;		/* the runtime writes the map: not us */
	atomic_uint_fast64_t next_id;
} agent = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.map_fd = -1,
	.next_id = 1,
};

/*
 * Why the file open_map was given is not one we may write, or NULL: only a regular file
 * owned by us with no other name. A FIFO or device would make our writes wait on someone
 * else; a foreign or hard-linked file would put our lines into theirs.
 */
static const char *not_ours(const struct stat *st)
{
	if (!S_ISREG(st->st_mode))
		return S_ISFIFO(st->st_mode) ? "a FIFO, not a regular file" :
		       "not a regular file";
	if (st->st_uid != geteuid())
		return "owned by another user";
	if (st->st_nlink != 1)
		return "has other links";
	return NULL;
}

/* Whether this process has path open already (another writer in it: the runtime). */
static bool open_already(const char *path)
{
	char target[128];
	struct dirent *de;
	bool found = false;
	DIR *d = opendir("/proc/self/fd");
	ssize_t n;

	while (d && !found && (de = readdir(d))) {
		n = readlinkat(dirfd(d), de->d_name, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = 0;
			found = !strcmp(target, path);
		}
	}
	if (d)
		closedir(d);
	return found;
}

/*
 * Open /tmp/perf-PID.map afresh for appending, refusing anything planted there by someone
 * else. O_NONBLOCK: the traced program must never wait on jitrace's files, and opening a
 * FIFO for writing blocks until someone reads it; a FIFO without a reader fails with ENXIO.
 */
static int open_map(pid_t pid)
{
	char path[64];
	const char *why;
	struct stat st;
	int fd, fl;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)pid);
	if (open_already(path))
		return -1;	/* the runtime writes it (.NET's map turned on over IPC): not twice */
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		fprintf(stderr, "jitrace-agent: not writing %s: %s\n", path,
			errno == ENXIO ? "a FIFO or device, not a regular file" : strerror(errno));
		return -1;
	}
	why = fstat(fd, &st) ? strerror(errno) : not_ours(&st);
	if (why) {
		fprintf(stderr, "jitrace-agent: not writing %s: %s\n", path, why);
		close(fd);
		return -1;
	}
	/* a regular file ignores O_NONBLOCK today; clear it so that no kernel ever applies it */
	fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK)) {
		fprintf(stderr, "jitrace-agent: not writing %s: clearing O_NONBLOCK: %s\n", path,
			strerror(errno));
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
		agent.map_fd = agent.map_off ? -1 : open_map(pid);
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
	jt_agent_calls_start();
	if (size)	/* a definition for calls only covers no code: nothing for perf */
		write_map_line(code, size, name);
	JT_STUB_CALL(jitrace_stub_code_load, id, code, size, name);
	return id;
}

/* In pieces the size of the uprobe's fixed record (JT_INLINE_CHUNK in jt_events.h). */
#define JT_INLINE_PIECE 4096

JT_API void jitrace_code_inline(uint64_t method_id, const void *info, size_t len)
{
	size_t off;

	if (!info || !len || len > UINT32_MAX)
		return;
	for (off = 0; off < len; off += JT_INLINE_PIECE)
		JT_STUB_CALL(jitrace_stub_code_inline, method_id, (const char *)info + off, off,
			     len - off < JT_INLINE_PIECE ? len - off : JT_INLINE_PIECE, len);
}

JT_API void jitrace_perfmap_off(void)
{
	pthread_mutex_lock(&agent.lock);
	agent.map_off = true;
	pthread_mutex_unlock(&agent.lock);
}

JT_API void jitrace_code_unload(uint64_t method_id)
{
	JT_STUB_CALL(jitrace_stub_code_unload, method_id);
}
