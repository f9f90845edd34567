// SPDX-License-Identifier: MIT
/* Where the toy JIT tells of its code: the agent, or a jitdump and a perf map of its own. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "jitrace/agent.h"
#include "jit.h"
#include "sink.h"
#include "toyjit.h"

/* Every jitdump record begins so. */
struct dump_rec_hdr {
	uint32_t id;
	uint32_t total_size;
	uint64_t timestamp;	/* CLOCK_MONOTONIC ns: flags has no JITDUMP_FLAGS_ARCH_TIMESTAMP */
};

struct dump_header {
	uint32_t magic;
	uint32_t version;
	uint32_t total_size;
	uint32_t elf_mach;
	uint32_t pad1;
	uint32_t pid;
	uint64_t timestamp;
	uint64_t flags;
};

struct dump_code_load {
	struct dump_rec_hdr h;
	uint32_t pid;
	uint32_t tid;
	uint64_t vma;
	uint64_t code_addr;
	uint64_t code_size;
	uint64_t code_index;
	/* then the name with its NUL, then code_size bytes of code */
};

struct dump_debug_info {
	struct dump_rec_hdr h;
	uint64_t code_addr;
	uint64_t nr_entry;
	/* then nr_entry of { u64 code_addr; u32 line; u32 discrim; char name[] with NUL } */
};

_Static_assert(sizeof(struct dump_header) == 40, "jitdump header");
_Static_assert(sizeof(struct dump_code_load) == 56, "jitdump code load");
_Static_assert(sizeof(struct dump_debug_info) == 32, "jitdump debug info");

void sink__init(struct toy_sink *s, const char *scenario)
{
	memset(s, 0, sizeof(*s));
	s->agent = true;
	s->dump_fd = -1;
	s->map_fd = -1;
	s->next_index = 1;
	snprintf(s->source, sizeof(s->source), "%s.toy", scenario);
}

