// SPDX-License-Identifier: GPL-2.0
/*
 * Unwind tables (user/host/cfi.h) of real files: this test program and the C library. Rules at
 * known instructions, every row of both files against binutils' own reading of them, a copy
 * without the linker's .eh_frame_hdr (not read: every FDE is run at load), hostile copies of
 * the sections, the speed of a lookup, crafted .debug_frame sections and a program with one,
 * and the bounds of a table's size and load.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "host/cfi.h"
#include "fuzz/cfi_elf.h"

/* A function of this file to read the rules of: built, as all of it, with frame pointers (a
 * leaf might have none: it calls one). */
__attribute__((noinline, used)) int jt_test_cfi_callee(volatile int *x)
{
	return *x * 3 + 1;
}

__attribute__((noinline, used)) int jt_test_cfi_target(volatile int *x)
{
	return jt_test_cfi_callee(x) * 5 + *x;
}

/* The file offset of code at addr, from /proc/self/maps; its file's path into path. */
static uint64_t file_off(const void *addr, char *path, size_t cap)
{
	FILE *f = fopen("/proc/self/maps", "r");
	uintptr_t a = (uintptr_t)addr;
	char line[640];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		int n = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &s, &e, &off, &n) == 3 && n &&
		    a >= s && a < e) {
			line[strcspn(line, "\n")] = '\0';
			snprintf(path, cap, "%s", line + n);
			fclose(f);
			return a - s + off;
		}
	}
	fclose(f);
	fail_msg("no mapping holds %p", addr);
	return 0;
}

static struct jt_cfi *load_path(const char *path)
{
	struct jt_cfi *c;
	int fd = open(path, O_RDONLY), err = 0;

	if (fd < 0)
		fail_msg("cannot open %s", path);
	c = jt_cfi__load(fd, &err);
	close(fd);
	if (!c)
		fail_msg("%s: no CFI (%d)", path, err);
	return c;
}

/* A function of glibc itself (a sanitizer's runtime may come first in the lookup order). */
static void *libc_sym(const char *name)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD), *sym;

	assert_non_null(h);
	sym = dlsym(h, name);
	dlclose(h);
	assert_non_null(sym);
	return sym;
}

static const char *libc_path(void)
{
	Dl_info info;

	assert_true(dladdr(libc_sym("qsort_r"), &info));
	return info.dli_fname;
}

static void assert_rule(const struct jt_cfi *c, uint64_t off, int reg, int cfa_off, bool bp_saved,
			int bp_off)
{
	struct jt_cfi_rule r;

	assert_int_equal(jt_cfi__rule(c, off, &r), 0);
	assert_int_equal(r.cfa_reg, reg);
	assert_int_equal(r.cfa_off, cfa_off);
	assert_int_equal(r.ra_off, -8);
	assert_int_equal(r.bp_saved, bp_saved);
	if (bp_saved)
		assert_int_equal(r.bp_off, bp_off);
	assert_false(r.bp_lost);
	assert_false(r.outermost);
}

static void rules_follow_a_prologue_push_by_push(void **state)
{
	const uint8_t *code = (const uint8_t *)jt_test_cfi_target;
	const uint8_t *nano = libc_sym("nanosleep");
	uint64_t off = 0;
	struct jt_cfi *c;
	char path[512];

	(void)state;
	off = file_off(code, path, sizeof(path));
	c = load_path(path);
	if (!memcmp(code, "\xf3\x0f\x1e\xfa", 4)) {	/* endbr64 changes nothing */
		assert_rule(c, off, JT_CFI_SP, 8, false, 0);
		code += 4;
		off += 4;
	}
	assert_int_equal(code[0], 0x55);	/* push %rbp */
	assert_memory_equal(code + 1, "\x48\x89\xe5", 3);	/* mov %rsp,%rbp */
	assert_rule(c, off, JT_CFI_SP, 8, false, 0);
	assert_rule(c, off + 1, JT_CFI_SP, 16, true, -16);
	assert_rule(c, off + 4, JT_CFI_BP, 16, true, -16);
	jt_cfi__free(c);

	/* glibc's nanosleep has no frame pointer: sub $8,%rsp, then a call */
	off = file_off(nano, path, sizeof(path));
	c = load_path(path);
	assert_memory_equal(nano, "\x48\x83\xec\x08", 4);
	assert_rule(c, off, JT_CFI_SP, 8, false, 0);
	assert_rule(c, off + 4, JT_CFI_SP, 16, false, 0);
	jt_cfi__free(c);
}

/* The program headers and named section headers of the ELF file at path. */
struct elf_info {
	GElf_Phdr ph[32];
	size_t nr_ph;
	GElf_Shdr plt, text, eh, hdr, shstr;
	uint64_t eh_name, hdr_name;	/* file offsets of the two sections' names */
};

