// SPDX-License-Identifier: GPL-2.0
/*
 * CPU-bound workload for bench_stacks: burnA() under level3 < level2 < level1 < main, each
 * its own compiled method (run with -XX:CompileCommand=dontinline,Deep::*), so that a whole
 * stack of a sample in burnA holds all four callers.
 *
 * Usage: java Deep SECONDS
 * Works for SECONDS, then prints "pid P", "rounds N" and "cpu_s S": the rounds of work done after a
 * second's warm-up (the JIT's compiling) and the main thread's CPU time over them.
 */
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

public final class Deep {
	static long sink;

	static long burnA(long x) {
		for (int i = 0; i < 3000; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static long level3(long x) {
		return burnA(x) ^ 1;
	}

	static long level2(long x) {
		return level3(x) ^ 2;
	}

	static long level1(long x) {
		return level2(x) ^ 3;
	}

	public static void main(String[] args) {
		ThreadMXBean tm = ManagementFactory.getThreadMXBean();
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 4;
		long start = System.nanoTime(), end = start + (long)(secs * 1e9), now, x = 1;
		long rounds = 0, cpu0 = -1;

		do {
			x = level1(x);
			now = System.nanoTime();
			if (cpu0 < 0 && now - start > 1000000000L)
				cpu0 = tm.getCurrentThreadCpuTime();
			else if (cpu0 >= 0)
				rounds++;
		} while (now < end);
		sink = x;
		System.out.println("pid " + ProcessHandle.current().pid());
		System.out.println("rounds " + rounds);
		System.out.println("cpu_s " + (tm.getCurrentThreadCpuTime() - cpu0) / 1e9);
	}
}
