# Native programs the integration tests trace (tests/native/*.c -> build/tests/NAME), built
# with frame pointers and symbols, as a program a user profiles would be.
NATIVE_PROGS := $(patsubst tests/native/%.c,$(OUT)/tests/%,$(wildcard tests/native/*.c))

$(OUT)/tests/%: tests/native/%.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -fno-omit-frame-pointer $(WARN) -o $@ $<

EXTRA_ALL += $(NATIVE_PROGS)

# ...but for this one, built as Debian builds its programs: no frame pointers (its CFI only)
$(OUT)/tests/nofp: tests/native/nofp.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fomit-frame-pointer $(WARN) -o $@ $<

# ...and the same program with .debug_frame for its CFI, no .eh_frame rows for its functions
# (as -fno-asynchronous-unwind-tables C code is built, kernel-style or for small images)
NATIVE_PROGS += $(OUT)/tests/nofp-dbgframe
$(OUT)/tests/nofp-dbgframe: tests/native/nofp.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -fomit-frame-pointer -fno-asynchronous-unwind-tables $(WARN) -o $@ $<
# test_cfi reads its .debug_frame
$(OUT)/tests/test_cfi: | $(OUT)/tests/nofp-dbgframe