static void elf_info(const char *path, struct elf_info *in)
{
	int fd = open(path, O_RDONLY);
	Elf_Scn *scn = NULL;
	size_t i, n, shstrndx;
	Elf *elf;

	memset(in, 0, sizeof(*in));
	assert_true(fd >= 0);
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getphdrnum(elf, &n), 0);
	for (i = 0; i < n && in->nr_ph < 32; i++)
		assert_non_null(gelf_getphdr(elf, i, &in->ph[in->nr_ph++]));
	assert_int_equal(elf_getshdrstrndx(elf, &shstrndx), 0);
	assert_non_null(gelf_getshdr(elf_getscn(elf, shstrndx), &in->shstr));
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		assert_non_null(gelf_getshdr(scn, &sh));
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".plt"))
			in->plt = sh;
		else if (!strcmp(name, ".text"))
			in->text = sh;
		else if (!strcmp(name, ".eh_frame")) {
			in->eh = sh;
			in->eh_name = in->shstr.sh_offset + sh.sh_name;
		} else if (!strcmp(name, ".eh_frame_hdr")) {
			in->hdr = sh;
			in->hdr_name = in->shstr.sh_offset + sh.sh_name;
		}
	}
	elf_end(elf);
	close(fd);
	assert_true(in->text.sh_size && in->eh.sh_size);
}

static bool vaddr_to_off(const struct elf_info *in, uint64_t vaddr, uint64_t *off)
{
	size_t i;

	for (i = 0; i < in->nr_ph; i++) {
		const GElf_Phdr *ph = &in->ph[i];

		if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr &&
		    vaddr - ph->p_vaddr < ph->p_filesz) {
			*off = vaddr - ph->p_vaddr + ph->p_offset;
			return true;
		}
	}
	return false;
}

/* A register cell of readelf's table: "u" (unsaved or undefined), "c-16" (saved), or other. */
static void check_bp(const struct jt_cfi_rule *r, const char *cell, const char *where)
{
	if (!cell || !strcmp(cell, "u") || !strcmp(cell, "s")) {
		if (r->bp_saved)
			fail_msg("%s: rbp saved at %d, readelf: %s", where, r->bp_off, cell);
	} else if (cell[0] == 'c') {
		if (!r->bp_saved || r->bp_off != atoi(cell + 1))
			fail_msg("%s: rbp %s, readelf: %s", where,
				 r->bp_saved ? "saved elsewhere" : "not saved", cell);
	} else if (!r->bp_lost) {
		fail_msg("%s: rbp followed, readelf: %s", where, cell);
	}
}

/*
 * One row of readelf's table: the rule of this module at its address must say the same.
 * False for a row at or past the end of its FDE (end), which readelf prints when an FDE's last
 * advance reaches its end (libcoreclr.so has them): no rule is the FDE's there.
 */
static bool check_row(const struct jt_cfi *c, const struct elf_info *in, char *row, char **cols,
		      int nr_cols, uint64_t end, const char *path)
{
	const char *cfa = NULL, *ra = NULL, *bp = NULL;
	char *tok, *save, where[600];
	unsigned long long loc = 0;
	struct jt_cfi_rule r;
	uint64_t off = 0;
	int i = -1, err;

	for (tok = strtok_r(row, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save), i++) {
		if (tok[0] == '(') {	/* "r10 (r10)": a register's name, in the cell before */
			i--;
			continue;
		}
		if (i < 0)
			loc = strtoull(tok, NULL, 16);
		else if (i < nr_cols && !strcmp(cols[i], "CFA"))
			cfa = tok;
		else if (i < nr_cols && !strcmp(cols[i], "ra"))
			ra = tok;
		else if (i < nr_cols && !strcmp(cols[i], "rbp"))
			bp = tok;
	}
	if (!cfa || !ra || !vaddr_to_off(in, loc, &off))
		fail_msg("%s: a row not understood at %#llx", path, loc);
	if (loc >= end)
		return false;
	snprintf(where, sizeof(where), "%s at %#llx (offset %#llx): CFA %s ra %s", path, loc,
		 (unsigned long long)off, cfa, ra);
	err = jt_cfi__rule(c, off, &r);
	/* rsp+N or rbp+N, or -N (libcoreclr.so has an rsp-80, which the walk then refuses) */
	if ((strncmp(cfa, "rsp", 3) && strncmp(cfa, "rbp", 3)) || (cfa[3] != '+' && cfa[3] != '-') ||
	    (strcmp(ra, "u") && ra[0] != 'c')) {
		if (err != -ENOTSUP)	/* an expression or another register (vfork's rdi) */
			fail_msg("%s: got %d, not -ENOTSUP", where, err);
		return true;
	}
	if (!strcmp(ra, "u")) {
		if (err || !r.outermost)
			fail_msg("%s: got %d, not the outermost frame", where, err);
	} else if (err || r.outermost || r.ra_off != atoi(ra + 1)) {
		fail_msg("%s: got %d, ra at %d", where, err, r.ra_off);
	}
	if (r.cfa_reg != (cfa[1] == 's' ? JT_CFI_SP : JT_CFI_BP) || r.cfa_off != atoi(cfa + 3))
		fail_msg("%s: got CFA r%d%+d", where, r.cfa_reg, r.cfa_off);
	check_bp(&r, bp, where);
	return true;
}

