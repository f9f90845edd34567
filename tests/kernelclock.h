/* SPDX-License-Identifier: GPL-2.0 */
/* Whether the kernel keeps time by the TSC: the agent's clock for calls only then. */
#ifndef JT_TEST_KERNELCLOCK_H
#define JT_TEST_KERNELCLOCK_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static inline bool test_kernel_clock_is_tsc(void)
{
	char src[16] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");

	if (f) {
		if (!fgets(src, sizeof(src), f))
			src[0] = 0;
		fclose(f);
	}
	return !strcmp(src, "tsc\n");
}

#endif
