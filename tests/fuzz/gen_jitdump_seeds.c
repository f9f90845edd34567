// SPDX-License-Identifier: GPL-2.0
/*
 * Writes the seed corpus of fuzz_jitdump: small jitdump files laid out as perf's
 * jitdump-specification.txt says and as runtimes write them (Node's --perf-prof, perf's
 * JVMTI agent with debug info, a runtime that moves and reuses code), one cut inside a
 * record and one written in the other byte order. Run from the repository root:
 *   cc -Iinclude -Iuser tests/fuzz/gen_jitdump_seeds.c -o /tmp/gen &&
 *   /tmp/gen tests/fuzz/corpus/jitdump
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sources/jitdump.h"

#define EM_X86_64 62
#define PID 31337
#define TS 85072315412ULL	/* CLOCK_MONOTONIC, some time after boot */

struct out {
	unsigned char b[4096];
	size_t n;
	bool swap;
};

static void bytes(struct out *o, const void *p, size_t n)
{
	if (o->n + n > sizeof(o->b)) {
		fputs("seed too large\n", stderr);
		exit(1);
	}
	memcpy(o->b + o->n, p, n);
	o->n += n;
}

static void u32(struct out *o, uint32_t v)
{
	if (o->swap)
		v = __builtin_bswap32(v);
	bytes(o, &v, 4);
}

static void u64(struct out *o, uint64_t v)
{
	if (o->swap)
		v = __builtin_bswap64(v);
	bytes(o, &v, 8);
}

static void header(struct out *o, uint64_t flags)
{
	u32(o, JT_JITDUMP_MAGIC);
	u32(o, 1);
	u32(o, JT_JITDUMP_HEADER_MIN);
	u32(o, EM_X86_64);
	u32(o, 0);
	u32(o, PID);
	u64(o, TS);
	u64(o, flags);
}

static void rec(struct out *o, uint32_t type, size_t size, uint64_t ts)
{
	u32(o, type);
	u32(o, (uint32_t)size);
	u64(o, ts);
}

/* x86 code: push rbp; mov rbp,rsp; ...; pop rbp; ret */
static const unsigned char code[] = {
	0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x10, 0x89, 0x7d, 0xfc, 0x8b, 0x45, 0xfc,
	0x0f, 0xaf, 0xc0, 0x48, 0x83, 0xc4, 0x10, 0x5d, 0xc3, 0x90,
};

static void load(struct out *o, uint64_t ts, uint64_t addr, uint64_t index, const char *name)
{
	rec(o, JT_JITDUMP_CODE_LOAD, JT_JITDUMP_REC_HDR + 40 + strlen(name) + 1 + sizeof(code),
	    ts);
	u32(o, PID);
	u32(o, PID + 2);
	u64(o, addr);
	u64(o, addr);
	u64(o, sizeof(code));
	u64(o, index);
	bytes(o, name, strlen(name) + 1);
	bytes(o, code, sizeof(code));
}

static void move(struct out *o, uint64_t ts, uint64_t from, uint64_t to, uint64_t index)
{
	rec(o, JT_JITDUMP_CODE_MOVE, JT_JITDUMP_REC_HDR + 48, ts);
	u32(o, PID);
	u32(o, PID + 2);
	u64(o, to);
	u64(o, from);
	u64(o, to);
	u64(o, sizeof(code));
	u64(o, index);
}

static void debug(struct out *o, uint64_t ts, uint64_t addr, const char *file, unsigned n)
{
	size_t size = JT_JITDUMP_REC_HDR + 16 + n * (16 + strlen(file) + 1);
	unsigned i;

	rec(o, JT_JITDUMP_CODE_DEBUG_INFO, size, ts);
	u64(o, addr);
	u64(o, n);
	for (i = 0; i < n; i++) {
		u64(o, addr + 4 * i);
		u32(o, 10 + i);
		u32(o, 0);
		bytes(o, file, strlen(file) + 1);
	}
}

static void put(const char *dir, const char *name, const struct out *o, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(o->b, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static struct out o;
	size_t cut;

	if (argc != 2) {
		fputs("usage: gen_jitdump_seeds DIR\n", stderr);
		return 2;
	}
	/* Node --perf-prof: loads of bytecode handlers and optimized functions */
	o = (struct out){ 0 };
	header(&o, 0);
	load(&o, TS + 1000, 0x7f3a40001000ULL, 1, "Builtin:InterpreterEntryTrampoline");
	load(&o, TS + 2000, 0x7f3a40001400ULL, 2, "JS:~fib /app/fib.js:3");
	load(&o, TS + 3000, 0x7f3a40001800ULL, 3, "JS:*fib /app/fib.js:3");
	put(argv[1], "node.dump", &o, o.n);

	/* perf's JVMTI agent: each load after its debug info, a close at the end */
	o = (struct out){ 0 };
	header(&o, 0);
	debug(&o, TS + 1000, 0x7f1c2d000100ULL, "java/lang/String.java", 3);
	load(&o, TS + 1000, 0x7f1c2d000100ULL, 1, "java.lang.String.hashCode()I");
	debug(&o, TS + 2000, 0x7f1c2d000400ULL, "Main.java", 2);
	load(&o, TS + 2000, 0x7f1c2d000400ULL, 2, "Main.loop(I)J");
	rec(&o, JT_JITDUMP_CODE_CLOSE, JT_JITDUMP_REC_HDR, TS + 9000);
	put(argv[1], "jvmti.dump", &o, o.n);

	/* code moved, old code's address reused, unwinding info (its three sizes, no data) */
	o = (struct out){ 0 };
	header(&o, 0);
	load(&o, TS + 1000, 0x7f0000001000ULL, 7, "Foo::bar");
	move(&o, TS + 2000, 0x7f0000001000ULL, 0x7f0000008000ULL, 7);
	load(&o, TS + 3000, 0x7f0000001000ULL, 8, "Foo::baz");
	rec(&o, JT_JITDUMP_CODE_UNWINDING_INFO, JT_JITDUMP_REC_HDR + 24, TS + 3000);
	u64(&o, 0);
	u64(&o, 0);
	u64(&o, 0);
	put(argv[1], "move.dump", &o, o.n);

	/* a runtime still writing: the file ends inside a record's name */
	o = (struct out){ 0 };
	header(&o, 0);
	load(&o, TS + 1000, 0x7f3a40001000ULL, 1, "JS:*first /a.js:1");
	cut = o.n + JT_JITDUMP_REC_HDR + 40 + 5;
	load(&o, TS + 2000, 0x7f3a40002000ULL, 2, "JS:*second /a.js:9");
	put(argv[1], "cut.dump", &o, cut);

	/* written on a machine of the other byte order */
	o = (struct out){ .swap = true };
	header(&o, 0);
	load(&o, TS + 1000, 0x7f3a40001000ULL, 1, "be_method");
	put(argv[1], "swapped.dump", &o, o.n);
	return 0;
}
