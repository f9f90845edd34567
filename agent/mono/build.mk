# The Mono profiler module, `mono --profile=jitrace`: Mono dlopens libmono-profiler-NAME.so.
# It leaves the mono_* functions undefined (/usr/bin/mono exports them; linking libmono-2.0
# would load a second runtime) and finds libjitrace-agent.so beside itself.
MONO_PROFILER := $(OUT)/libmono-profiler-jitrace.so
# Mono's headers as system headers: their warnings are not ours to fix.
MONO_CFLAGS := $(patsubst -I%,-isystem %,$(shell pkg-config --cflags mono-2 2>/dev/null))

# Built by `make` only where Mono's headers are installed (mono-devel).
ifneq ($(wildcard /usr/include/mono-2.0/mono/metadata/profiler.h),)
EXTRA_ALL += $(MONO_PROFILER)
endif

# -fno-plt: enter and leave reach the agent's stubs through the GOT, one jump fewer a call.
$(OUT)/agent/mono/profiler.o: agent/mono/profiler.c include/jitrace/agent.h agent/mono/build.mk \
		| $(OUT)/agent
	mkdir -p $(@D)
	$(CC) $(AGENT_CFLAGS) $(MONO_CFLAGS) -fno-plt -c $< -o $@

$(MONO_PROFILER): $(OUT)/agent/mono/profiler.o $(AGENT)
	$(CC) -shared -pthread -Wl,-soname,libmono-profiler-jitrace.so $< -L$(OUT) \
		-ljitrace-agent -Wl,-rpath,'$$ORIGIN' -o $@
