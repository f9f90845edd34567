# libjitrace-coreclr.so: the CLR profiler module (CORECLR_PROFILER_PATH), built over
# libjitrace-agent.so and found beside it through $ORIGIN, like the JVMTI agent. It needs no
# .NET headers (the COM layouts it uses are in agent/coreclr/clr.h), so `make` always builds it.
CORECLR_MODULE := $(OUT)/libjitrace-coreclr.so
CORECLR_OBJS := $(OUT)/agent/coreclr/profiler.o $(OUT)/agent/coreclr/sig.o
EXTRA_ALL += $(CORECLR_MODULE)

# -fno-plt: enter and leave reach the agent's stubs through the GOT, one jump fewer a call.
$(OUT)/agent/coreclr/%.o: agent/coreclr/%.c agent/coreclr/clr.h agent/coreclr/sig.h \
		include/jitrace/agent.h agent/coreclr/build.mk | $(OUT)/agent
	mkdir -p $(@D)
	$(CC) $(AGENT_CFLAGS) -fno-plt -c $< -o $@

$(CORECLR_MODULE): $(CORECLR_OBJS) $(AGENT)
	$(CC) -shared -pthread -Wl,-soname,libjitrace-coreclr.so -Wl,--no-undefined \
		$(CORECLR_OBJS) -L$(OUT) -ljitrace-agent -Wl,-rpath,'$$ORIGIN' -o $@

# Its unit test (make unit) links the one file of it that is plain C over bytes; these rules
# stand before the generic ones for tests/unit, plain and under the sanitizers.
$(OUT)/tests/test_coreclr_sig: tests/unit/test_coreclr_sig.c agent/coreclr/sig.c | $(OUT)/tests
	$(CC) $(CFLAGS) -Iagent/coreclr tests/unit/test_coreclr_sig.c agent/coreclr/sig.c \
		-lcmocka -o $@

$(OUT)/san/tests/test_coreclr_sig: tests/unit/test_coreclr_sig.c agent/coreclr/sig.c \
		| $(OUT)/san/tests
	$(CC) $(SAN_CFLAGS) -Iagent/coreclr tests/unit/test_coreclr_sig.c agent/coreclr/sig.c \
		$(SAN_FLAGS) -lcmocka -o $@
