// SPDX-License-Identifier: GPL-2.0
/* Unit tests for the loader's policy (user/session/bpfcaps.c): programs wanted, required, and why refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "session/bpfcaps.h"

/* 6.1's verifier on jt_code_load before its bound moved onto the register passed */
static const char log_unbounded[] =
	"0: R1=ctx(off=0,imm=0) R10=fp0\n"
	"; int BPF_KPROBE(jt_code_load, __u64 id, __u64 start, __u64 size, const char *name)\n"
	"0: (bf) r6 = r1                      ; R1=ctx(off=0,imm=0) R6_w=ctx(off=0,imm=0)\n"
	"171: (85) call bpf_ringbuf_output#130\n"
	"R3 unbounded memory access, use 'var &= const' or 'if (var < const)'\n"
	"processed 165 insns (limit 1000000) max_states_per_insn 0 total_states 9 peak_states 9 "
	"mark_read 6\n";

/* a CO-RE relocation of a field the kernel lacks, poisoned by libbpf */
static const char log_poisoned[] =
	"105: (85) call unknown#195896080\n"
	"invalid func unknown#195896080\n"
	"processed 98 insns (limit 1000000) max_states_per_insn 0 total_states 6 peak_states 6 "
	"mark_read 3\n";

static const char log_no_arg[] =
	"func 'sched_process_exit' doesn't have 2-th argument\n"
	"invalid bpf_context access off=8 size=1\n"
	"processed 4 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0 "
	"mark_read 0\n";

static void reason_is_the_last_line_that_says_why(void **state)
{
	char why[128];

	(void)state;
	jt_bpfcaps__reason(log_unbounded, why, sizeof(why));
	assert_string_equal(why, "R3 unbounded memory access, use 'var &= const' or 'if (var < "
				 "const)'");
	jt_bpfcaps__reason(log_no_arg, why, sizeof(why));
	assert_string_equal(why, "invalid bpf_context access off=8 size=1");
	jt_bpfcaps__reason(log_poisoned, why, sizeof(why));
	assert_string_equal(why, "it reads a kernel field or type this kernel lacks");
	jt_bpfcaps__reason("", why, sizeof(why));
	assert_string_equal(why, "no reason given");
	jt_bpfcaps__reason("processed 1 insns\n\n", why, sizeof(why));
	assert_string_equal(why, "no reason given");
	/* a line longer than out is cut, NUL-terminated */
	jt_bpfcaps__reason(log_unbounded, why, 8);
	assert_string_equal(why, "R3 unbo");
}

static void only_what_the_options_need_is_loaded(void **state)
{
	struct jt_bpf_opts o = { .sample_hz = 99, .attach = true };

	(void)state;
	/* no agent, no calls, no USDT, no off-CPU: their programs stay out */
	assert_false(jt_bpfcaps__wanted("jt_enter", &o, true));
	assert_false(jt_bpfcaps__wanted("jt_leave_id", &o, true));
	assert_false(jt_bpfcaps__wanted("jt_code_load", &o, true));
	assert_false(jt_bpfcaps__wanted("jt_jvm_load", &o, true));
	assert_false(jt_bpfcaps__wanted("jt_switch", &o, true));
	assert_false(jt_bpfcaps__wanted("jt_storm", &o, true));
	assert_true(jt_bpfcaps__wanted("jt_sample", &o, true));
	assert_true(jt_bpfcaps__wanted("jt_maps", &o, true));
	assert_true(jt_bpfcaps__wanted("jt_exec", &o, true));
	/* one exit program, by what the kernel's tracepoint passes */
	assert_true(jt_bpfcaps__wanted("jt_exit", &o, true));
	assert_false(jt_bpfcaps__wanted("jt_exit_task", &o, true));
	assert_false(jt_bpfcaps__wanted("jt_exit", &o, false));
	assert_true(jt_bpfcaps__wanted("jt_exit_task", &o, false));

	o.agent_path = "libjitrace-agent.so";
	o.calls = true;
	o.usdt = true;
	o.offcpu = true;
	o.sample_hz = 0;
	assert_true(jt_bpfcaps__wanted("jt_enter", &o, true));
	assert_true(jt_bpfcaps__wanted("jt_enter_id", &o, true));
	assert_true(jt_bpfcaps__wanted("jt_leave_id", &o, true));
	assert_true(jt_bpfcaps__wanted("jt_code_unload", &o, true));
	assert_true(jt_bpfcaps__wanted("jt_jvm_return", &o, true));
	assert_true(jt_bpfcaps__wanted("jt_sys_exit", &o, true));
	assert_false(jt_bpfcaps__wanted("jt_sample", &o, true));
	assert_true(jt_bpfcaps__wanted("jt_maps", &o, true));	/* off-CPU stacks are named */

	o = (struct jt_bpf_opts){ .attach = false };	/* the benchmarks' event generator */
	assert_true(jt_bpfcaps__wanted("jt_storm", &o, true));
}

static void only_what_was_asked_for_outright_is_required(void **state)
{
	struct jt_bpf_opts o = { .sample_hz = 99, .attach = true };

	(void)state;
	assert_true(jt_bpfcaps__required("jt_sample", &o));
	assert_false(jt_bpfcaps__required("jt_enter", &o));
	assert_false(jt_bpfcaps__required("jt_maps", &o));
	assert_false(jt_bpfcaps__required("jt_exec", &o));
	assert_false(jt_bpfcaps__required("jt_code_load", &o));
	assert_false(jt_bpfcaps__required("jt_exit_task", &o));
	o.calls = true;
	o.offcpu = true;
	assert_true(jt_bpfcaps__required("jt_enter", &o));
	assert_true(jt_bpfcaps__required("jt_switch", &o));
	assert_false(jt_bpfcaps__required("jt_sys_exit", &o));	/* stacks in syscalls only */
}

static void every_program_says_what_it_gives(void **state)
{
	static const char *const progs[] = {
		"jt_enter", "jt_leave", "jt_enter_id", "jt_leave_id", "jt_code_load",
		"jt_code_unload", "jt_jvm_load", "jt_jvm_unload", "jt_jvm_enter", "jt_jvm_return",
		"jt_sample", "jt_maps", "jt_exec", "jt_exit", "jt_exit_task", "jt_fork",
		"jt_switch", "jt_sys_exit",
		"jt_off_flush", "jt_storm",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		assert_string_not_equal(jt_bpfcaps__gives(progs[i]), progs[i]);
	assert_string_equal(jt_bpfcaps__gives("jt_new"), "jt_new");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reason_is_the_last_line_that_says_why),
		cmocka_unit_test(only_what_the_options_need_is_loaded),
		cmocka_unit_test(only_what_was_asked_for_outright_is_required),
		cmocka_unit_test(every_program_says_what_it_gives),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
