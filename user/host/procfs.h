/* SPDX-License-Identifier: GPL-2.0 */
/* What the collector reads of a process from /proc: name, command line, mapped files. */
#ifndef JT_PROCFS_H
#define JT_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct jt_file_info;

/* An executable mapping of a file (the vdso counts as one). */
struct jt_vma {
	uint64_t start;
	uint64_t end;
	uint64_t pgoff;
	uint64_t module_id;	/* 0 until defined in the log */
	char *path;
	/* its symbols and unwind table, once looked up (owned elsewhere; NULL: none) */
	const struct jt_file_info *file;
	bool syms_looked;
};

struct jt_vmas {
	struct jt_vma *v;	/* sorted by start */
	size_t n;
};

/*
 * Read PROC_ROOT/PID/maps (proc_root is "/proc", or a fixture tree in tests). Returns 0 or
 * -errno (not reported: a process may be gone, and that is normal).
 */
int jt_procfs__read_maps(const char *proc_root, uint32_t pid, struct jt_vmas *out);
void jt_vmas__free(struct jt_vmas *vm);
struct jt_vma *jt_vmas__find(const struct jt_vmas *vm, uint64_t addr);
/*
 * Add the mapping [start, end) of path from file offset pgoff, in place of whatever it
 * overlaps (a new mmap replaces the old pages). Returns it, or NULL when out of memory.
 */
struct jt_vma *jt_vmas__add(struct jt_vmas *vm, uint64_t start, uint64_t end, uint64_t pgoff,
			    const char *path);
/*
 * Whether a mapping of path is, as far as names go, anonymous memory: no file at all (""), or
 * a memfd ("/memfd:NAME", " (deleted)" or not), a file of its process alone that no other
 * opens by path: .NET keeps its JIT code in one ("doublemapper"), mapped twice, writable and
 * executable. Its frames are JIT code, never "file and offset" to add up across processes.
 */
bool jt_procfs__anon_path(const char *path);
/* The runtime whose JIT memory path is by its name alone ("[dotnet jit]"), or NULL. */
const char *jt_procfs__jit_path(const char *path);
/* Whether process pid has the file fd is open on open too (PROC_ROOT/PID/fd): 1, 0, -errno. */
int jt_procfs__holds_fd(const char *proc_root, uint32_t pid, int fd);
/* dst (freed first) becomes a copy of src (symbols kept, module ids not). 0 or -ENOMEM. */
int jt_vmas__copy(struct jt_vmas *dst, const struct jt_vmas *src);

/* PROC_ROOT/PID/WHAT's first len - 1 bytes as they are (NULs kept), NUL-terminated: one
 * read, what /proc gives at once (a page or more). Returns their count or -errno. */
int jt_procfs__read_raw(const char *proc_root, uint32_t pid, const char *what, char *buf,
			size_t len);
/*
 * Field n of a /proc/PID/stat text as a number, numbered as proc(5) does (4 ppid, 22
 * starttime in clock ticks); n >= 3, the fields after the command's name, which may hold
 * anything but the last ')'. 0, or -EINVAL when the text has no such number.
 */
int jt_procfs__stat_num(const char *stat, unsigned int n, unsigned long long *v);
/* PROC_ROOT/PID/cmdline with NULs turned into spaces, NUL-terminated. Returns its length
 * or -errno. */
int jt_procfs__read_cmdline(const char *proc_root, uint32_t pid, char *buf, size_t len);
/* PROC_ROOT/PID/comm without its newline, into comm[16]. Returns 0 or -errno. */
int jt_procfs__read_comm(const char *proc_root, uint32_t pid, char comm[16]);
/* The process (thread group) that thread id tid belongs to, from PROC_ROOT/TID/status
 * ("Tgid:"); a process's own pid gives itself. Returns 0 or -errno. */
int jt_procfs__read_tgid(const char *proc_root, uint32_t tid, uint32_t *tgid);
/* The pids listed in PROC_ROOT but ours, into *out (malloc'd, the caller frees; NULL if
 * none). Returns their count, 0 if PROC_ROOT cannot be read (nothing to look at), or
 * -ENOMEM. */
int jt_procfs__list_pids(const char *proc_root, uint32_t **out);

#endif
