/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel text symbols from /proc/kallsyms, found by address. */
#ifndef JT_KALLSYMS_H
#define JT_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct jt_ksym {
	uint64_t addr;
	const char *name;	/* "name" or "name [module]", NUL-terminated */
};

struct jt_kallsyms;

/*
 * Read the text symbols of path (/proc/kallsyms, or a fixture). Returns NULL with
 * *err = -errno, or -EPERM when every address reads as 0 (kptr_restrict hides them), and
 * reports nothing: the caller says once that kernel frames stay unnamed.
 */
struct jt_kallsyms *jt_kallsyms__load(const char *path, int *err);
void jt_kallsyms__free(struct jt_kallsyms *k);
/* The symbol holding addr (up to the next symbol), or NULL; *idx is its index. */
const struct jt_ksym *jt_kallsyms__find(const struct jt_kallsyms *k, uint64_t addr,
					 size_t *idx);

#endif
