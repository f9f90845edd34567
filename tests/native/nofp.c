// SPDX-License-Identifier: GPL-2.0
/*
 * A native program built without frame pointers (-O2 -fomit-frame-pointer, as Debian builds
 * its own): main > level1 > level2 > level3 > leaf_work, spinning for SECS seconds (3 by
 * default) in leaf_work, so that a sampled stack is whole only if it is unwound by CFI.
 * Every level does work after its call, so that no call becomes a jump. Prints the rounds it
 * made and the CPU time it had for them (its throughput on a shared machine).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#define NOINLINE __attribute__((noinline, noclone))

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* This process's CPU time, user and system (a sample's interrupt is charged here too). */
static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

NOINLINE unsigned long leaf_work(unsigned long n)
{
	volatile unsigned long x = 0;
	unsigned long i;

	for (i = 0; i < n; i++)
		x += i ^ (x >> 3);
	return x;
}

NOINLINE unsigned long level3(unsigned long n)
{
	return leaf_work(n) + 3;
}

NOINLINE unsigned long level2(unsigned long n)
{
	return level3(n) * 2 + 1;
}

NOINLINE unsigned long level1(unsigned long n)
{
	return level2(n) ^ 5;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3, end = now() + secs;
	volatile unsigned long sink = 0;
	unsigned long rounds = 0;

	do {
		sink += level1(2000000);	/* about a millisecond */
		rounds++;
	} while (now() < end);
	printf("rounds %lu\n", rounds);	/* its throughput, for the benchmarks */
	printf("cpu_s %.3f\n", cpu_s());	/* and the CPU it had for them */
	return sink == 42;
}