/* All of len bytes, in one write() when the kernel takes them so (it does for a file). */
static int write_all(int fd, const void *buf, size_t len, const char *path)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			toy_err("write(%s, %zu bytes): %s", path, len,
				n < 0 ? strerror(errno) : "wrote nothing");
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int sink__open_jitdump(struct toy_sink *s, const char *dir)
{
	long page = sysconf(_SC_PAGESIZE);
	struct dump_header h = {
		.magic = TOY_JITDUMP_MAGIC, .version = TOY_JITDUMP_VERSION,
		.total_size = sizeof(h), .elf_mach = TOY_JITDUMP_EM_X86_64,
		.pid = (uint32_t)getpid(), .timestamp = toy_now_ns(), .flags = 0,
	};
	int n = snprintf(s->dump_path, sizeof(s->dump_path), "%s/jit-%d.dump", dir,
			 (int)getpid());

	s->agent = false;
	if (n < 0 || (size_t)n >= sizeof(s->dump_path)) {
		toy_err("jitdump directory '%s' is too long a path", dir);
		return -1;
	}
	/* read and write: the marker mapping below needs a readable fd */
	s->dump_fd = open(s->dump_path, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (s->dump_fd < 0) {
		toy_err("open(%s): %s", s->dump_path, strerror(errno));
		return -1;
	}
	if (write_all(s->dump_fd, &h, sizeof(h), s->dump_path))
		return -1;
	/* How perf (and jitrace) learn which file is ours: an executable mapping of it. */
	s->marker_size = (size_t)page;
	s->marker = mmap(NULL, s->marker_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, s->dump_fd, 0);
	if (s->marker == MAP_FAILED) {
		s->marker = NULL;
		toy_err("mmap(%s, one page, PROT_READ|PROT_EXEC, MAP_PRIVATE): %s", s->dump_path,
			strerror(errno));
		return -1;
	}
	toy_out("jitdump path=%s", s->dump_path);
	return 0;
}

int sink__open_perfmap(struct toy_sink *s, bool at_exit)
{
	s->agent = false;
	s->map_at_exit = at_exit;
	snprintf(s->map_path, sizeof(s->map_path), "/tmp/perf-%d.map", (int)getpid());
	s->map_fd = open(s->map_path, O_WRONLY | O_APPEND | O_CREAT | O_TRUNC | O_NOFOLLOW |
			 O_CLOEXEC, 0644);
	if (s->map_fd < 0) {
		toy_err("open(%s): %s", s->map_path, strerror(errno));
		return -1;
	}
	toy_out("perfmap path=%s", s->map_path);
	return 0;
}

void sink__close(struct toy_sink *s)
{
	if (s->marker && munmap(s->marker, s->marker_size))
		toy_err("munmap(%s marker): %s", s->dump_path, strerror(errno));
	s->marker = NULL;
	if (s->dump_fd >= 0)
		close(s->dump_fd);
	if (s->map_fd >= 0 && s->map_held_len)
		write_all(s->map_fd, s->map_held, s->map_held_len, s->map_path);
	free(s->map_held);
	s->map_held = NULL;
	s->map_held_len = 0;
	if (s->map_fd >= 0)
		close(s->map_fd);
	s->dump_fd = s->map_fd = -1;
}

/*
 * The debug info of fn, as the format wants it before its code load: its entry at line,
 * its body at line + 1 (the spin loops, where split's samples fall) and its return at
 * line + 2, all in s->source.
 */
static int dump_debug_info(struct toy_sink *s, const struct toy_fn *fn, uint32_t line,
			   bool say)
{
	uint64_t addrs[TOY_LINES_PER_FN] = {
		(uintptr_t)fn->code, (uintptr_t)fn->code + fn->body_off,
		(uintptr_t)fn->code + fn->tail_off,
	};
	size_t name_len = strlen(s->source) + 1, entry = 16 + name_len;
	size_t size = sizeof(struct dump_debug_info) + TOY_LINES_PER_FN * entry;
	size_t padded = (size + 7) & ~(size_t)7;	/* as perf's own writer pads it */
	struct dump_debug_info d = {
		.h = { .id = TOY_JITDUMP_CODE_DEBUG_INFO, .total_size = (uint32_t)padded,
		       .timestamp = toy_now_ns() },
		.code_addr = (uintptr_t)fn->code, .nr_entry = TOY_LINES_PER_FN,
	};
	uint8_t *buf = calloc(1, padded), *p;
	uint32_t k, zero = 0;
	int err;

	if (!buf) {
		toy_err("calloc(%zu): out of memory", padded);
		return -1;
	}
	memcpy(buf, &d, sizeof(d));
	p = buf + sizeof(d);
	for (k = 0; k < TOY_LINES_PER_FN; k++) {
		uint32_t l = line + k;

		memcpy(p, &addrs[k], 8);
		memcpy(p + 8, &l, 4);
		memcpy(p + 12, &zero, 4);	/* discriminator */
		memcpy(p + 16, s->source, name_len);
		p += entry;
	}
	err = write_all(s->dump_fd, buf, padded, s->dump_path);
	free(buf);
	if (!err && say)
		toy_out("debug %s file=%s lines=%u@0x%" PRIx64 ",%u@0x%" PRIx64 ",%u@0x%" PRIx64,
			fn->name, s->source, line, addrs[0], line + 1, addrs[1], line + 2,
			addrs[2]);
	return err;
}

/* The code load, timed now: the code is written and executable, and has not run yet. */
static int dump_code_load(struct toy_sink *s, const struct toy_fn *fn)
{
	size_t name_len = strlen(fn->name) + 1;
	size_t size = sizeof(struct dump_code_load) + name_len + fn->size;
	struct dump_code_load c = {
		.h = { .id = TOY_JITDUMP_CODE_LOAD, .total_size = (uint32_t)size },
		.pid = (uint32_t)getpid(), .tid = (uint32_t)gettid(),
		.vma = (uintptr_t)fn->code, .code_addr = (uintptr_t)fn->code,
		.code_size = fn->size, .code_index = fn->id,
	};
	uint8_t *buf = malloc(size);
	int err;

	if (!buf) {
		toy_err("malloc(%zu): out of memory", size);
		return -1;
	}
	c.h.timestamp = toy_now_ns();
	memcpy(buf, &c, sizeof(c));
	memcpy(buf + sizeof(c), fn->name, name_len);
	memcpy(buf + sizeof(c) + name_len, fn->code, fn->size);
	/* one write: a reader sees the record's size grow only once it is all there */
	err = write_all(s->dump_fd, buf, size, s->dump_path);
	free(buf);
	return err;
}

static int map_line(struct toy_sink *s, const struct toy_fn *fn)
{
	char line[TOY_NAME_MAX + 64];
	int n = snprintf(line, sizeof(line), "%" PRIxPTR " %zx %s\n", (uintptr_t)fn->code,
			 fn->size, fn->name);
	char *held;

	if (!s->map_at_exit)
		return write_all(s->map_fd, line, (size_t)n, s->map_path);
	held = realloc(s->map_held, s->map_held_len + (size_t)n);
	if (!held) {
		toy_err("realloc(%zu): out of memory", s->map_held_len + (size_t)n);
		return -1;
	}
	memcpy(held + s->map_held_len, line, (size_t)n);
	s->map_held = held;
	s->map_held_len += (size_t)n;
	return 0;
}

int sink__rewrite_map(struct toy_sink *s, struct toy_fn *const *fns, size_t n,
		      const char *renamed, enum toy_rewrite how)
{
	char tmp[sizeof(s->map_path) + 8], line[TOY_NAME_MAX + 64];
	int fd = -1;
	size_t i;

	snprintf(tmp, sizeof(tmp), "%s.new", s->map_path);
	switch (how) {
	case TOY_REWRITE_INPLACE:
		fd = open(s->map_path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
		break;
	case TOY_REWRITE_RENAME:
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
		break;
	case TOY_REWRITE_UNLINK:
		if (unlink(s->map_path))
			toy_err("unlink(%s): %s", s->map_path, strerror(errno));
		fd = open(s->map_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			  0644);
		break;
	default:
		return 0;
	}
	if (fd < 0) {
		toy_err("rewriting %s: %s", s->map_path, strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		int len = snprintf(line, sizeof(line), "%" PRIxPTR " %zx %s\n",
				   (uintptr_t)fns[i]->code, fns[i]->size,
				   i ? fns[i]->name : renamed);

		if (write_all(fd, line, (size_t)len, s->map_path)) {
			close(fd);
			return -1;
		}
	}
	if (how == TOY_REWRITE_RENAME && rename(tmp, s->map_path)) {
		toy_err("rename(%s, %s): %s", tmp, s->map_path, strerror(errno));
		close(fd);
		return -1;
	}
	/* later lines go to the file now under the name */
	close(s->map_fd);
	s->map_fd = fd;
	return 0;
}

int sink__load(struct toy_sink *s, struct toy_fn *fn, uint32_t line, bool say)
{
	if (s->agent) {
		fn->id = jitrace_code_load(fn->code, fn->size, fn->name);
		if (!fn->id) {
			toy_err("jitrace_code_load(%p, %zu, %s) returned id 0", (void *)fn->code,
				fn->size, fn->name);
			return -1;
		}
		return 0;
	}
	fn->id = s->next_index++;
	if (s->dump_fd >= 0 && (dump_debug_info(s, fn, line, say) || dump_code_load(s, fn)))
		return -1;
	if (s->map_fd >= 0 && map_line(s, fn))
		return -1;
	return 0;
}

void sink__unload(struct toy_sink *s, struct toy_fn *fn)
{
	if (s->agent)
		jitrace_code_unload(fn->id);
}
