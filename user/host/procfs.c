// SPDX-License-Identifier: GPL-2.0
/* Reading a process's comm, cmdline and executable file mappings from /proc. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/stat.h>

#include "base/util.h"
#include "host/procfs.h"

int jt_procfs__read_raw(const char *proc_root, uint32_t pid, const char *what, char *buf,
			size_t len)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%u/%s", proc_root, pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n >= 0)
		buf[n] = 0;
	return n;
}

int jt_procfs__stat_num(const char *stat, unsigned int n, unsigned long long *v)
{
	const char *p = strrchr(stat, ')');
	unsigned int i;

	if (n < 3)
		return -EINVAL;
	for (i = 2; p && i < n; i++)	/* the space before field i + 1 */
		p = strchr(p + 1, ' ');
	return p && sscanf(p, " %llu", v) == 1 ? 0 : -EINVAL;
}

int jt_procfs__read_cmdline(const char *proc_root, uint32_t pid, char *buf, size_t len)
{
	int i, n = jt_procfs__read_raw(proc_root, pid, "cmdline", buf, len);

	if (n < 0)
		return n;
	while (n > 0 && buf[n - 1] == 0)
		n--;
	for (i = 0; i < n; i++)
		if (buf[i] == 0 || buf[i] == '\n')
			buf[i] = ' ';
	buf[n] = 0;
	return n;
}

int jt_procfs__read_comm(const char *proc_root, uint32_t pid, char comm[16])
{
	char buf[64];
	int n = jt_procfs__read_raw(proc_root, pid, "comm", buf, sizeof(buf));

	if (n < 0)
		return n;
	n = strcspn(buf, "\n");
	if (n > 15)
		n = 15;
	memset(comm, 0, 16);
	memcpy(comm, buf, n);
	return 0;
}

int jt_procfs__read_tgid(const char *proc_root, uint32_t tid, uint32_t *tgid)
{
	char buf[4096];
	unsigned long v;
	char *at, *end;
	int n = jt_procfs__read_raw(proc_root, tid, "status", buf, sizeof(buf));

	if (n < 0)
		return n;
	at = strstr(buf, "\nTgid:");
	if (!at)
		return -EINVAL;
	errno = 0;
	v = strtoul(at + 6, &end, 10);
	if (errno || end == at + 6 || !v || v > UINT32_MAX)
		return -EINVAL;
	*tgid = v;
	return 0;
}

int jt_procfs__list_pids(const char *proc_root, uint32_t **out)
{
	size_t n = 0, cap = 0;
	uint32_t *v = NULL;
	struct dirent *de;
	unsigned long pid;
	char *end;
	DIR *d;

	*out = NULL;
	d = opendir(proc_root);
	if (!d)
		return 0;	/* nothing to look at */
	while ((de = readdir(d))) {
		pid = strtoul(de->d_name, &end, 10);
		if (*end || !pid || pid > UINT32_MAX || pid == (unsigned long)getpid())
			continue;
		if (jt_array_grow(&v, &cap, n + 1, sizeof(*v))) {
			closedir(d);
			free(v);
			return -ENOMEM;
		}
		v[n++] = (uint32_t)pid;
	}
	closedir(d);
	*out = v;
	return (int)n;
}

#define MEMFD "/memfd:"	/* how the kernel names a memfd's file */

bool jt_procfs__anon_path(const char *path)
{
	return !path[0] || !strncmp(path, MEMFD, strlen(MEMFD));
}

const char *jt_procfs__jit_path(const char *path)
{
	/* CoreCLR's double mapping of its executable memory (ExecutableAllocator) */
	static const char dotnet[] = MEMFD "doublemapper";
	size_t n = strlen(dotnet);

	if (!strncmp(path, dotnet, n) && (!path[n] || path[n] == ' '))
		return "[dotnet jit]";
	return NULL;
}

int jt_procfs__holds_fd(const char *proc_root, uint32_t pid, int fd)
{
	struct stat ours, st;
	struct dirent *de;
	char path[256];
	int found = 0;
	DIR *d;

	if (fstat(fd, &ours))
		return -errno;
	snprintf(path, sizeof(path), "%s/%u/fd", proc_root, pid);
	d = opendir(path);
	if (!d)
		return -errno;
	snprintf(path, sizeof(path), "%d", fd);	/* in our own table, fd itself is not theirs */
	while (!found && (de = readdir(d)))
		found = de->d_name[0] != '.' &&
			(pid != (uint32_t)getpid() || strcmp(de->d_name, path)) &&
			!fstatat(dirfd(d), de->d_name, &st, 0) && st.st_dev == ours.st_dev &&
			st.st_ino == ours.st_ino;
	closedir(d);
	return found;
}

