# libjitrace-jvmti.so: the HotSpot JVMTI agent, built over libjitrace-agent.so. It links that
# library (found beside it through $ORIGIN) because jitrace probes the stubs inside it by path.
JVMTI_H := $(firstword $(wildcard /usr/lib/jvm/java-17-openjdk-amd64/include/jvmti.h \
	/usr/lib/jvm/*/include/jvmti.h))
JVMTI := $(OUT)/libjitrace-jvmti.so

ifneq ($(JVMTI_H),)
JVMTI_INC := $(dir $(JVMTI_H))
EXTRA_ALL += $(JVMTI)

$(JVMTI): agent/jvmti/jvmti.c agent/jvmti/scopes.c agent/jvmti/scopes.h include/jitrace/agent.h \
		include/jt_javaname.h include/jt_log_format.h $(AGENT) | $(OUT)
	$(CC) $(AGENT_CFLAGS) -I$(JVMTI_INC) -I$(JVMTI_INC)linux -shared $(filter %.c,$^) -L$(OUT) \
		-ljitrace-agent -Wl,-rpath,'$$ORIGIN' -Wl,-soname,libjitrace-jvmti.so -o $@
endif
