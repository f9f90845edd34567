// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: an ELF file's unwind table (user/host/cfi.h) from untrusted bytes. The input
 * is the bytes of .eh_frame_hdr (its length in the first two bytes) and of .eh_frame, put in
 * a well-formed x86-64 ELF file (one loadable segment at address = offset, so the table's
 * pointers land in it) written to a memfd, loaded as the collector loads a mapped file, and
 * asked for the rule at 256 offsets across the file. What it promises is checked: no crash, a
 * known error or a rule in rsp or rbp.
 */
#include <elf.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "host/cfi.h"

#define MAX_SECTION (64u << 10)

static const char shstrtab[] = "\0.eh_frame_hdr\0.eh_frame\0.shstrtab";

static size_t align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The ELF file around the two sections, into *out (malloc'd); its size. */
static size_t make_elf(const uint8_t *hdr, size_t hdr_len, const uint8_t *eh, size_t eh_len,
		       uint8_t **out)
{
	size_t at_hdr = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
	size_t at_eh = align8(at_hdr + hdr_len);
	size_t at_str = at_eh + eh_len;
	size_t at_sh = align8(at_str + sizeof(shstrtab));
	size_t size = at_sh + 4 * sizeof(Elf64_Shdr);
	uint8_t *b = calloc(1, size);
	Elf64_Ehdr *e = (Elf64_Ehdr *)b;
	Elf64_Phdr *ph = (Elf64_Phdr *)(b + sizeof(*e));
	Elf64_Shdr *sh = (Elf64_Shdr *)(b + at_sh);

	if (!b)
		return 0;
	memcpy(e->e_ident, ELFMAG, SELFMAG);
	e->e_ident[EI_CLASS] = ELFCLASS64;
	e->e_ident[EI_DATA] = ELFDATA2LSB;
	e->e_ident[EI_VERSION] = EV_CURRENT;
	e->e_type = ET_DYN;
	e->e_machine = EM_X86_64;
	e->e_version = EV_CURRENT;
	e->e_phoff = sizeof(*e);
	e->e_shoff = at_sh;
	e->e_ehsize = sizeof(*e);
	e->e_phentsize = sizeof(*ph);
	e->e_phnum = 1;
	e->e_shentsize = sizeof(*sh);
	e->e_shnum = 4;
	e->e_shstrndx = 3;
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_filesz = size,
			    .p_memsz = size, .p_align = 0x1000 };
	memcpy(b + at_hdr, hdr, hdr_len);
	memcpy(b + at_eh, eh, eh_len);
	memcpy(b + at_str, shstrtab, sizeof(shstrtab));
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			      .sh_addr = at_hdr, .sh_offset = at_hdr, .sh_size = hdr_len };
	sh[2] = (Elf64_Shdr){ .sh_name = 15, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			      .sh_addr = at_eh, .sh_offset = at_eh, .sh_size = eh_len };
	sh[3] = (Elf64_Shdr){ .sh_name = 25, .sh_type = SHT_STRTAB, .sh_offset = at_str,
			      .sh_size = sizeof(shstrtab) };
	*out = b;
	return size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t hdr_len, eh_len, len, off, step;
	struct jt_cfi *c;
	uint8_t *file;
	int fd, err;

	if (size < 2)
		return 0;
	hdr_len = data[0] | (size_t)data[1] << 8;
	if (hdr_len > size - 2)
		hdr_len = size - 2;
	eh_len = size - 2 - hdr_len;
	if (hdr_len > MAX_SECTION || eh_len > MAX_SECTION)
		return 0;
	len = make_elf(data + 2, hdr_len, data + 2 + hdr_len, eh_len, &file);
	if (!len)
		return 0;
	fd = memfd_create("fuzz_cfi", MFD_CLOEXEC);
	if (fd < 0 || write(fd, file, len) != (ssize_t)len)
		__builtin_trap();
	c = jt_cfi__load(fd, &err);
	close(fd);
	free(file);
	if (!c) {
		if (err != -ENOENT && err != -ENOEXEC && err != -ENOMEM)
			__builtin_trap();
		return 0;
	}
	step = len / 256 + 1;	/* 256 lookups an input: the executions go to new inputs */
	for (off = 0; off < len + 64; off += step) {
		struct jt_cfi_rule r;

		err = jt_cfi__rule(c, off, &r);
		if (err && err != -ENOENT && err != -ENOTSUP && err != -EINVAL)
			__builtin_trap();
		if (!err && r.cfa_reg != JT_CFI_SP && r.cfa_reg != JT_CFI_BP)
			__builtin_trap();
		if (!err && r.bp_saved && r.bp_lost)
			__builtin_trap();
	}
	jt_cfi__free(c);
	return 0;
}
