// SPDX-License-Identifier: GPL-2.0
/*
 * Unwind tables (host/cfi.h) of real files: the heap a table holds (malloc's count of bytes
 * in use, before and after its load) and its load time (median of ROUNDS loads), with the
 * sizes of the file's .eh_frame, .eh_frame_hdr and .debug_frame beside them, and a lookup's
 * time over random offsets that have a rule. It links host/cfi.c only through its
 * interface, so it measures an older cfi.c built the same way. Files absent here are left out.
 * Usage: bench_cfi FILE...
 */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "host/cfi.h"

#define ROUNDS 7
#define LOOKUPS 200000

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The sizes of the CFI sections of the file at path, and its code's offset and size. */
static void sections(const char *path, size_t sz[3], uint64_t *text_off, uint64_t *text_len)
{
	static const char *const names[] = { ".eh_frame", ".eh_frame_hdr", ".debug_frame" };
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	size_t shstrndx, i;
	Elf *elf;

	memset(sz, 0, 3 * sizeof(*sz));
	elf_version(EV_CURRENT);
	elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		for (i = 0; i < 3; i++)
			if (!strcmp(name, names[i]))
				sz[i] = sh.sh_size;
		if (!strcmp(name, ".text")) {
			*text_off = sh.sh_offset;
			*text_len = sh.sh_size;
		}
	}
out:
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
}

static struct jt_cfi *load(const char *path)
{
	int fd = open(path, O_RDONLY), err = 0;
	struct jt_cfi *c;

	if (fd < 0) {
		perror(path);
		exit(1);
	}
	c = jt_cfi__load(fd, &err);
	close(fd);
	if (!c) {
		fprintf(stderr, "%s: no table (%d)\n", path, err);
		exit(1);
	}
	return c;
}

/* A lookup's time in ns over random code offsets with a rule. */
static double lookup_ns(const struct jt_cfi *c, uint64_t text_off, uint64_t text_len)
{
	static uint64_t offs[4096];
	unsigned int seed = 7, tries = 0;
	size_t n = 0, i;
	struct jt_cfi_rule r;
	uint64_t sum = 0;
	double t0;

	while (n < 4096 && text_len && tries++ < 1000000) {
		uint64_t off = text_off + rand_r(&seed) % text_len;

		if (!jt_cfi__rule(c, off, &r))
			offs[n++] = off;
	}
	if (!n)
		return 0;
	t0 = now_s();
	for (i = 0; i < LOOKUPS; i++)
		sum += jt_cfi__rule(c, offs[i % n], &r) + (uint64_t)r.cfa_off;
	return (now_s() - t0) / LOOKUPS * 1e9 + (sum == 1 ? 1e-9 : 0);
}

int main(int argc, char **argv)
{
	int i, k;

	if (argc < 2) {
		fprintf(stderr, "usage: bench_cfi FILE...\n");
		return 2;
	}
	printf("\n### Unwind tables of real files\n\nThe heap each file's table holds, its load "
	       "(median of %d) and a lookup (bench/bench_cfi.c):\n\n", ROUNDS);
	printf("| file | .eh_frame + hdr (KiB) | .debug_frame (KiB) | table held (KiB) | "
	       "load (ms) | lookup (ns) |\n| --- | --- | --- | --- | --- | --- |\n");
	for (i = 1; i < argc; i++) {
		uint64_t text_off = 0, text_len = 0;
		double t[ROUNDS], t0;
		size_t sz[3], before;
		struct jt_cfi *c;

		if (access(argv[i], R_OK))
			continue;
		sections(argv[i], sz, &text_off, &text_len);
		for (k = 0; k < ROUNDS; k++) {
			t0 = now_s();
			jt_cfi__free(load(argv[i]));
			t[k] = now_s() - t0;
		}
		bench_sort(t, ROUNDS);
		malloc_trim(0);
		before = mallinfo2().uordblks;
		c = load(argv[i]);
		printf("| %s | %.1f + %.1f | %.1f | %.1f | %.2f | %.0f |\n", argv[i], sz[0] / 1024.0,
		       sz[1] / 1024.0, sz[2] / 1024.0, (mallinfo2().uordblks - before) / 1024.0,
		       t[ROUNDS / 2] * 1e3, lookup_ns(c, text_off, text_len));
		jt_cfi__free(c);
	}
	return 0;
}
