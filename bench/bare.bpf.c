// SPDX-License-Identifier: GPL-2.0
/* The floor for call tracing: uprobes on the agent's stubs that do nothing at all. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int bare_enter(struct pt_regs *ctx)
{
	return 0;
}

SEC("uprobe")
int bare_leave(struct pt_regs *ctx)
{
	return 0;
}