/* Every row readelf prints for path's .eh_frame, checked; returns how many. */
static size_t check_against_readelf(const char *path)
{
	char cmd[600], line[1024], header[1024], *cols[64];
	struct elf_info in;
	struct jt_cfi *c = load_path(path);
	unsigned long long end = 0;
	size_t rows = 0;
	int nr_cols = 0;
	FILE *p;

	elf_info(path, &in);
	snprintf(cmd, sizeof(cmd), "readelf --wide --debug-dump=frames-interp '%s' 2>/dev/null",
		 path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char *save, *tok;

		if (strstr(line, " FDE ") || strstr(line, " CIE ")) {
			nr_cols = strstr(line, " FDE ") ? 0 : -1;	/* a CIE's rows: skipped */
			tok = strstr(line, "..");
			end = tok ? strtoull(tok + 2, NULL, 16) : 0;	/* pc=START..END */
		} else if (!strncmp(line, "   LOC", 6) && nr_cols == 0) {
			snprintf(header, sizeof(header), "%s", line);
			for (tok = strtok_r(header + 6, " \n", &save); tok && nr_cols < 64;
			     tok = strtok_r(NULL, " \n", &save))
				cols[nr_cols++] = tok;
		} else if (nr_cols > 0 && strlen(line) > 17 && line[16] == ' ') {
			rows += check_row(c, &in, line, cols, nr_cols, end, path);
		}
	}
	pclose(p);	/* not its status: readelf 2.40 exits 1 on libc, having printed it all */
	jt_cfi__free(c);
	return rows;
}

/* The files named in JT_TEST_CFI_FILES (colon-separated), checked too: libjvm.so, mono-sgen */
static void more_files_agree_with_readelf(void)
{
	const char *env = getenv("JT_TEST_CFI_FILES");
	char *list, *path, *save;

	if (!env)
		return;
	list = strdup(env);
	assert_non_null(list);
	for (path = strtok_r(list, ":", &save); path; path = strtok_r(NULL, ":", &save))
		print_message("%zu rows of %s agree\n", check_against_readelf(path), path);
	free(list);
}

/* Every file mapped executable in this process: the program, libc, ld.so, libelf, ... */
static void every_row_agrees_with_readelf(void **state)
{
	char line[640], done[16][512];
	size_t nr_done = 0, i, rows, total = 0, libc = 0;
	FILE *f;

	(void)state;
	if (system("readelf --version >/dev/null 2>&1"))
		skip();	/* binutils, the second opinion, is not installed */
	f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f) && nr_done < 16) {
		char perms[8];
		int n = 0;

		/* by their real paths: readelf's /proc/self/exe would be readelf */
		if (sscanf(line, "%*x-%*x %7s %*x %*s %*s %n", perms, &n) != 1 || !n ||
		    perms[2] != 'x' || line[n] != '/')
			continue;
		line[strcspn(line, "\n")] = '\0';
		for (i = 0; i < nr_done && strcmp(done[i], line + n); i++)
			;
		if (i < nr_done)
			continue;
		snprintf(done[nr_done++], sizeof(done[0]), "%s", line + n);
		rows = check_against_readelf(line + n);
		print_message("%zu rows of %s agree\n", rows, line + n);
		total += rows;
		if (strstr(line + n, "/libc.so"))
			libc = rows;
	}
	fclose(f);
	assert_true(nr_done >= 3);
	assert_true(libc > 10000);
	assert_true(total > libc + 1000);
	more_files_agree_with_readelf();
}

static void plt_entries_are_expressions_not_followed(void **state)
{
	struct jt_cfi_rule r;
	struct elf_info in;
	struct jt_cfi *c;
	uint64_t off = 0;

	(void)state;
	elf_info(libc_path(), &in);
	assert_true(in.plt.sh_size >= 32);
	c = load_path(libc_path());
	assert_true(vaddr_to_off(&in, in.plt.sh_addr, &off));
	assert_rule(c, off, JT_CFI_SP, 16, false, 0);	/* PLT0 after its push */
	assert_int_equal(jt_cfi__rule(c, off + 16, &r), -ENOTSUP);	/* DW_CFA_def_cfa_expression */
	assert_int_equal(jt_cfi__rule(c, off + in.plt.sh_size - 1, &r), -ENOTSUP);
	assert_int_equal(jt_cfi__rule(c, 0, &r), -ENOENT);	/* the ELF header */
	assert_int_equal(jt_cfi__rule(c, in.eh.sh_offset, &r), -ENOENT);	/* not code */
	assert_int_equal(jt_cfi__rule(c, UINT64_MAX, &r), -ENOENT);	/* past the file */
	jt_cfi__free(c);
}

/* A copy of the file at path in a memfd, its bytes in *bytes (to free), its size in *len. */
static int memfd_copy(const char *path, uint8_t **bytes, size_t *len)
{
	int fd = memfd_create("jt_test_cfi", MFD_CLOEXEC);
	uint8_t *b;
	size_t n;
	FILE *f;

	assert_true(fd >= 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	rewind(f);
	b = malloc(n);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, n, f), n);
	fclose(f);
	assert_int_equal(pwrite(fd, b, n, 0), (ssize_t)n);
	*bytes = b;
	*len = n;
	return fd;
}

static void load_reports_what_a_file_lacks(void **state)
{
	char path[] = "/tmp/jt-cfi-XXXXXX";
	struct elf_info in;
	uint8_t *b;
	size_t n;
	int fd = mkstemp(path), err = 0;

	(void)state;
	assert_true(fd >= 0);
	assert_null(jt_cfi__load(fd, &err));	/* empty */
	assert_int_equal(err, -ENOEXEC);
	assert_int_equal(write(fd, "\177ELF garbage that is not an ELF file", 36), 36);
	assert_null(jt_cfi__load(fd, &err));
	assert_int_equal(err, -ENOEXEC);
	close(fd);
	unlink(path);
	assert_null(jt_cfi__load(fd, &err));	/* closed */
	assert_int_equal(err, -EBADF);

	/* this program, its .eh_frame and .eh_frame_hdr renamed: a file without CFI */
	elf_info("/proc/self/exe", &in);
	fd = memfd_copy("/proc/self/exe", &b, &n);
	assert_int_equal(pwrite(fd, ".x", 2, in.eh_name), 2);
	assert_int_equal(pwrite(fd, ".x", 2, in.hdr_name), 2);
	assert_null(jt_cfi__load(fd, &err));
	assert_int_equal(err, -ENOENT);
	close(fd);
	free(b);
}

