/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where native and kernel frames get their names: ELF symbol tables (and, when asked,
 * unwind tables), loaded once per file (by device and inode, whichever process maps it)
 * and kept; /proc/kallsyms, loaded at the first kernel frame; C++ names demangled when
 * libstdc++ is there to do it.
 */
#ifndef JT_SYMBOLS_H
#define JT_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "host/elfsyms.h"
#include "base/event.h"
#include "host/kallsyms.h"

struct jt_cfi;
struct jt_symbols;

/* What one file holds for naming and unwinding its frames; either may be NULL. */
struct jt_file_info {
	const struct jt_elfsyms *syms;
	const struct jt_cfi *cfi;	/* only when jt_symbols__want_cfi was set */
};

/* proc_root: "/proc", or a fixture tree (its PID/map_files/ and kallsyms). */
struct jt_symbols *jt_symbols__new(const char *proc_root);
void jt_symbols__free(struct jt_symbols *s);
/* Read each file's unwind table (.eh_frame) too, from now on: off-CPU stacks need them. */
void jt_symbols__want_cfi(struct jt_symbols *s);

/*
 * The file pid maps at [start, end), opened through PROC_ROOT/PID/map_files/ (so deleted
 * files and other mount namespaces work), or NULL if it cannot be read. Kept for the life
 * of s.
 */
const struct jt_file_info *jt_symbols__file(struct jt_symbols *s, uint32_t pid,
					    uint64_t start, uint64_t end);
/*
 * The file a mapping event (JT_EV_MMAP) names: through the process's map_files while it
 * maps it, else by the event's path (in the process's root, then the host's) if that is
 * still the same file (device and inode), else as read before from the same file. NULL if
 * none of these can be read. Called as the event arrives, while the file can still be
 * opened; the join then finds it with jt_symbols__known.
 */
const struct jt_file_info *jt_symbols__mapped(struct jt_symbols *s, uint32_t pid,
					      const struct jt_event *ev);
/*
 * Whether the file a mapping event names was read already (by jt_symbols__mapped as the
 * event arrived): then *file is what it had, and nothing is opened.
 */
bool jt_symbols__known(const struct jt_symbols *s, const struct jt_event *ev,
		       const struct jt_file_info **file);
/*
 * The vdso, by offset into it: the running kernel's one image, read from jitrace's own
 * (every process maps the same), or NULL.
 */
const struct jt_file_info *jt_symbols__vdso(struct jt_symbols *s);
/* The kernel's symbols, or NULL (said once on stderr, with the reason). */
const struct jt_kallsyms *jt_symbols__kernel(struct jt_symbols *s);
/*
 * name for people: demangled into buf if it is a C++ name and libstdc++ is there,
 * else name itself. buf has cap bytes; a longer result is cut.
 */
const char *jt_symbols__demangle(struct jt_symbols *s, const char *name, char *buf, size_t cap);

#endif