/*
 * "start-end perms offset dev inode path": keep executable mappings that name a file, the
 * kernel's special ones ([vdso], [vsyscall], [uprobes], [uprobes-trampoline]) and
 * anonymous ones (JIT code; path ""): a frame there is named by the mapping, never left an
 * unknown address.
 */
static int parse_maps_line(char *line, struct jt_vma *vma)
{
	char perms[8];
	uint64_t start, end, pgoff;
	int path_at = 0;
	char *path;

	if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %*s %*s %n", &start, &end,
		   perms, &pgoff, &path_at) < 4 || !path_at || perms[2] != 'x')
		return 0;
	path = line + path_at;
	path[strcspn(path, "\n")] = 0;
	if (path[0] && path[0] != '/' && !(path[0] == '[' && strchr(path, ']')))
		return 0;
	*vma = (struct jt_vma){ .start = start, .end = end, .pgoff = pgoff };
	vma->path = strdup(path);
	if (!vma->path)
		return -ENOMEM;
	return 1;
}

int jt_procfs__read_maps(const char *proc_root, uint32_t pid, struct jt_vmas *out)
{
	char path[256], *line = NULL;
	size_t cap = 0, alloc = 0;
	struct jt_vmas vm = { 0 };
	int err = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%u/maps", proc_root, pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		struct jt_vma vma;
		int r = parse_maps_line(line, &vma);

		if (r < 0) {
			err = r;
			break;
		}
		if (!r)
			continue;
		if (vm.n == alloc) {
			size_t n = alloc ? 2 * alloc : 32;
			struct jt_vma *v = realloc(vm.v, n * sizeof(*v));

			if (!v) {
				free(vma.path);
				err = -ENOMEM;
				break;
			}
			vm.v = v;
			alloc = n;
		}
		vm.v[vm.n++] = vma;
	}
	free(line);
	fclose(f);
	if (err) {
		jt_vmas__free(&vm);
		return err;
	}
	jt_vmas__free(out);
	*out = vm;
	return 0;
}

void jt_vmas__free(struct jt_vmas *vm)
{
	size_t i;

	for (i = 0; i < vm->n; i++)
		free(vm->v[i].path);
	free(vm->v);
	vm->v = NULL;
	vm->n = 0;
}

struct jt_vma *jt_vmas__find(const struct jt_vmas *vm, uint64_t addr)
{
	size_t lo = 0, hi = vm->n;

	while (lo < hi) {	/* /proc/PID/maps is sorted and non-overlapping */
		size_t mid = lo + (hi - lo) / 2;

		if (vm->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < vm->n && vm->v[lo].start <= addr)
		return &vm->v[lo];
	return NULL;
}

/* Free the vmas in [from, to) and close the gap. */
static void vmas_cut(struct jt_vmas *vm, size_t from, size_t to)
{
	size_t i;

	for (i = from; i < to; i++)
		free(vm->v[i].path);
	memmove(&vm->v[from], &vm->v[to], (vm->n - to) * sizeof(*vm->v));
	vm->n -= to - from;
}

struct jt_vma *jt_vmas__add(struct jt_vmas *vm, uint64_t start, uint64_t end, uint64_t pgoff,
			    const char *path)
{
	struct jt_vma *v;
	size_t lo = 0, hi;
	char *p = strdup(path);

	if (!p)
		return NULL;
	v = realloc(vm->v, (vm->n + 1) * sizeof(*v));
	if (!v) {
		free(p);
		return NULL;
	}
	vm->v = v;
	while (lo < vm->n && vm->v[lo].end <= start)
		lo++;
	for (hi = lo; hi < vm->n && vm->v[hi].start < end; hi++)
		;
	vmas_cut(vm, lo, hi);	/* what the new mapping replaced */
	memmove(&vm->v[lo + 1], &vm->v[lo], (vm->n - lo) * sizeof(*vm->v));
	vm->v[lo] = (struct jt_vma){ .start = start, .end = end, .pgoff = pgoff, .path = p };
	vm->n++;
	return &vm->v[lo];
}

int jt_vmas__copy(struct jt_vmas *dst, const struct jt_vmas *src)
{
	size_t i;

	jt_vmas__free(dst);
	if (!src->n)
		return 0;
	dst->v = calloc(src->n, sizeof(*dst->v));
	if (!dst->v)
		return -ENOMEM;
	for (; dst->n < src->n; dst->n++) {
		i = dst->n;
		dst->v[i] = src->v[i];
		dst->v[i].module_id = 0;	/* a module record is a process's */
		dst->v[i].path = strdup(src->v[i].path);
		if (!dst->v[i].path) {
			jt_vmas__free(dst);
			return -ENOMEM;
		}
	}
	return 0;
}
