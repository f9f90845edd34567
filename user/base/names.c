// SPDX-License-Identifier: GPL-2.0
/* Printable names of the log's enums, as dump and the reports show them. */
#include "jt_events.h"
#include "jt_log_format.h"
#include "base/names.h"
#include "base/util.h"

static const char *const drop_names[] = {
	[JT_DROP_RB_CALL] = "ringbuf_call",
	[JT_DROP_RB_SAMPLE] = "ringbuf_sample",
	[JT_DROP_RB_CODE] = "ringbuf_code",
	[JT_DROP_RB_PROC] = "ringbuf_proc",
	[JT_DROP_STACK] = "stack",
	[JT_DROP_REORDER] = "reorder",
	[JT_DROP_DECODE] = "decode",
	[JT_DROP_PERFMAP_LINE] = "perfmap_line",
	[JT_DROP_UNSURE_FRAME] = "unsure_frame",
	[JT_DROP_PERFMAP_CAP] = "perfmap_cap",
	[JT_DROP_JITDUMP] = "jitdump",
	[JT_DROP_BROKEN_STACK] = "broken_stack",
	[JT_DROP_RB_OFFCPU] = "ringbuf_offcpu",
	[JT_DROP_OFFCPU_STATE] = "offcpu_state",
	[JT_DROP_OFFCPU_UNPAIRED] = "offcpu_unpaired",
	[JT_DROP_MEMORY_PERFMAP] = "memory_perfmap",
	[JT_DROP_MEMORY_CODE] = "memory_code",
	[JT_DROP_MEMORY_SCOPES] = "memory_scopes",
	[JT_DROP_CALLS_FULL] = "calls_full",
	[JT_DROP_CALLS_BAD] = "calls_bad",
	[JT_DROP_MEMORY_INTERP] = "memory_interp",
};
_Static_assert(JT_ARRAY_SIZE(drop_names) == JT_DROP_MAX, "a drop reason has no name");

bool jt_drop__kept(unsigned what)
{
	return what == JT_DROP_UNSURE_FRAME || what == JT_DROP_BROKEN_STACK ||
	       what == JT_DROP_MEMORY_INTERP;
}

uint64_t jt_drop__lost(const uint64_t *counts, size_t n)
{
	uint64_t lost = 0;
	size_t i;

	for (i = 0; i < n; i++)
		if (!jt_drop__kept(i))
			lost += counts[i];
	return lost;
}

static const char *const src_names[] = {
	[JT_SRC_AGENT] = "agent",
	[JT_SRC_USDT] = "usdt",
	[JT_SRC_PERFMAP] = "perfmap",
	[JT_SRC_JITDUMP] = "jitdump",
	[JT_SRC_VMSTRUCTS] = "vmstructs",
};
_Static_assert(JT_ARRAY_SIZE(src_names) == JT_SRC_MAX, "a method source has no name");

static const char *const rec_names[] = {
	[JT_REC_METHOD] = "method",
	[JT_REC_UNLOAD] = "unload",
	[JT_REC_ENTER] = "enter",
	[JT_REC_LEAVE] = "leave",
	[JT_REC_SAMPLE] = "sample",
	[JT_REC_EXEC] = "exec",
	[JT_REC_EXIT] = "exit",
	[JT_REC_DROP] = "drop",
	[JT_REC_PROC] = "proc",
	[JT_REC_MODULE] = "module",
	[JT_REC_END] = "end",
	[JT_REC_SYMBOL] = "symbol",
	[JT_REC_LINES] = "lines",
	[JT_REC_LATE] = "late",
	[JT_REC_THREAD] = "thread",
	[JT_REC_OFFCPU] = "offcpu",
	[JT_REC_INLINE] = "inline",
	[JT_REC_CALLS] = "calls",
	[JT_REC_CALLSUM] = "callsum",
	[JT_REC_SPAN] = "span",
};
_Static_assert(JT_ARRAY_SIZE(rec_names) == JT_REC_MAX, "a record type has no name");

static const char *const off_state_names[] = {
	[JT_OFF_SLEEP] = "sleep",
	[JT_OFF_BLOCKED] = "blocked",
	[JT_OFF_PREEMPTED] = "preempted",
	[JT_OFF_OTHER] = "other",
	[JT_OFF_SHORT] = "short",
};
_Static_assert(JT_ARRAY_SIZE(off_state_names) == JT_OFF_MAX, "an off-CPU state has no name");

static const char *lookup(const char *const *names, unsigned n, unsigned v)
{
	return v < n && names[v] ? names[v] : "unknown";
}

const char *jt_drop__name(unsigned what)
{
	return lookup(drop_names, JT_ARRAY_SIZE(drop_names), what);
}

const char *jt_src__name(unsigned src)
{
	return lookup(src_names, JT_ARRAY_SIZE(src_names), src);
}

const char *jt_rec__name(unsigned type)
{
	return lookup(rec_names, JT_ARRAY_SIZE(rec_names), type);
}

const char *jt_off_state__name(unsigned state)
{
	return lookup(off_state_names, JT_ARRAY_SIZE(off_state_names), state);
}
