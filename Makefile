# jitrace: build, test, install. `make help` lists the targets.

OUT := build
PREFIX ?= /usr/local
DESTDIR ?=
BINDIR := $(PREFIX)/bin
LIBDIR := $(PREFIX)/lib
INCDIR := $(PREFIX)/include
UNITDIR ?= $(PREFIX)/lib/systemd/system

CC ?= gcc
CLANG ?= clang
BPFTOOL ?= bpftool

WARN := -Wall -Wextra -Werror
CFLAGS ?= -O2 -g
CFLAGS += $(WARN) -std=gnu11 -D_GNU_SOURCE -fno-omit-frame-pointer -MMD -MP -Iinclude -Iuser -I$(OUT)
LDLIBS := -lbpf -lelf -lz -lcurl -lpthread
# usdt.bpf.h includes <linux/errno.h>, whose <asm/errno.h> lives in the host's multiarch dir
BPF_CFLAGS := -O2 -g -target bpf -D__TARGET_ARCH_x86 $(WARN) -Wno-unused-function -Wno-unused-parameter \
	-I/usr/include/$(shell $(CC) -dumpmachine) \
	-Iinclude -Ivmlinux -MMD -MP

# The collector in stages, one folder and one library each, every stage built only on those
# below it (scripts/check-layers.sh fails `make unit` on an include that climbs):
#   base < host < sources < join < log < views < export < session < cmd
# session/ holds the only users of libbpf and the generated skeleton (the loader, the ring-
# buffer reader, the live session that drives them); cmd/ is the program, in no library.
# Unit tests and fuzzers link the plain stages alone: no BPF toolchain needed.
STAGES := base host sources join log views export
BPF_SRCS := user/session/loader.c user/session/ringbuf.c user/session/live.c
SESSION_SRCS := $(wildcard user/session/*.c)
CMD_SRCS := $(wildcard user/cmd/*.c)
OFFLINE_CMDS := dump export flamegraph report
USER_SRCS := $(foreach s,$(STAGES) session cmd,$(wildcard user/$(s)/*.c))
# the plain stages' libraries, the uppermost first: the order they link in
PLAIN_LIBS = $(foreach s,export views log join sources host base,$(1)/libjt-$(s).a)
SKEL := $(OUT)/jitrace.skel.h
AGENT := $(OUT)/libjitrace-agent.so
AGENT_OBJS := $(patsubst %,$(OUT)/%.o,$(basename $(wildcard agent/*.c agent/*.S)))
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(wildcard tests/unit/test_*.c))
ITESTS := $(patsubst tests/integration/%.c,$(OUT)/tests/%,$(wildcard tests/integration/itest_*.c))
TOYJIT := $(OUT)/toyjit
BENCHES := $(patsubst bench/%.c,$(OUT)/bench/%,$(wildcard bench/bench_*.c))

# Each runtime's glue and the fuzz targets build from a fragment in their own directory;
# a fragment adds its outputs to EXTRA_ALL (built by `make`) and may add tests.
EXTRA_ALL :=
include $(sort $(wildcard agent/*/build.mk tests/*/build.mk))
# `make` builds all, not the first rule a fragment happens to define
.DEFAULT_GOAL := all

.PHONY: all deps clean test unit integration bench demo install vmlinux help fmt
.DELETE_ON_ERROR:

all: $(OUT)/jitrace $(AGENT) $(TOYJIT) $(EXTRA_ALL)

help:
	@echo "make            build jitrace, libjitrace-agent.so and the toy JIT into $(OUT)/"
	@echo "make test       install test packages (as root), build, run unit and integration tests"
	@echo "make unit       unit tests only (no root needed)"
	@echo "make test-kernels  integration tests under Debian's 6.1 and 6.12 kernels (QEMU, root)"
	@echo "make demo       install packages, build, record the bundled workload, report"
	@echo "make bench      benchmarks (root)"
	@echo "make install    install into \$$DESTDIR\$$PREFIX (PREFIX=$(PREFIX))"
	@echo "make vmlinux    regenerate vmlinux/vmlinux.h from /sys/kernel/btf/vmlinux"

# ---- BPF ----
$(OUT)/jitrace.bpf.o: bpf/jitrace.bpf.c vmlinux/vmlinux.h | $(OUT)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(SKEL): $(OUT)/jitrace.bpf.o
	$(BPFTOOL) gen skeleton $< name jitrace_bpf > $@

$(OUT)/bench/%.bpf.o: bench/%.bpf.c vmlinux/vmlinux.h | $(OUT)/bench
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(OUT)/bench/%.skel.h: $(OUT)/bench/%.bpf.o
	$(BPFTOOL) gen skeleton $< name $(subst .,_,$*)_bpf > $@

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/vmlinux.h

# ---- collector, agent and unit tests: one template, built plain into $(OUT) and again under
# AddressSanitizer and UndefinedBehaviorSanitizer into $(SAN) ----
SAN := $(OUT)/san
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all
SAN_CFLAGS := $(filter-out -O2,$(CFLAGS)) -O1 $(SAN_FLAGS)
UNIT_LDLIBS := -lelf -lz -lcmocka

# $(1): output directory, $(2): C flags, $(3): flags that link the agent library
define variant
$(1)/user/%.o: user/%.c
	@mkdir -p $$(@D)
	$$(CC) $(2) -c $$< -o $$@


$(1)/agent/%.o: agent/%.c | $(1)/agent
	$$(CC) $(2) -fPIC -fvisibility=hidden -pthread -c $$< -o $$@

$(1)/agent/%.o: agent/%.S | $(1)/agent
	$$(CC) $(2) -fPIC -fvisibility=hidden -c $$< -o $$@

$(1)/libjitrace-agent.so: $$(patsubst $$(OUT)/%,$(1)/%,$$(AGENT_OBJS))
	$$(CC) -shared $(3) -pthread -Wl,-soname,libjitrace-agent.so $$^ -o $$@

# The agent's tests link the agent library, not the collector's modules.
$(1)/tests/test_agent $(1)/tests/test_agent_calls: $(1)/tests/%: tests/unit/%.c \
		$(1)/libjitrace-agent.so | $(1)/tests
	$$(CC) $(2) $$< -L$(1) -ljitrace-agent -Wl,-rpath,'$$$$ORIGIN/..' -pthread -lcmocka -o $$@

$(1)/tests/test_%: tests/unit/test_%.c $$(call PLAIN_LIBS,$(1)) | $(1)/tests
	$$(CC) $(2) -Itests $$(filter %.c %.o,$$^) $$(filter %.a,$$^) $$(UNIT_LDLIBS) -o $$@

# the loader's policy, the live commands' options and the offline commands are plain C
# above the plain stages: tests that drive them link them alone, no skeleton needed
$(1)/tests/test_bpfcaps: $(1)/user/session/bpfcaps.o
$(1)/tests/test_liveopts: $(1)/user/cmd/liveopts.o
$(foreach t,diff export export_offcpu offcpu_views,$(1)/tests/test_$(t)): $(OFFLINE_CMDS:%=$(1)/user/cmd/%.o)

$(1)/agent $(1)/tests:
	mkdir -p $$@
endef

# $(1): output directory, $(2): a stage: its library
define stage_lib
$(1)/libjt-$(2).a: $$(patsubst %.c,$(1)/%.o,$$(wildcard user/$(2)/*.c))
	rm -f $$@ && ar rcs $$@ $$^
endef

$(foreach d,$(OUT) $(SAN),$(foreach s,$(STAGES) session,$(eval $(call stage_lib,$(d),$(s)))))
$(eval $(call variant,$(OUT),$(CFLAGS),))
$(eval $(call variant,$(SAN),$(SAN_CFLAGS),$(SAN_FLAGS)))

# only these include the generated skeleton
$(BPF_SRCS:%.c=$(OUT)/%.o) $(BPF_SRCS:%.c=$(SAN)/%.o): | $(SKEL)

# every library once, the uppermost stage first: a call that climbs does not link
LINK_LIBS = $(filter %.a,$^)
ALL_LIBS = $(1)/libjt-session.a $(call PLAIN_LIBS,$(1))

$(OUT)/jitrace: $(CMD_SRCS:%.c=$(OUT)/%.o) $(call ALL_LIBS,$(OUT))
	$(CC) $(CFLAGS) $(filter %.o,$^) $(LINK_LIBS) $(LDLIBS) -o $@

# The program itself under ASan and UBSan, for san_views (below): crafted logs through every
# offline command as users run them
$(SAN)/jitrace: $(CMD_SRCS:%.c=$(SAN)/%.o) $(call ALL_LIBS,$(SAN))
	$(CC) $(SAN_CFLAGS) $(filter %.o,$^) $(LINK_LIBS) $(LDLIBS) -o $@

# ---- agent (built by the template above); the runtimes' glue builds with these flags ----
AGENT_CFLAGS := $(CFLAGS) -fPIC -fvisibility=hidden -pthread

# ---- toy JIT ----
TOYJIT_OBJS := $(patsubst tests/toyjit/%.c,$(OUT)/toyjit-obj/%.o,$(wildcard tests/toyjit/*.c))

$(OUT)/toyjit-obj/%.o: tests/toyjit/%.c | $(OUT)/toyjit-obj
	$(CC) $(CFLAGS) -c $< -o $@

$(TOYJIT): $(TOYJIT_OBJS) $(AGENT)
	$(CC) $(CFLAGS) $(TOYJIT_OBJS) -L$(OUT) -ljitrace-agent -Wl,-rpath,'$$ORIGIN' -pthread -o $@

# ---- integration tests (real BPF) ----
# one compiler run for two sources writes one dependency file: the headers are listed here
$(OUT)/tests/itest_%: tests/integration/itest_%.c tests/integration/lib.c $(call ALL_LIBS,$(OUT)) \
		$(wildcard tests/integration/*.h tests/unit/*.h) | $(OUT)/tests
	$(CC) $(CFLAGS) -Itests/integration $(filter %.c,$^) $(LINK_LIBS) $(LDLIBS) -lcmocka -lm -o $@

SAN_TESTS := $(patsubst $(OUT)/tests/%,$(SAN)/tests/%,$(UNIT_TESTS))

# The sanitized program over the fuzz corpora and mutants of them (tests/fuzz/san_views.c);
# the driver itself is built plain, what it runs is $(SAN)/jitrace
SAN_VIEWS := $(OUT)/tests/san_views
$(SAN_VIEWS): tests/fuzz/san_views.c $(call PLAIN_LIBS,$(OUT)) | $(OUT)/tests
	$(CC) $(CFLAGS) -DSAN_JITRACE='"$(SAN)/jitrace"' -Itests/unit -Itests/fuzz $(filter %.c %.a,$^) \
		$(UNIT_LDLIBS) -o $@

unit: $(UNIT_TESTS)
	@scripts/check-layers.sh
	@scripts/run-tests.sh unit $(UNIT_TESTS)

integration: all $(ITESTS)
	@scripts/run-tests.sh integration $(ITESTS)

test: deps
	$(MAKE) all $(UNIT_TESTS) $(SAN_TESTS) $(SAN)/jitrace $(SAN_VIEWS) $(ITESTS) $(EXTRA_TESTS) \
		$(FUZZ_TARGETS)
	@scripts/check-layers.sh
	@scripts/run-tests.sh all $(UNIT_TESTS) $(SAN_TESTS) $(SAN_VIEWS) $(ITESTS)

deps:
	@scripts/deps.sh test

# ---- bench ----
$(OUT)/bench/bench_calls: $(OUT)/bench/bare.skel.h
$(OUT)/bench/bench_syscalls: $(OUT)/bench/oldmaps.skel.h

# benchmarks set up sessions as record does: with its options' parser
$(OUT)/bench/bench_%: bench/bench_%.c $(OUT)/user/cmd/liveopts.o $(call ALL_LIBS,$(OUT)) $(AGENT) \
		| $(OUT)/bench
	$(CC) $(CFLAGS) -Ibench -I$(OUT)/bench $(filter %.c %.o,$^) $(LINK_LIBS) -L$(OUT) \
		-ljitrace-agent -Wl,-rpath,'$$ORIGIN/..' $(LDLIBS) -lpthread -o $@

bench:
	@scripts/deps.sh bench
	$(MAKE) all $(BENCHES)
	@bench/run.sh $(OUT)

# ---- demo ----
demo:
	@scripts/deps.sh demo
	$(MAKE) all
	@scripts/demo.sh $(OUT)

# ---- install ----
install: all
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR)/jitrace
	install -m 0755 $(OUT)/jitrace $(DESTDIR)$(BINDIR)/jitrace
	install -m 0755 $(AGENT) $(DESTDIR)$(LIBDIR)/libjitrace-agent.so
	install -m 0644 include/jitrace/agent.h $(DESTDIR)$(INCDIR)/jitrace/agent.h
	install -d $(DESTDIR)$(UNITDIR)
	sed 's|@BINDIR@|$(BINDIR)|g' dist/jitrace-recorder.service > $(DESTDIR)$(UNITDIR)/jitrace-recorder.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/jitrace-recorder.service
	for so in libjitrace-jvmti.so libmono-profiler-jitrace.so libjitrace-coreclr.so; do \
		if [ -f $(OUT)/$$so ]; then install -m 0755 $(OUT)/$$so $(DESTDIR)$(LIBDIR)/$$so; fi; \
	done

fmt:
	clang-format -i $(wildcard user/*/*.[ch] agent/*.[ch] agent/*/*.[ch] bpf/*.[ch] tests/*/*.[ch] bench/*.[ch])

$(OUT) $(OUT)/bench $(OUT)/toyjit-obj:
	mkdir -p $@

clean:
	rm -rf $(OUT)

-include $(wildcard $(OUT)/*.d $(OUT)/*/*.d $(OUT)/*/*/*.d $(SAN)/*/*.d $(SAN)/*/*/*.d)