/* The rule at off as a comparable value: its return code and fields. */
static void rule_at(const struct jt_cfi *c, uint64_t off, int *err, struct jt_cfi_rule *r)
{
	memset(r, 0, sizeof(*r));
	*err = jt_cfi__rule(c, off, r);
}

static void eh_frame_hdr_changes_no_rule(void **state)
{
	struct jt_cfi *with, *without;
	size_t n, found = 0;
	struct elf_info in;
	uint64_t off, end;
	uint8_t *b;
	int fd, err;

	(void)state;
	elf_info(libc_path(), &in);
	assert_true(in.hdr.sh_size > 0);
	with = load_path(libc_path());
	fd = memfd_copy(libc_path(), &b, &n);
	assert_int_equal(pwrite(fd, ".x", 2, in.hdr_name), 2);	/* no .eh_frame_hdr now */
	without = jt_cfi__load(fd, &err);
	assert_non_null(without);
	close(fd);
	free(b);

	end = in.text.sh_offset + in.text.sh_size;
	for (off = in.text.sh_offset - 0x1000; off < end + 0x1000; off += 3) {
		struct jt_cfi_rule r1, r2;
		int e1, e2;

		rule_at(with, off, &e1, &r1);
		rule_at(without, off, &e2, &r2);
		if (e1 != e2 || memcmp(&r1, &r2, sizeof(r1)))
			fail_msg("offset %#llx: %d with the table, %d without",
				 (unsigned long long)off, e1, e2);
		found += !e1;
	}
	assert_true(found > in.text.sh_size / 3 / 2);	/* most of libc's code has a rule */
	jt_cfi__free(with);
	jt_cfi__free(without);
}

/* Query every stride-th offset of [from, to) of a table from hostile bytes: never a crash. */
static void query_all(const struct jt_cfi *c, uint64_t from, uint64_t to, uint64_t stride)
{
	uint64_t off = 0;

	for (off = from; off < to; off += stride) {
		struct jt_cfi_rule r;
		int err = jt_cfi__rule(c, off, &r);

		if (err && err != -ENOENT && err != -ENOTSUP && err != -EINVAL)
			fail_msg("offset %#llx: %d", (unsigned long long)off, err);
		if (!err && r.cfa_reg != JT_CFI_SP && r.cfa_reg != JT_CFI_BP)
			fail_msg("offset %#llx: CFA in r%d", (unsigned long long)off, r.cfa_reg);
	}
}

