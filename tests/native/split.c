// SPDX-License-Identifier: GPL-2.0
/*
 * A short-lived native program whose code is in two executable segments, its own functions
 * in the second (as node's text is): spins MS ms of CPU (60 by default) in split_spin()
 * and exits. Built with .hot placed a few pages after the usual segments (build.mk).
 */
#include <stdlib.h>
#include <time.h>

#define HOT __attribute__((noinline, section(".hot")))

static HOT double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

HOT void split_spin(double ms)
{
	volatile unsigned long x = 0;
	double end = cpu_ms() + ms;
	int i;

	do {
		for (i = 0; i < 1000000; i++)	/* about a millisecond */
			x += i;
	} while (cpu_ms() < end);
}

HOT int main(int argc, char **argv)
{
	split_spin(argc > 1 ? atof(argv[1]) : 60);
	return 0;
}
