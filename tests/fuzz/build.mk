# Fuzzing (libFuzzer, ASan, UBSan; clang): `make fuzz` builds every tests/fuzz/fuzz_*.c
# into build/fuzz/ with the user/ modules it needs and runs each for FUZZ_RUNS executions
# or FUZZ_SECONDS seconds, whichever comes first. New inputs go to build/fuzz/corpus/;
# a crasher is left in build/fuzz/artifacts/ and fails the target. Not part of `make`.

# Included before `all`: keep whatever default goal was set, so `make` alone still builds all.
FUZZ_PREV_GOAL := $(.DEFAULT_GOAL)

FUZZ_RUNS ?= 10000000
FUZZ_SECONDS ?= 1800
FUZZ_CC ?= clang
FUZZ_CFLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE $(WARN) -Iinclude -Iuser
FUZZ_DIR := $(OUT)/fuzz
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,$(FUZZ_DIR)/%,$(wildcard tests/fuzz/fuzz_*.c))

# The modules each target needs, and nothing of libbpf.
FUZZ_SRCS_fuzz_perfmap := user/sources/perfmap.c user/sources/safeopen.c user/base/trustwalk.c user/base/util.c
FUZZ_SRCS_fuzz_log := user/log/read.c user/log/format.c user/log/view.c user/base/hash.c user/base/names.c user/base/util.c
FUZZ_SRCS_fuzz_decode := user/sources/ring_decode.c user/base/event.c user/host/procfs.c user/base/util.c
FUZZ_SRCS_fuzz_jitdump := user/sources/jitdump.c
FUZZ_SRCS_fuzz_callbuf := user/sources/callbuf.c user/sources/tscclock.c user/base/util.c
FUZZ_SRCS_fuzz_cfi := user/host/cfi.c user/base/util.c
FUZZ_LIBS_fuzz_cfi := -lelf
FUZZ_SRCS_fuzz_monocode := user/host/monocode.c
# whole logs through every offline view: the modules the view commands link (not the pusher,
# which needs libcurl)
FUZZ_SRCS_fuzz_views := $(filter-out user/export/push.c,$(foreach s,$(STAGES),$(wildcard user/$(s)/*.c)))
FUZZ_LIBS_fuzz_views := -lelf

.PHONY: fuzz fuzz-build fuzz-deps

fuzz-build: $(FUZZ_TARGETS)

$(FUZZ_TARGETS): | fuzz-deps

fuzz-deps:
	@scripts/deps.sh fuzz

define fuzz_rule
$(FUZZ_DIR)/$(1): tests/fuzz/$(1).c $(FUZZ_SRCS_$(1)) $(wildcard user/*/*.h include/*.h tests/fuzz/*.h)
	@mkdir -p $(FUZZ_DIR)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $$< $(FUZZ_SRCS_$(1)) $(FUZZ_LIBS_$(1)) -lz -o $$@
endef
$(foreach t,$(notdir $(FUZZ_TARGETS)),$(eval $(call fuzz_rule,$(t))))

fuzz: $(FUZZ_TARGETS)
	@tests/fuzz/run.sh $(FUZZ_DIR) $(FUZZ_RUNS) $(FUZZ_SECONDS) $(notdir $(FUZZ_TARGETS))

.DEFAULT_GOAL := $(FUZZ_PREV_GOAL)
