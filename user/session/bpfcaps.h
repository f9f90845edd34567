/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The loader's policy, apart from libbpf so that it can be tested with bytes: which BPF
 * programs the options need, which of them a recording cannot go without, what each gives
 * the user (the capability a kernel that refuses it turns off), and the verifier's reason.
 */
#ifndef JT_BPFCAPS_H
#define JT_BPFCAPS_H

#include <stdbool.h>
#include <stddef.h>

#include "session/loader.h"

/* What the program called name gives the user; name itself if it is not jitrace's. */
const char *jt_bpfcaps__gives(const char *name);
/*
 * Whether o needs the program (not loading the rest leaves a verifier nothing to refuse).
 * exit_has_group: the kernel's sched_process_exit passes group_dead (jt_exit), else
 * jt_exit_task stands in.
 */
bool jt_bpfcaps__wanted(const char *name, const struct jt_bpf_opts *o, bool exit_has_group);
/* Whether o asked for what the program gives outright: refused, recording cannot start. */
bool jt_bpfcaps__required(const char *name, const struct jt_bpf_opts *o);
/*
 * Why, from a verifier's log (NUL-terminated): its last line that is not a count, into
 * out (size bytes, NUL-terminated); a field or type the kernel lacks said so in words.
 */
void jt_bpfcaps__reason(const char *log, char *out, size_t size);

#endif