static void mutated_sections_never_crash(void **state)
{
	unsigned int seed = 20240601, round;
	struct elf_info in;
	uint8_t *orig, *b;
	size_t n, loaded = 0;
	int fd;

	(void)state;
	elf_info("/proc/self/exe", &in);
	fd = memfd_copy("/proc/self/exe", &orig, &n);
	b = malloc(n);
	assert_non_null(b);
	for (round = 0; round < 600; round++) {
		GElf_Shdr *sh = round & 1 ? &in.hdr : &in.eh;
		unsigned int i, flips = 1 + rand_r(&seed) % (round % 5 == 0 ? 64 : 4);
		struct jt_cfi *c;
		int err;

		memcpy(b, orig, n);
		for (i = 0; i < flips; i++) {
			size_t at = sh->sh_offset + rand_r(&seed) % sh->sh_size;

			switch (rand_r(&seed) % 4) {
			case 0:
				b[at] ^= 1 << (rand_r(&seed) % 8);
				break;
			case 1:
				b[at] = 0xff;
				break;
			case 2:
				b[at] = 0;
				break;
			default:
				b[at] = rand_r(&seed);
			}
		}
		if (round % 7 == 3) {	/* the section cut short: its header's size made smaller */
			Elf64_Shdr *shdrs = (Elf64_Shdr *)(b + ((Elf64_Ehdr *)b)->e_shoff);
			Elf64_Ehdr *eh = (Elf64_Ehdr *)b;

			for (i = 0; i < eh->e_shnum; i++)
				if (shdrs[i].sh_offset == in.eh.sh_offset)
					shdrs[i].sh_size = rand_r(&seed) % in.eh.sh_size;
		}
		assert_int_equal(pwrite(fd, b, n, 0), (ssize_t)n);
		c = jt_cfi__load(fd, &err);
		if (!c) {
			assert_true(err == -ENOENT || err == -ENOEXEC);
			continue;
		}
		loaded++;
		query_all(c, in.text.sh_offset, in.text.sh_offset + in.text.sh_size, 61);
		query_all(c, 0, n + 4096, 4093);
		jt_cfi__free(c);
	}
	assert_true(loaded > 500);
	close(fd);
	free(orig);
	free(b);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The collector asks a few rules per off-CPU record: a lookup must be a search, not a scan. */
static void a_lookup_is_a_binary_search(void **state)
{
	struct jt_cfi *c = load_path(libc_path());
	unsigned int seed = 7, k;
	uint64_t *offs, sum = 0;
	size_t i, n = 0, cap = 1 << 16, calls = 0;
	struct elf_info in;
	double t0, secs, per_s;

	(void)state;
	elf_info(libc_path(), &in);
	offs = malloc(cap * sizeof(*offs));
	assert_non_null(offs);
	while (n < cap) {	/* random code offsets that have a rule, all over libc */
		uint64_t off = in.text.sh_offset + rand_r(&seed) % in.text.sh_size;
		struct jt_cfi_rule r;

		if (!jt_cfi__rule(c, off, &r))
			offs[n++] = off;
	}
	t0 = now_s();
	do {
		for (k = 0; k < 8; k++)
			for (i = 0; i < n; i++) {
				struct jt_cfi_rule r;

				sum += jt_cfi__rule(c, offs[i], &r) + r.cfa_off;
				calls++;
			}
		secs = now_s() - t0;
	} while (secs < 0.3);
	per_s = calls / secs;
	print_message("%.0f rules/s (%.0f ns each) over %zu random offsets in %s (sum %llu)\n",
		      per_s, 1e9 / per_s, n, libc_path(), (unsigned long long)sum);
	t0 = now_s();
	for (k = 0; k < 20; k++)
		jt_cfi__free(load_path(libc_path()));
	print_message("a load of its table: %.0f us\n", (now_s() - t0) / 20 * 1e6);
	/* a scan of libc's thousands of FDEs could not do this, even under a sanitizer */
	assert_true(per_s > 100000);
	free(offs);
	jt_cfi__free(c);
}

/* Put v in b at *at, n bytes little-endian. */
static void put_le(uint8_t *b, size_t *at, uint64_t v, unsigned int n)
{
	while (n--) {
		b[(*at)++] = (uint8_t)v;
		v >>= 8;
	}
}

/*
 * An .eh_frame of one CIE (CFA = rsp + 8, the return address at CFA - 8) and one FDE covering
 * [0, 0x40) of a file built by jt_test_cfi_elf (its section at address 120), with nops
 * DW_CFA_nop among its instructions; into b, its length.
 */
static size_t eh_with_nops(uint8_t *b, size_t nops)
{
	static const uint8_t cie[] = { 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1 };
	size_t at = 0, fde, i;

	put_le(b, &at, 4 + sizeof(cie) + 2, 4);	/* length, then id 0 */
	put_le(b, &at, 0, 4);
	memcpy(b + at, cie, sizeof(cie));
	at += sizeof(cie);
	put_le(b, &at, 0, 2);			/* DW_CFA_nop padding to 4 */
	fde = at;
	put_le(b, &at, 4 + 4 + 4 + 1 + nops, 4);
	put_le(b, &at, at, 4);			/* back to the CIE at 0 */
	put_le(b, &at, (uint32_t)-(int32_t)(120 + at), 4);	/* pc-relative: address 0 */
	put_le(b, &at, 0x40, 4);
	put_le(b, &at, 0, 1);			/* no augmentation data */
	for (i = 0; i < nops; i++)
		b[at++] = 0;
	put_le(b, &at, 0, 4);			/* the terminator */
	assert_true(at - fde == 4 + 4 + 4 + 4 + 1 + nops + 4);
	return at;
}

static struct jt_cfi *load_bytes(const uint8_t *file, size_t len, off_t size, int *err)
{
	int fd = memfd_create("cfi", MFD_CLOEXEC);
	struct jt_cfi *c;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, file, len), (ssize_t)len);
	if (size > (off_t)len)
		assert_int_equal(ftruncate(fd, size), 0);
	c = jt_cfi__load(fd, err);
	close(fd);
	return c;
}

/*
 * A crafted table costs bounded work and memory: an FDE of 20,000 instructions (a compiler's
 * have tens) is a rule not followed, not a run through all of them at every lookup; a section
 * claiming 65 MiB of a (sparse) file is not copied.
 */
static void crafted_tables_cost_bounded_work_and_memory(void **state)
{
	size_t n = 20000 + 64, len;
	uint8_t *eh = malloc(n), *file = NULL, *big = NULL;
	struct jt_cfi_rule r;
	struct jt_cfi *c;
	int err;

	(void)state;
	assert_non_null(eh);
	len = jt_test_cfi_elf(NULL, 0, eh, eh_with_nops(eh, 100), &file);
	c = load_bytes(file, len, 0, &err);
	assert_non_null(c);
	assert_int_equal(jt_cfi__rule(c, 0x10, &r), 0);	/* a few nops: followed */
	assert_int_equal(r.cfa_reg, JT_CFI_SP);
	assert_int_equal(r.cfa_off, 8);
	assert_int_equal(r.ra_off, -8);
	jt_cfi__free(c);
	free(file);

	/* a second buffer: gcc -O1 takes a reused pointer for used after its free */
	len = jt_test_cfi_elf(NULL, 0, eh, eh_with_nops(eh, 20000), &big);
	c = load_bytes(big, len, 0, &err);
	assert_non_null(c);
	assert_int_equal(jt_cfi__rule(c, 0x10, &r), -ENOTSUP);
	jt_cfi__free(c);

	/* the same file, its .eh_frame's header made to claim 65 MiB, the file grown to hold it */
	((Elf64_Shdr *)(big + ((Elf64_Ehdr *)big)->e_shoff))[2].sh_size = 65u << 20;
	c = load_bytes(big, len, 120 + (65 << 20) + 4096, &err);
	assert_null(c);
	assert_int_equal(err, -EFBIG);
	free(big);
	free(eh);
}

