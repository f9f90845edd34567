// SPDX-License-Identifier: GPL-2.0
/* ELF symbol tables by file identity, kernel symbols, and demangling. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "host/cfi.h"
#include "base/hash.h"
#include "base/trustwalk.h"
#include "host/symbols.h"
#include "base/util.h"

#define DEBUG_DIR "/usr/lib/debug/.build-id"

/* One file's symbols; files whose identities hash alike are chained. */
struct file_syms {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	struct jt_file_info info;	/* owned here: NULL members, the file has none */
	bool cfi_read;			/* its unwind table was looked for */
	struct file_syms *next;
};

typedef char *(*cxa_demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

struct jt_symbols {
	const char *proc_root;
	struct jt_hash files;		/* hash of dev and inode -> struct file_syms chain */
	struct jt_kallsyms *kernel;
	bool kernel_tried;
	void *libstdcxx;		/* dlopen handle, NULL if absent */
	cxa_demangle_fn demangle;
	bool demangle_tried;
	bool said_denied;		/* map_files refused us: said once */
	bool want_cfi;			/* read unwind tables too */
	struct jt_file_info vdso;	/* this kernel's vdso, read from our own */
	bool vdso_tried;
	char *dm_buf;			/* __cxa_demangle's reusable output buffer */
	size_t dm_len;
};

struct jt_symbols *jt_symbols__new(const char *proc_root)
{
	struct jt_symbols *s = calloc(1, sizeof(*s));

	if (!s) {
		jt_err("out of memory");
		return NULL;
	}
	s->proc_root = proc_root;
	return s;
}

/* What a file holds is owned by s: const only to its users. */
static void info_free(struct jt_file_info *i)
{
	jt_elfsyms__free((struct jt_elfsyms *)i->syms);
	jt_cfi__free((struct jt_cfi *)i->cfi);
}

void jt_symbols__want_cfi(struct jt_symbols *s)
{
	s->want_cfi = true;
}

void jt_symbols__free(struct jt_symbols *s)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	if (!s)
		return;
	while (jt_hash__next(&s->files, &pos, &key, &val)) {
		struct file_syms *f = val, *next;

		for (; f; f = next) {
			next = f->next;
			info_free(&f->info);
			free(f);
		}
	}
	jt_hash__fini(&s->files);
	jt_kallsyms__free(s->kernel);
	info_free(&s->vdso);
	free(s->dm_buf);
	if (s->libstdcxx)
		dlclose(s->libstdcxx);
	free(s);
}

static uint64_t file_key(uint64_t dev, uint64_t ino)
{
	return (ino * 0x9e3779b97f4a7c15ULL) ^ dev;
}

