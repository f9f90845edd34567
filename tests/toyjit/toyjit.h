/* SPDX-License-Identifier: MIT */
/* The toy JIT program: its options, its output lines, its scenarios. */
#ifndef TOYJIT_H
#define TOYJIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jit.h"
#include "sink.h"

struct toy_call_spec {
	char name[TOY_NAME_MAX];
	uint64_t count;
};

struct toy_opts {
	const char *scenario;
	bool instrument;	/* -i */
	uint64_t start_delay_ms;
	uint64_t ms;		/* --ms, or the scenario's default */
	uint32_t ratio_a;	/* split: units per hot_a call */
	uint32_t ratio_b;	/* split: units per hot_b call */
	bool fp_loop;		/* split: hot_a's saved frame pointer points at itself */
	bool fp_astray;		/* split: hot_a's return address points at its stack */
	int rewrite_map;	/* split: enum toy_rewrite (sink.h), halfway through */
	uint32_t outer;		/* calls: toy_outer calls */
	uint32_t inner;		/* calls: toy_inner calls per toy_outer call */
	uint64_t methods;	/* many */
	uint64_t hold_ms;	/* many: asleep with the code loaded after the calls */
	const struct toy_call_spec *calls;	/* calls: NAME=COUNT */
	size_t ncalls;
	struct toy_sink *sink;	/* where code loads are told (sink.h) */
};

/* One line on stdout, flushed at once: tests read it while we run. */
void toy_out(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "toyjit: " + message on stderr. */
void toy_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint64_t toy_now_ns(void);	/* CLOCK_MONOTONIC */
uint64_t toy_cpu_ns(void);	/* CPU time of the process */
void toy_sleep_ms(uint64_t ms);

/* Each returns 0 or -1 after reporting the error. */
int scenario_calls(const struct toy_opts *o);
int scenario_split(const struct toy_opts *o);
int scenario_recompile(const struct toy_opts *o);
int scenario_many(const struct toy_opts *o);
int scenario_idle(const struct toy_opts *o);
int scenario_threads(const struct toy_opts *o);
int scenario_block(const struct toy_opts *o);

#endif
