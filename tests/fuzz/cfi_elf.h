/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A well-formed x86-64 ELF file around given .debug_frame and .eh_frame bytes, one loadable
 * segment at address = offset (so that the tables' pointers land in it): for the CFI fuzzer
 * and unit tests.
 */
#ifndef JT_TEST_CFI_ELF_H
#define JT_TEST_CFI_ELF_H

#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char jt_test_shstrtab[] = "\0.debug_frame\0.eh_frame\0.shstrtab";

static inline size_t jt_test_align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* The ELF file around the two sections, into *out (malloc'd); its size. */
static inline size_t jt_test_cfi_elf(const uint8_t *dbg, size_t dbg_len, const uint8_t *eh,
				     size_t eh_len, uint8_t **out)
{
	size_t at_dbg = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
	size_t at_eh = jt_test_align8(at_dbg + dbg_len);
	size_t at_str = at_eh + eh_len;
	size_t at_sh = jt_test_align8(at_str + sizeof(jt_test_shstrtab));
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
	if (dbg_len)	/* no .debug_frame: dbg may be NULL, which memcpy may not take */
		memcpy(b + at_dbg, dbg, dbg_len);
	memcpy(b + at_eh, eh, eh_len);
	memcpy(b + at_str, jt_test_shstrtab, sizeof(jt_test_shstrtab));
	/* not loaded, as a linker leaves it: its pointers are absolute */
	sh[1] = (Elf64_Shdr){ .sh_name = 1, .sh_type = SHT_PROGBITS, .sh_offset = at_dbg,
			      .sh_size = dbg_len };
	sh[2] = (Elf64_Shdr){ .sh_name = 14, .sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC,
			      .sh_addr = at_eh, .sh_offset = at_eh, .sh_size = eh_len };
	sh[3] = (Elf64_Shdr){ .sh_name = 24, .sh_type = SHT_STRTAB, .sh_offset = at_str,
			      .sh_size = sizeof(jt_test_shstrtab) };
	*out = b;
	return size;
}

#endif
