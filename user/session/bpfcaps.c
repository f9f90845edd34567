// SPDX-License-Identifier: GPL-2.0
/* Which BPF programs a recording loads, what each gives, and why a kernel refused one. */
#include <stdio.h>
#include <string.h>

#include "session/bpfcaps.h"
#include "base/util.h"

/* What each program gives the user: the capability a kernel that refuses it turns off. */
const char *jt_bpfcaps__gives(const char *name)
{
	static const struct {
		const char *prog, *gives;
	} caps[] = {
		{ "jt_enter", "method entries (--calls)" },
		{ "jt_leave", "method exits (--calls)" },
		{ "jt_enter_id", "method entries of older agents (--calls)" },
		{ "jt_leave_id", "method exits of older agents (--calls)" },
		{ "jt_calls_region", "calls through the agent's buffers (--calls; the stubs' uprobes "
				     "serve instead)" },
		{ "jt_code_load", "names from the agent's code records" },
		{ "jt_code_unload", "the agent's code unloads" },
		{ "jt_code_inline", "inlined frames and source lines from the agent" },
		{ "jt_jvm_load", "HotSpot's USDT code records" },
		{ "jt_jvm_unload", "HotSpot's USDT code unloads" },
		{ "jt_jvm_enter", "HotSpot's USDT method entries" },
		{ "jt_jvm_return", "HotSpot's USDT method exits" },
		{ "jt_sample", "CPU sampling" },
		{ "jt_maps", "native names of processes gone before their samples are joined" },
		{ "jt_exec", "programs' names and mappings at exec" },
		{ "jt_exit", "process exits" },
		{ "jt_exit_task", "process exits" },
		{ "jt_fork", "following children" },
		{ "jt_switch", "off-CPU time (--off-cpu)" },
		{ "jt_sys_exit", "user stacks of off-CPU waits in system calls" },
		{ "jt_off_flush", "the last sums of short off-CPU waits" },
		{ "jt_storm", "the event generator of the benchmarks" },
	};
	size_t i;

	for (i = 0; i < JT_ARRAY_SIZE(caps); i++)
		if (!strcmp(caps[i].prog, name))
			return caps[i].gives;
	return name;
}

/* jt_enter, jt_leave and their twins for older agents' stubs, jt_enter_id and jt_leave_id */
static bool is_call_prog(const char *name)
{
	return !strcmp(name, "jt_enter") || !strcmp(name, "jt_leave") ||
	       !strcmp(name, "jt_enter_id") || !strcmp(name, "jt_leave_id");
}

/* Programs the options do not need are not loaded: nothing for a verifier to refuse. */
bool jt_bpfcaps__wanted(const char *name, const struct jt_bpf_opts *o, bool exit_has_group)
{
	bool stubs = o->agent_path != NULL;

	if (is_call_prog(name))
		return stubs && o->calls;
	if (!strcmp(name, "jt_calls_region"))
		return stubs && o->calls && o->calls_buffers;
	if (!strcmp(name, "jt_code_load") || !strcmp(name, "jt_code_unload") ||
	    !strcmp(name, "jt_code_inline"))
		return stubs;
	if (!strcmp(name, "jt_jvm_enter") || !strcmp(name, "jt_jvm_return"))
		return o->usdt && o->calls;
	if (!strncmp(name, "jt_jvm_", 7))
		return o->usdt;
	if (!strcmp(name, "jt_sample"))
		return o->sample_hz > 0;
	if (!strcmp(name, "jt_maps"))
		return o->sample_hz > 0 || o->offcpu;	/* stacks need native names */
	if (!strcmp(name, "jt_switch") || !strcmp(name, "jt_sys_exit") ||
	    !strcmp(name, "jt_off_flush"))
		return o->offcpu;
	if (!strcmp(name, "jt_storm"))
		return !o->attach;
	if (!strcmp(name, "jt_exit"))
		return exit_has_group;
	if (!strcmp(name, "jt_exit_task"))
		return !exit_has_group;
	return true;
}

/* What a user asked for outright: without it recording is pointless, so it is fatal. */
bool jt_bpfcaps__required(const char *name, const struct jt_bpf_opts *o)
{
	if (!strcmp(name, "jt_sample"))
		return true;
	if (is_call_prog(name))
		return o->calls;
	if (!strcmp(name, "jt_switch") || !strcmp(name, "jt_off_flush"))
		return o->offcpu;
	return !strcmp(name, "jt_storm");
}

/* The last line of a verifier's log that says why, not how much it processed. */
void jt_bpfcaps__reason(const char *log, char *out, size_t size)
{
	const char *end = log + strlen(log), *line;
	size_t n;

	out[0] = 0;
	while (end > log) {
		while (end > log && (end[-1] == '\n' || end[-1] == ' '))
			end--;
		line = end;
		while (line > log && line[-1] != '\n')
			line--;
		if (end > line && strncmp(line, "processed ", 10) &&
		    strncmp(line, "verification time", 17) && strncmp(line, "stack depth", 11) &&
		    strncmp(line, "-- ", 3)) {
			n = (size_t)(end - line) < size - 1 ? (size_t)(end - line) : size - 1;
			memcpy(out, line, n);
			out[n] = 0;
			break;
		}
		end = line;
	}
	/* libbpf poisons a field or type this kernel lacks with call 0xbad2310 */
	if (strstr(out, "unknown#195896080"))
		snprintf(out, size, "it reads a kernel field or type this kernel lacks");
	if (!out[0])
		snprintf(out, size, "no reason given");
}

