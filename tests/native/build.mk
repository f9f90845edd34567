# Native programs the integration tests trace (tests/native/*.c -> build/tests/NAME), built
# with frame pointers and symbols, as a program a user profiles would be.
NATIVE_PROGS := $(patsubst tests/native/%.c,$(OUT)/tests/%,$(wildcard tests/native/*.c))

$(OUT)/tests/%: tests/native/%.c
	@mkdir -p $(@D)
	$(CC) -O1 -g -fno-omit-frame-pointer $(WARN) -o $@ $<

EXTRA_ALL += $(NATIVE_PROGS)
