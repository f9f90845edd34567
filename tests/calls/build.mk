# The calls-region workload (tests/calls/callers.c -> build/tests/callers): threads, forks and
# a late collector through libjitrace-agent, for itest_calls and bench_calls.
CALLERS := $(OUT)/tests/callers

$(CALLERS): tests/calls/callers.c $(AGENT) include/jt_callbuf.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -L$(OUT) -ljitrace-agent -Wl,-rpath,'$$ORIGIN/..' -pthread -o $@

EXTRA_ALL += $(CALLERS)