/* An entry of a CFI section at b + *at: its length, then body, padded with DW_CFA_nop to 8. */
static void put_entry(uint8_t *b, size_t *at, const uint8_t *body, size_t len)
{
	size_t padded = len;

	while ((padded + 4) % 8)
		padded++;
	put_le(b, at, padded, 4);
	memcpy(b + *at, body, len);
	memset(b + *at + len, 0, padded - len);
	*at += padded;
}

/* A .debug_frame FDE with CIE pointer cie (an offset in the section), over [pc, pc + range). */
static void put_debug_fde(uint8_t *b, size_t *at, uint32_t cie, uint64_t pc, uint64_t range,
			  const uint8_t *insn, size_t len)
{
	uint8_t body[64];
	size_t n = 0;

	assert_true(len <= sizeof(body) - 20);
	put_le(body, &n, cie, 4);
	put_le(body, &n, pc, 8);
	put_le(body, &n, range, 8);
	memcpy(body + n, insn, len);
	put_entry(b, at, body, n + len);
}

/*
 * A .debug_frame as GCC writes it for -fno-asynchronous-unwind-tables code (CIE id all ones,
 * version cie_version, absolute 8-byte addresses), its FDEs over [0x40, 0x80) and [0x90, 0xb0),
 * and one over [0x80, 0x88) that an .eh_frame FDE also covers; into b, its length.
 */
static size_t debug_frame(uint8_t *b, uint8_t cie_version)
{
	/* CFA = rsp + 8, the return address (r16) at CFA - 8 */
	static const uint8_t tail[] = { 1, 0x78, 16, 0x0c, 7, 8, 0x90, 1 };
	static const uint8_t f1[] = { 0x44, 0x0e, 16, 0x50, 0x0e, 8 };
	static const uint8_t f2[] = { 0x41, 0x0e, 16, 0x41, 0x86, 2, 0x41, 0x0c, 6, 16 };
	static const uint8_t f3[] = { 0x0e, 32 };
	uint8_t cie[32];
	size_t at = 0, n = 0;

	put_le(cie, &n, 0xffffffff, 4);
	cie[n++] = cie_version;
	cie[n++] = 0;	/* no augmentation */
	if (cie_version == 4) {
		cie[n++] = 8;	/* address size */
		cie[n++] = 0;	/* segment selector size */
	}
	memcpy(cie + n, tail, sizeof(tail));
	put_entry(b, &at, cie, n + sizeof(tail));
	put_debug_fde(b, &at, 0, 0x40, 0x40, f1, sizeof(f1));
	put_debug_fde(b, &at, 0, 0x90, 0x20, f2, sizeof(f2));
	put_debug_fde(b, &at, 0, 0x80, 0x08, f3, sizeof(f3));
	put_debug_fde(b, &at, 0x10000, 0xc0, 0x10, f3, sizeof(f3));	/* its CIE past the end */
	return at;
}

/* An .eh_frame of one FDE over [0x80, 0x90), at address at_eh: CFA = rsp + 8, then + 16. */
static size_t eh_frame_at(uint8_t *b, uint64_t at_eh)
{
	static const uint8_t cie[] = { 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
				       0x0c, 7, 8, 0x90, 1 };
	uint8_t fde[32];
	size_t at = 0, n = 0;

	put_entry(b, &at, cie, sizeof(cie));
	put_le(fde, &n, at + 4, 4);	/* back to the CIE at 0 */
	put_le(fde, &n, (uint32_t)(0x80 - (at_eh + at + 8)), 4);	/* pc-relative */
	put_le(fde, &n, 0x10, 4);
	fde[n++] = 0;	/* no augmentation data */
	fde[n++] = 0x41;	/* advance 1, CFA = rsp + 16 */
	fde[n++] = 0x0e;
	fde[n++] = 16;
	put_entry(b, &at, fde, n);
	put_le(b, &at, 0, 4);	/* the terminator */
	return at;
}

static void assert_sp_rule(const struct jt_cfi *c, uint64_t off, int cfa_off)
{
	assert_rule(c, off, JT_CFI_SP, cfa_off, false, 0);
}

/*
 * .debug_frame (versions 1, 3 and 4) read where .eh_frame has no FDE: its rows at each
 * instruction, .eh_frame's winning where both cover an address, and an FDE whose CIE is past
 * the section's end covering nothing.
 */
