// SPDX-License-Identifier: GPL-2.0
/*
 * A native program for the off-CPU tests: wait_long() sleeps 30 ms and wait_short() 10 ms,
 * in turn, ROUNDS times (40 by default), using next to no CPU. Its off-CPU time splits 3:1
 * between the two, and nothing else of it should be on the CPU.
 */
#include <stdlib.h>
#include <time.h>

static void sleep_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t))
		;
}

__attribute__((noinline)) void wait_long(void)
{
	sleep_ms(30);
	__asm__ volatile("" ::: "memory");	/* not a tail call: this frame stays */
}

__attribute__((noinline)) void wait_short(void)
{
	sleep_ms(10);
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	int i, rounds = argc > 1 ? atoi(argv[1]) : 40;

	for (i = 0; i < rounds; i++) {
		wait_long();
		wait_short();
	}
	return 0;
}