static bool same_file(const struct file_syms *f, const struct stat *st)
{
	return f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size &&
	       f->mtime.tv_sec == st->st_mtim.tv_sec && f->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

/*
 * The separate debug file of the ELF file at fd, found by its build id where Debian's
 * -dbg packages put it (the id names the exact build, so the host's copy serves a
 * container's file too). trusted: only by root's symlinks, and only a file root owns and no
 * one else may write (its unwind rules are followed as the file's own: a wrong rule is a
 * wrong frame). Returns an fd or -1.
 */
static int open_debug_file(int fd, bool trusted)
{
	char id[2 * 64 + 1], path[sizeof(DEBUG_DIR) + sizeof(id) + 16];
	struct jt_trustwalk w = { .uid = 0 };
	struct stat st;
	int dfd;

	if (jt_elfsyms__build_id(fd, id, sizeof(id)) < 2)
		return -1;
	snprintf(path, sizeof(path), "%s/%.2s/%s.debug", DEBUG_DIR, id, id + 2);
	if (!trusted)
		return open(path, O_RDONLY | O_CLOEXEC);
	dfd = jt_trustwalk__open(&w, AT_FDCWD, path, false);
	if (dfd >= 0 && (fstat(dfd, &st) || !S_ISREG(st.st_mode) || st.st_uid ||
			 (st.st_mode & (S_IWGRP | S_IWOTH)))) {
		close(dfd);
		return -1;
	}
	return dfd;
}

/*
 * The unwind table of the file open at fd, into f, if wanted and not read yet: its
 * .eh_frame, and the .debug_frame of it or of its debug file.
 */
static void cfi_of(struct jt_symbols *s, int fd, struct file_syms *f)
{
	int dfd, err;

	if (!s->want_cfi || f->cfi_read)
		return;
	f->cfi_read = true;
	dfd = open_debug_file(fd, true);
	f->info.cfi = jt_cfi__load_debug(fd, dfd, &err);
	if (dfd >= 0)
		close(dfd);
}

/* What the file open at fd (closed here) holds, loaded at its first use. */
static const struct jt_file_info *info_of(struct jt_symbols *s, int fd, const struct stat *st)
{
	struct file_syms *head, *f;
	uint64_t key = file_key(st->st_dev, st->st_ino);
	int dfd, err;

	head = jt_hash__get(&s->files, key);
	for (f = head; f; f = f->next)
		if (same_file(f, st)) {
			cfi_of(s, fd, f);
			close(fd);
			return &f->info;
		}
	f = calloc(1, sizeof(*f));
	if (!f) {
		close(fd);
		return NULL;
	}
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime = st->st_mtim;
	dfd = open_debug_file(fd, false);
	f->info.syms = jt_elfsyms__load(fd, dfd, &err);
	if (dfd >= 0)
		close(dfd);
	cfi_of(s, fd, f);
	close(fd);
	f->next = head;
	if (jt_hash__put(&s->files, key, f)) {
		info_free(&f->info);
		free(f);
		return NULL;
	}
	return &f->info;
}

/* PROC_ROOT/PID/map_files/START-END, opened: -1 if it is gone or not a file. */
static int open_map_file(struct jt_symbols *s, uint32_t pid, uint64_t start, uint64_t end,
			 struct stat *st)
{
	char path[128];
	int fd;

	snprintf(path, sizeof(path), "%s/%u/map_files/%llx-%llx", s->proc_root, pid,
		 (unsigned long long)start, (unsigned long long)end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 && (errno == EPERM || errno == EACCES) && !s->said_denied) {
		/* capabilities without root: say what is missing, once */
		jt_err("cannot open %s: %s: native frames stay file + offset (map_files needs "
		       "CAP_CHECKPOINT_RESTORE, and CAP_SYS_PTRACE for other users' processes; "
		       "or run as root)", path, strerror(errno));
		s->said_denied = true;
	}
	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* path opened if it is still the file (dev, ino): -1 if not. */
static int open_same(const char *path, uint64_t dev, uint64_t ino, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_dev != dev || st->st_ino != ino) {
		close(fd);
		return -1;
	}
	return fd;
}

const struct jt_file_info *jt_symbols__file(struct jt_symbols *s, uint32_t pid,
					    uint64_t start, uint64_t end)
{
	struct stat st;
	int fd = open_map_file(s, pid, start, end, &st);

	return fd < 0 ? NULL : info_of(s, fd, &st);
}

/* The file (dev, ino) as it was read last (entries are chained newest first), or NULL. */
static const struct file_syms *known(const struct jt_symbols *s, uint64_t dev, uint64_t ino)
{
	const struct file_syms *f;

	for (f = jt_hash__get(&s->files, file_key(dev, ino)); f; f = f->next)
		if (f->dev == dev && f->ino == ino)
			return f;
	return NULL;
}

const struct jt_file_info *jt_symbols__mapped(struct jt_symbols *s, uint32_t pid,
					      const struct jt_event *ev)
{
	const char *path = jt_event__str(ev);
	const struct file_syms *f;
	char root_path[JT_PATH_MAX + 64];
	struct stat st;
	int fd;

	if (!ev->map_ino)
		return NULL;	/* the vdso */
	fd = open_map_file(s, pid, ev->map_start, ev->map_end, &st);
	if (fd >= 0 && (st.st_dev != ev->map_dev || st.st_ino != ev->map_ino)) {
		close(fd);	/* mapped over since */
		fd = -1;
	}
	if (fd < 0 && path[0] == '/') {
		/* the process is gone: its file by path, in its mount namespace first */
		snprintf(root_path, sizeof(root_path), "%s/%u/root%s", s->proc_root, pid, path);
		fd = open_same(root_path, ev->map_dev, ev->map_ino, &st);
		if (fd < 0)
			fd = open_same(path, ev->map_dev, ev->map_ino, &st);
	}
	if (fd >= 0)
		return info_of(s, fd, &st);
	/* nothing to open: what was read of that file before, if anything */
	f = known(s, ev->map_dev, ev->map_ino);
	return f ? &f->info : NULL;
}

bool jt_symbols__known(const struct jt_symbols *s, const struct jt_event *ev,
		       const struct jt_file_info **file)
{
	const struct file_syms *f = known(s, ev->map_dev, ev->map_ino);

	*file = f ? &f->info : NULL;
	return f;
}

/* Our own [vdso] mapping's range, from /proc/self/maps. */
static int own_vdso(uint64_t *start, uint64_t *end)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]") && sscanf(line, "%" SCNx64 "-%" SCNx64, start, end) == 2) {
			err = 0;
			break;
		}
	fclose(f);
	return err;
}

const struct jt_file_info *jt_symbols__vdso(struct jt_symbols *s)
{
	uint64_t start, end;
	int fd, err;

	if (s->vdso_tried)
		return &s->vdso;
	s->vdso_tried = true;
	/* every process's vdso is the kernel's one image: ours, copied where ELF is read */
	if (own_vdso(&start, &end) || end <= start || end - start > (1 << 20))
		return &s->vdso;
	fd = memfd_create("jitrace-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return &s->vdso;
	if (write(fd, (const void *)(uintptr_t)start, end - start) == (ssize_t)(end - start)) {
		s->vdso.syms = jt_elfsyms__load(fd, -1, &err);
		s->vdso.cfi = jt_cfi__load(fd, &err);
	}
	close(fd);
	return &s->vdso;
}

const struct jt_kallsyms *jt_symbols__kernel(struct jt_symbols *s)
{
	char path[256];
	int err;

	if (s->kernel_tried)
		return s->kernel;
	s->kernel_tried = true;
	snprintf(path, sizeof(path), "%s/kallsyms", s->proc_root);
	s->kernel = jt_kallsyms__load(path, &err);
	if (!s->kernel)
		jt_err("%s: %s; kernel frames stay addresses", path,
		       err == -EPERM ? "addresses hidden (kptr_restrict; run as root)" :
				       strerror(-err));
	return s->kernel;
}

const char *jt_symbols__demangle(struct jt_symbols *s, const char *name, char *buf, size_t cap)
{
	char *out;
	int status;

	if (name[0] != '_' || name[1] != 'Z')
		return name;
	if (!s->demangle_tried) {
		s->demangle_tried = true;
		s->libstdcxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
		if (s->libstdcxx)
			s->demangle = (cxa_demangle_fn)dlsym(s->libstdcxx, "__cxa_demangle");
	}
	if (!s->demangle)
		return name;
	out = s->demangle(name, s->dm_buf, &s->dm_len, &status);
	if (!out || status)
		return name;
	s->dm_buf = out;	/* it may have grown the buffer */
	snprintf(buf, cap, "%s", out);
	return buf;
}