static void debug_frame_rows_where_eh_frame_has_none(void **state)
{
	static const uint8_t versions[] = { 1, 3, 4 };
	uint8_t dbg[512], eh[128], *file;
	struct jt_cfi_rule r;
	size_t i, dbg_len, eh_len, len;
	struct jt_cfi *c;
	int err;

	(void)state;
	for (i = 0; i < sizeof(versions); i++) {
		dbg_len = debug_frame(dbg, versions[i]);
		/* the ELF file puts .eh_frame after .debug_frame, 8-aligned, at address = offset */
		eh_len = eh_frame_at(eh, jt_test_align8(sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) +
							dbg_len));
		len = jt_test_cfi_elf(dbg, dbg_len, eh, eh_len, &file);
		c = load_bytes(file, len, 0, &err);
		free(file);
		if (!c)
			fail_msg("version %u: no table (%d)", versions[i], err);
		assert_sp_rule(c, 0x40, 8);
		assert_sp_rule(c, 0x43, 8);
		assert_sp_rule(c, 0x44, 16);
		assert_sp_rule(c, 0x53, 16);
		assert_sp_rule(c, 0x54, 8);
		assert_sp_rule(c, 0x7f, 8);
		assert_sp_rule(c, 0x80, 8);	/* .eh_frame's, not .debug_frame's rsp + 32 */
		assert_sp_rule(c, 0x81, 16);
		assert_sp_rule(c, 0x8f, 16);
		assert_int_equal(jt_cfi__rule(c, 0x3f, &r), -ENOENT);
		assert_sp_rule(c, 0x90, 8);
		assert_sp_rule(c, 0x91, 16);
		assert_rule(c, 0x92, JT_CFI_SP, 16, true, -16);
		assert_rule(c, 0x93, JT_CFI_BP, 16, true, -16);
		assert_rule(c, 0xaf, JT_CFI_BP, 16, true, -16);
		assert_int_equal(jt_cfi__rule(c, 0xb0, &r), -ENOENT);
		assert_int_equal(jt_cfi__rule(c, 0xc0, &r), -ENOENT);	/* its CIE is not there */
		jt_cfi__free(c);
	}
}

/* A program built -fno-asynchronous-unwind-tables -g: CFI in .debug_frame only (make builds it) */
#define DBGFRAME_PROG "build/tests/nofp-dbgframe"

/* The file offset of the function name in the ELF file at path, by its symbol table. */
static uint64_t symbol_off(const char *path, const char *name)
{
	char cmd[600], line[256];
	unsigned long long vaddr = 0;
	struct elf_info in;
	uint64_t off = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	while (fgets(line, sizeof(line), p)) {
		char sym[128];

		if (sscanf(line, "%llx %*s %127s", &vaddr, sym) == 2 && !strcmp(sym, name))
			break;
		vaddr = 0;
	}
	pclose(p);
	if (!vaddr)
		fail_msg("%s: no symbol %s", path, name);
	elf_info(path, &in);
	assert_true(vaddr_to_off(&in, vaddr, &off));
	return off;
}

/*
 * The real program: every row readelf prints of its two sections agrees; its functions have
 * rules only from .debug_frame, which a copy without it lacks and gets back from its separate
 * debug file (objcopy --only-keep-debug, as Debian's -dbgsym packages are made).
 */
static void debug_frame_of_a_program_and_of_its_debug_file(void **state)
{
	char dir[] = "/tmp/jt-cfi-dbg-XXXXXX", cmd[512], stripped[64], debug[64];
	struct jt_cfi_rule r;
	struct jt_cfi *c;
	uint64_t leaf;
	int fd, dfd, err;

	(void)state;
	if (system("readelf --version >/dev/null 2>&1 && objcopy --version >/dev/null 2>&1"))
		skip();	/* binutils, the second opinion and the copier, is not installed */
	if (access(DBGFRAME_PROG, R_OK))
		fail_msg("%s is not built (make builds it)", DBGFRAME_PROG);
	print_message("%zu rows of %s agree\n", check_against_readelf(DBGFRAME_PROG),
		      DBGFRAME_PROG);
	leaf = symbol_off(DBGFRAME_PROG, "leaf_work");
	c = load_path(DBGFRAME_PROG);
	assert_sp_rule(c, leaf, 8);
	jt_cfi__free(c);

	assert_non_null(mkdtemp(dir));
	snprintf(stripped, sizeof(stripped), "%s/prog", dir);
	snprintf(debug, sizeof(debug), "%s/prog.debug", dir);
	snprintf(cmd, sizeof(cmd),
		 "objcopy --only-keep-debug %s %s && objcopy --remove-section .debug_frame %s %s",
		 DBGFRAME_PROG, debug, DBGFRAME_PROG, stripped);
	assert_int_equal(system(cmd), 0);
	fd = open(stripped, O_RDONLY);
	dfd = open(debug, O_RDONLY);
	assert_true(fd >= 0 && dfd >= 0);
	c = jt_cfi__load(fd, &err);
	assert_non_null(c);	/* its .eh_frame: _start and the PLT */
	assert_int_equal(jt_cfi__rule(c, leaf, &r), -ENOENT);
	jt_cfi__free(c);
	c = jt_cfi__load_debug(fd, dfd, &err);
	assert_non_null(c);
	assert_sp_rule(c, leaf, 8);
	jt_cfi__free(c);
	close(fd);
	close(dfd);
	unlink(stripped);
	unlink(debug);
	rmdir(dir);
}

/*
 * The table is compact: libc's rules in a few hundred distinct ones, its rows in less than
 * its .eh_frame (which is freed), and a load that runs every FDE once in milliseconds.
 */
static void a_table_is_smaller_than_its_section(void **state)
{
	struct jt_cfi_stats st;
	struct elf_info in;
	struct jt_cfi *c;

	(void)state;
	elf_info(libc_path(), &in);
	c = load_path(libc_path());
	jt_cfi__stats(c, &st);
	print_message("%s: .eh_frame %llu bytes, table %zu bytes (%zu rows, %zu rules)\n",
		      libc_path(), (unsigned long long)in.eh.sh_size, st.bytes, st.rows, st.rules);
	assert_true(st.rows > 10000);	/* readelf prints 23,757; the table adds each FDE's end */
	assert_true(st.rules < 2000);
	assert_true(st.bytes < in.eh.sh_size);
	jt_cfi__free(c);
}

