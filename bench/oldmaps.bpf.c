// SPDX-License-Identifier: GPL-2.0
/* Yardsticks for jt_maps (bench_syscalls): jitrace's old tracefs hooks, a bare sys_exit hook. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "jt_events.h"

#define PROT_EXEC 0x4
#define VM_EXEC 0x4

char LICENSE[] SEC("license") = "GPL";

/* The traced pids, one bit each, as jitrace keeps them: a plain load from .bss. */
__u64 pid_bits[JT_PID_LIMIT / 64];

/* What the programs saw, so that the compiler keeps their tests: executable mappings, exits. */
__u64 exec_seen, traced_exits;

static __always_inline bool traced(__u32 pid)
{
	pid &= JT_PID_LIMIT - 1;
	return pid_bits[pid / 64] & (1ULL << (pid % 64));
}

static long vma_found(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	if (vma->vm_flags & VM_EXEC)
		__sync_fetch_and_add(&exec_seen, 1);
	return 0;
}

/* jitrace's jt_mmap before jt_maps: the failed call, the filter, then the mapping looked up. */
SEC("tracepoint/syscalls/sys_exit_mmap")
int old_mmap(struct trace_event_raw_sys_exit *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (ctx->ret < 0 && ctx->ret > -4096)
		return 0;
	if (!traced(pid_tgid >> 32))
		return 0;
	bpf_find_vma(bpf_get_current_task_btf(), ctx->ret, vma_found, NULL, 0);
	return 0;
}

/* jitrace's jt_mprotect before jt_maps, up to its lookup: only PROT_EXEC of a traced pid. */
SEC("tracepoint/syscalls/sys_enter_mprotect")
int old_mprotect(struct trace_event_raw_sys_enter *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (!(ctx->args[2] & PROT_EXEC) || !ctx->args[1] || !traced(pid_tgid >> 32))
		return 0;
	bpf_find_vma(bpf_get_current_task_btf(), ctx->args[0], vma_found, NULL, 0);
	return 0;
}

/* The floor of jt_maps' hook: at every system call's exit the pid filter and nothing else. */
SEC("tp_btf/sys_exit")
int BPF_PROG(bare_exit, struct pt_regs *regs, long ret)
{
	if (traced(bpf_get_current_pid_tgid() >> 32))
		traced_exits++;
	return 0;
}
