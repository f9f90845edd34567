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

# Collector modules in two layers: libjt.a is every user/*.c that needs no BPF toolchain
# (plain C over libelf and zlib: what unit tests and fuzzers link), libjt-bpf.a the three
# that touch libbpf and the generated skeleton (the loader, the ring-buffer reader and the
# live session that drives them). The program's entry point is in neither.
BPF_SRCS := user/loader.c user/ringbuf.c user/live.c
LIB_SRCS := $(filter-out user/main.c $(BPF_SRCS),$(wildcard user/*.c))
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
$(1)/user/%.o: user/%.c | $(1)/user
	$$(CC) $(2) -c $$< -o $$@

$(1)/libjt.a: $$(LIB_SRCS:%.c=$(1)/%.o)
	rm -f $$@ && ar rcs $$@ $$^

$(1)/libjt-bpf.a: $$(BPF_SRCS:%.c=$(1)/%.o)
	rm -f $$@ && ar rcs $$@ $$^

$(1)/agent/%.o: agent/%.c | $(1)/agent
	$$(CC) $(2) -fPIC -fvisibility=hidden -pthread -c $$< -o $$@

$(1)/agent/%.o: agent/%.S | $(1)/agent
	$$(CC) $(2) -fPIC -fvisibility=hidden -c $$< -o $$@

$(1)/libjitrace-agent.so: $$(patsubst $$(OUT)/%,$(1)/%,$$(AGENT_OBJS))
	$$(CC) -shared $(3) -pthread -Wl,-soname,libjitrace-agent.so $$^ -o $$@

# The agent's test links the agent library, not the collector's modules.
$(1)/tests/test_agent: tests/unit/test_agent.c $(1)/libjitrace-agent.so | $(1)/tests
	$$(CC) $(2) $$< -L$(1) -ljitrace-agent -Wl,-rpath,'$$$$ORIGIN/..' -pthread -lcmocka -o $$@

$(1)/tests/test_%: tests/unit/test_%.c $(1)/libjt.a | $(1)/tests
	$$(CC) $(2) -Itests $$(filter %.c %.a,$$^) $$(UNIT_LDLIBS) -o $$@

$(1)/user $(1)/agent $(1)/tests:
	mkdir -p $$@
endef

$(eval $(call variant,$(OUT),$(CFLAGS),))
$(eval $(call variant,$(SAN),$(SAN_CFLAGS),$(SAN_FLAGS)))

# only these two include the generated skeleton
$(BPF_SRCS:%.c=$(OUT)/%.o) $(BPF_SRCS:%.c=$(SAN)/%.o): | $(SKEL)

# the two layers call each other (the commands drive the loader, which reports through util)
LINK_LIBS = -Wl,--start-group $(filter %.a,$^) -Wl,--end-group

$(OUT)/jitrace: $(OUT)/user/main.o $(OUT)/libjt.a $(OUT)/libjt-bpf.a
	$(CC) $(CFLAGS) $(filter %.o,$^) $(LINK_LIBS) $(LDLIBS) -o $@

# ---- agent (built by the template above); the runtimes' glue builds with these flags ----
AGENT_CFLAGS := $(CFLAGS) -fPIC -fvisibility=hidden -pthread

# ---- toy JIT ----
TOYJIT_OBJS := $(patsubst tests/toyjit/%.c,$(OUT)/toyjit-obj/%.o,$(wildcard tests/toyjit/*.c))

$(OUT)/toyjit-obj/%.o: tests/toyjit/%.c | $(OUT)/toyjit-obj
	$(CC) $(CFLAGS) -c $< -o $@

$(TOYJIT): $(TOYJIT_OBJS) $(AGENT)
	$(CC) $(CFLAGS) $(TOYJIT_OBJS) -L$(OUT) -ljitrace-agent -Wl,-rpath,'$$ORIGIN' -pthread -o $@

# ---- integration tests (real BPF) ----
$(OUT)/tests/itest_%: tests/integration/itest_%.c tests/integration/lib.c $(OUT)/libjt.a \
		$(OUT)/libjt-bpf.a | $(OUT)/tests
	$(CC) $(CFLAGS) -Itests/integration $(filter %.c,$^) $(LINK_LIBS) $(LDLIBS) -lcmocka -lm -o $@

SAN_TESTS := $(patsubst $(OUT)/tests/%,$(SAN)/tests/%,$(UNIT_TESTS))

unit: $(UNIT_TESTS)
	@scripts/run-tests.sh unit $(UNIT_TESTS)

integration: all $(ITESTS)
	@scripts/run-tests.sh integration $(ITESTS)

test: deps
	$(MAKE) all $(UNIT_TESTS) $(SAN_TESTS) $(ITESTS) $(EXTRA_TESTS)
	@scripts/run-tests.sh all $(UNIT_TESTS) $(SAN_TESTS) $(ITESTS)

deps:
	@scripts/deps.sh test

# ---- bench ----
$(OUT)/bench/bench_calls: $(OUT)/bench/bare.skel.h
$(OUT)/bench/bench_syscalls: $(OUT)/bench/oldmaps.skel.h

$(OUT)/bench/bench_%: bench/bench_%.c $(OUT)/libjt.a $(OUT)/libjt-bpf.a $(AGENT) | $(OUT)/bench
	$(CC) $(CFLAGS) -Ibench -I$(OUT)/bench $(filter %.c,$^) $(LINK_LIBS) -L$(OUT) \
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
	clang-format -i $(wildcard user/*.[ch] agent/*.[ch] agent/*/*.[ch] bpf/*.[ch] tests/*/*.[ch] bench/*.[ch])

$(OUT) $(OUT)/bench $(OUT)/toyjit-obj:
	mkdir -p $@

clean:
	rm -rf $(OUT)

-include $(wildcard $(OUT)/*.d $(OUT)/*/*.d $(SAN)/*/*.d)
