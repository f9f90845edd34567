// SPDX-License-Identifier: GPL-2.0
/*
 * A short-lived native program for the names tests: spins MS ms of CPU (60 by default) in
 * blip_spin() and exits. Run twenty times in a row it is the host full of brief
 * processes that a system-wide tracer meets most. Built as split too, its code in a
 * section of its own (BLIP_CODE, build.mk).
 */
#include <stdlib.h>
#include <time.h>

#ifndef BLIP_CODE
#define BLIP_CODE
#endif

static BLIP_CODE double cpu_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

__attribute__((noinline)) BLIP_CODE void blip_spin(double ms)
{
	volatile unsigned long x = 0;
	double end = cpu_ms() + ms;
	int i;

	do {
		for (i = 0; i < 1000000; i++)	/* about a millisecond */
			x += i;
	} while (cpu_ms() < end);
}

BLIP_CODE int main(int argc, char **argv)
{
	blip_spin(argc > 1 ? atof(argv[1]) : 60);
	return 0;
}