/*
 * An .eh_frame at address 120 (as jt_test_cfi_elf puts it) of one CIE and nr FDEs, FDE i
 * over [span i, span (i + 1)), each of reps times the instructions insn; into a new buffer,
 * its length into *len.
 */
static uint8_t *eh_of_many(size_t nr, uint32_t span, const uint8_t *insn, size_t insn_len,
			   size_t reps, size_t *len)
{
	static const uint8_t cie[] = { 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
				       0x0c, 7, 8, 0x90, 1 };
	size_t fde_len = 4 + 4 + 4 + 1 + insn_len * reps, i, k, at = 0;
	uint8_t *b = malloc(32 + nr * (fde_len + 12) + 4);

	assert_non_null(b);
	put_entry(b, &at, cie, sizeof(cie));
	for (i = 0; i < nr; i++) {
		size_t start = at;

		put_le(b, &at, fde_len, 4);
		put_le(b, &at, at, 4);	/* back to the CIE at 0 */
		put_le(b, &at, (uint32_t)(span * i - (120 + at)), 4);	/* pc-relative */
		put_le(b, &at, span, 4);
		b[at++] = 0;	/* no augmentation data */
		for (k = 0; k < reps; k++, at += insn_len)
			memcpy(b + at, insn, insn_len);
		assert_int_equal(at - start, 4 + fde_len);
	}
	put_le(b, &at, 0, 4);
	*len = at;
	return b;
}

/* The table of eh_of_many's section, loaded: NULL with *err if refused. */
static struct jt_cfi *load_many(size_t nr, uint32_t span, const uint8_t *insn, size_t insn_len,
				size_t reps, int *err)
{
	uint8_t *file = NULL, *eh;
	struct jt_cfi *c;
	size_t eh_len, len;

	eh = eh_of_many(nr, span, insn, insn_len, reps, &eh_len);
	len = jt_test_cfi_elf(NULL, 0, eh, eh_len, &file);
	free(eh);
	assert_true(len > 0);
	c = load_bytes(file, len, 0, err);
	free(file);
	return c;
}

/*
 * A file's load is bounded: 1,100 FDEs of 16,000 instructions each (17.6 million, over the
 * budget of 16 Mi) are refused with -E2BIG, 1,000 of them are loaded; rows that alternate
 * between two rules at each byte, past 4 Mi of them (the rows' budget), are refused too.
 */
static void a_file_over_the_budget_is_refused(void **state)
{
	static const uint8_t nop[] = { 0 }, two_rows[] = { 0x0e, 16, 0x41, 0x0e, 8, 0x41 };
	struct jt_cfi_rule r;
	struct jt_cfi *c;
	int err = 0;

	(void)state;
	c = load_many(1000, 16, nop, 1, 16000, &err);
	assert_non_null(c);
	assert_sp_rule(c, 16 * 999, 8);
	jt_cfi__free(c);
	c = load_many(1100, 16, nop, 1, 16000, &err);
	assert_null(c);
	assert_int_equal(err, -E2BIG);

	/* 8,001 rows an FDE over 8 KiB (within its 16,384 instructions), 530 FDEs: 4.24 million */
	c = load_many(530, 8192, two_rows, sizeof(two_rows), 4000, &err);
	assert_null(c);
	assert_int_equal(err, -E2BIG);
	c = load_many(500, 8192, two_rows, sizeof(two_rows), 4000, &err);
	assert_non_null(c);
	assert_int_equal(jt_cfi__rule(c, 8192 * 499, &r), 0);
	assert_int_equal(r.cfa_off, 16);
	assert_int_equal(jt_cfi__rule(c, 8192 * 499 + 1, &r), 0);	/* after one advance */
	assert_int_equal(r.cfa_off, 8);
	jt_cfi__free(c);
}

/* An FDE far past the file's code (2 GiB up) adds no row: no 64 KiB pages of rows up to it. */
static void a_far_fde_costs_no_memory(void **state)
{
	static const uint8_t nop[] = { 0 };
	struct jt_cfi_stats st;
	struct jt_cfi *c;
	int err = 0;

	(void)state;
	c = load_many(2, 0x7ff00000, nop, 1, 1, &err);
	assert_non_null(c);
	jt_cfi__stats(c, &st);
	print_message("%zu rows, %zu bytes\n", st.rows, st.bytes);
	assert_true(st.rows <= 2);
	assert_true(st.bytes < 4096);
	assert_sp_rule(c, 0, 8);	/* the first FDE, at 0, is kept */
	jt_cfi__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rules_follow_a_prologue_push_by_push),
		cmocka_unit_test(every_row_agrees_with_readelf),
		cmocka_unit_test(plt_entries_are_expressions_not_followed),
		cmocka_unit_test(load_reports_what_a_file_lacks),
		cmocka_unit_test(eh_frame_hdr_changes_no_rule),
		cmocka_unit_test(mutated_sections_never_crash),
		cmocka_unit_test(a_lookup_is_a_binary_search),
		cmocka_unit_test(crafted_tables_cost_bounded_work_and_memory),
		cmocka_unit_test(debug_frame_rows_where_eh_frame_has_none),
		cmocka_unit_test(debug_frame_of_a_program_and_of_its_debug_file),
		cmocka_unit_test(a_table_is_smaller_than_its_section),
		cmocka_unit_test(a_file_over_the_budget_is_refused),
		cmocka_unit_test(a_far_fde_costs_no_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
