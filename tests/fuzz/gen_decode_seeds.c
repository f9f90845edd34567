// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of fuzz_decode: one ring-buffer record of each type, filled the
 * way bpf/jitrace.bpf.c fills them (the whole struct reserved, h.size the bytes used), with
 * values from a real toy JIT run. Run from the repository root:
 *   cc -Iinclude tests/fuzz/gen_decode_seeds.c -o /tmp/gen && /tmp/gen tests/fuzz/corpus/decode
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jt_events.h"

static void put(const char *dir, const char *name, const void *rec, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(rec, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static void hdr(struct jt_ev_hdr *h, unsigned type, size_t size)
{
	h->type = type;
	h->size = size;
	h->ts = 85072315412ULL;
	h->pid = 7786;
	h->tid = 7786;
}

int main(int argc, char **argv)
{
	static struct jt_ev_code code;
	static struct jt_ev_jcode jcode;
	static struct jt_ev_sample sample;
	static struct jt_ev_exec ex;
	static struct jt_ev_proc proc;
	static struct jt_ev_call call;
	static const __u64 ips[] = { 0xffffffff81a00b2cULL, 0xffffffff81000e3cULL,
				     0x7ff77e5d8040ULL, 0x7ff77e5d8108ULL, 0x55d0c8e02d6dULL };

	if (argc != 2) {
		fputs("usage: gen_decode_seeds DIR\n", stderr);
		return 2;
	}
	hdr(&call.h, JT_EV_ENTER, sizeof(call));
	call.id = 1;
	put(argv[1], "enter", &call, sizeof(call));
	call.h.type = JT_EV_LEAVE;
	put(argv[1], "leave", &call, sizeof(call));
	call.h.type = JT_EV_CODE_UNLOAD;
	put(argv[1], "unload", &call, sizeof(call));

	hdr(&code.h, JT_EV_CODE_LOAD, JT_EV_CODE_FIXED + 8);
	code.id = 1;
	code.start = 0x7ff77e5d8000ULL;
	code.size = 0x54;
	code.src = JT_SRC_AGENT;
	code.name_len = 5;
	memcpy(code.name, "toy_a", 5);
	put(argv[1], "code_load", &code, sizeof(code));

	hdr(&jcode.h, JT_EV_JAVA_CODE, sizeof(jcode));
	jcode.id = 2;
	jcode.start = 0x7f3a2c001000ULL;
	jcode.size = 0x180;
	jcode.class_len = 16;
	memcpy(jcode.class_name, "java/lang/String", 16);
	jcode.method_len = 7;
	memcpy(jcode.method, "indexOf", 7);
	jcode.sig_len = 5;
	memcpy(jcode.sig, "(II)I", 5);
	put(argv[1], "java_code", &jcode, sizeof(jcode));

	hdr(&sample.h, JT_EV_SAMPLE, JT_EV_SAMPLE_FIXED + sizeof(ips));
	sample.cpu = 1;
	sample.nr_kernel = 2;
	sample.nr_user = 3;
	memcpy(sample.ips, ips, sizeof(ips));
	put(argv[1], "sample", &sample, sizeof(sample));

	hdr(&ex.h, JT_EV_EXEC, JT_EV_EXEC_FIXED + 24);
	ex.path_len = 23;
	memcpy(ex.comm, "toyjit", 6);
	memcpy(ex.path, "/work/main/build/toyjit", 23);
	put(argv[1], "exec", &ex, sizeof(ex));

	hdr(&proc.h, JT_EV_FORK, sizeof(proc));
	proc.child_pid = 7787;
	memcpy(proc.comm, "toyjit", 6);
	put(argv[1], "fork", &proc, sizeof(proc));
	proc.h.type = JT_EV_EXIT;
	proc.child_pid = 0;
	proc.exit_code = 0;
	put(argv[1], "exit", &proc, sizeof(proc));
	return 0;
}
