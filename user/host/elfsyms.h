/* SPDX-License-Identifier: GPL-2.0 */
/* The function symbols of an ELF file, found by file offset (what a sample's frame has). */
#ifndef JT_ELFSYMS_H
#define JT_ELFSYMS_H

#include <stddef.h>
#include <stdint.h>

struct jt_sym {
	uint64_t start;		/* offset into the file */
	uint64_t size;		/* 0: up to the next symbol */
	const char *name;	/* as in the file (mangled), NUL-terminated */
};

struct jt_elfsyms;

/*
 * Read the function symbols of the ELF file open at fd (.symtab and .dynsym together),
 * and those of its separate debug file open at debug_fd (-1: none), which holds the
 * .symtab a stripped library lacks. Offsets are always the file's at fd. Returns NULL
 * with *err = -errno or -ENOEXEC (not ELF, no symbols) and reports nothing: a file without
 * symbols is normal.
 */
struct jt_elfsyms *jt_elfsyms__load(int fd, int debug_fd, int *err);
/*
 * The GNU build id of the ELF file at fd as lowercase hex into hex (cap bytes). Returns its
 * length in bytes of id, or 0 if it has none.
 */
size_t jt_elfsyms__build_id(int fd, char *hex, size_t cap);
void jt_elfsyms__free(struct jt_elfsyms *s);
/* The symbol holding file offset off, or NULL; *idx is its index (stable per file). */
const struct jt_sym *jt_elfsyms__find(const struct jt_elfsyms *s, uint64_t off, size_t *idx);
size_t jt_elfsyms__count(const struct jt_elfsyms *s);

#endif
