// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: an ELF file's unwind table (user/host/cfi.h) from untrusted bytes. The input
 * is the bytes of .debug_frame (its length in the first two bytes) and of .eh_frame, put in
 * a well-formed x86-64 ELF file (one loadable segment at address = offset, so the table's
 * pointers land in it) written to a memfd, loaded as the collector loads a mapped file (both
 * sections' FDEs run into the compact table), and asked for the rule at 256 offsets across
 * the file. What it promises is checked: no crash, a known error, a rule in rsp or rbp, and
 * a table within the file's budget.
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
#include "cfi_elf.h"

#define MAX_SECTION (64u << 10)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t dbg_len, eh_len, len, off, step;
	struct jt_cfi_stats st;
	struct jt_cfi *c;
	uint8_t *file;
	int fd, err;

	if (size < 2)
		return 0;
	dbg_len = data[0] | (size_t)data[1] << 8;
	if (dbg_len > size - 2)
		dbg_len = size - 2;
	eh_len = size - 2 - dbg_len;
	if (dbg_len > MAX_SECTION || eh_len > MAX_SECTION)
		return 0;
	len = jt_test_cfi_elf(data + 2, dbg_len, data + 2 + dbg_len, eh_len, &file);
	if (!len)
		return 0;
	fd = memfd_create("fuzz_cfi", MFD_CLOEXEC);
	if (fd < 0 || write(fd, file, len) != (ssize_t)len)
		__builtin_trap();
	c = jt_cfi__load(fd, &err);
	close(fd);
	free(file);
	if (!c) {
		if (err != -ENOENT && err != -ENOEXEC && err != -ENOMEM && err != -EFBIG &&
		    err != -E2BIG)
			__builtin_trap();
		return 0;
	}
	/* a row takes at least one byte of a section, a distinct rule at least two */
	jt_cfi__stats(c, &st);
	if (!st.rules || st.rows > 2 * (dbg_len + eh_len) + 2 ||
	    st.rules > 2 * (dbg_len + eh_len) + 2)
		__builtin_trap();
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
