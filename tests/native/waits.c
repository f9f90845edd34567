// SPDX-License-Identifier: GPL-2.0
/*
 * A native program for the off-CPU tests: wait_long() sleeps LONG_US and wait_short()
 * SHORT_US microseconds (30000 and 10000 by default), in turn, ROUNDS times (40), using
 * next to no CPU, each calling the C library's nanosleep itself. Its off-CPU time splits
 * about LONG_US:SHORT_US between the two; at the end it prints how long it was in each
 * (CLOCK_MONOTONIC around the calls, so with the time a busy machine adds before the
 * thread runs again): "waited wait_long=NS wait_short=NS", and how many times it left the
 * CPU (getrusage): "switches N".
 * Usage: waits [ROUNDS [LONG_US SHORT_US]]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

/* inlined: wait_long() and wait_short() call the C library themselves */
static inline __attribute__((always_inline)) void sleep_us(long us)
{
	struct timespec t = { us / 1000000, (us % 1000000) * 1000L };

	while (nanosleep(&t, &t))
		;
}

__attribute__((noinline)) void wait_long(long us)
{
	sleep_us(us);
	__asm__ volatile("" ::: "memory");	/* not a tail call: this frame stays */
}

__attribute__((noinline)) void wait_short(long us)
{
	sleep_us(us);
	__asm__ volatile("" ::: "memory");
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

int main(int argc, char **argv)
{
	int i, rounds = argc > 1 ? atoi(argv[1]) : 40;
	long long_us = argc > 3 ? atol(argv[2]) : 30000, short_us = argc > 3 ? atol(argv[3]) : 10000;
	uint64_t in_long = 0, in_short = 0, t;
	struct rusage ru;

	for (i = 0; i < rounds; i++) {
		t = now_ns();
		wait_long(long_us);
		in_long += now_ns() - t;
		t = now_ns();
		wait_short(short_us);
		in_short += now_ns() - t;
	}
	printf("waited wait_long=%llu wait_short=%llu\n", (unsigned long long)in_long,
	       (unsigned long long)in_short);
	if (!getrusage(RUSAGE_SELF, &ru))
		printf("switches %ld\n", ru.ru_nvcsw + ru.ru_nivcsw);
	return 0;
}
