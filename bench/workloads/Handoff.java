// SPDX-License-Identifier: GPL-2.0
/*
 * Switch-heavy workload for bench_offcpu: two threads hand a turn back and forth
 * (LockSupport.park/unpark, a futex underneath), each parking under a chain of nested
 * frames (as a real application's thread waits, deep in its stack), so every context switch
 * leaves a deep JIT stack behind: the ping-pong of bench_offcpu with a JIT's stack.
 *
 * Usage: java Handoff WARMUP_MS WINDOW_MS
 * Hands off for WARMUP_MS, prints "ready", then for every line read on stdin hands off for
 * WINDOW_MS and prints "count N" (round trips in the window); exits at EOF.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.locks.LockSupport;

public final class Handoff {
	static final int DEPTH = 24;	/* frames between a thread's run() and its park */
	static final int BATCH = 64;	/* round trips between two reads of the clock */
	static volatile int turn;	/* 0: ping's, 1: pong's */
	static volatile Thread ping, pong;

	/* Wait, DEPTH frames down, until it is this side's turn. */
	static int await(int d, int mine) {
		if (d > 0)
			return await(d - 1, mine) + 1;
		while (turn != mine)
			LockSupport.park();
		return 0;
	}

	static long run(long ms) {
		long end = System.nanoTime() + ms * 1000000L, n = 0;

		do {
			for (int i = 0; i < BATCH; i++) {
				turn = 1;
				LockSupport.unpark(pong);
				await(DEPTH, 0);
			}
			n += BATCH;
		} while (System.nanoTime() < end);
		return n;
	}

	public static void main(String[] args) throws Exception {
		long warmup = Long.parseLong(args[0]), window = Long.parseLong(args[1]);
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in));

		ping = Thread.currentThread();
		pong = new Thread(() -> {
			for (;;) {
				await(DEPTH, 1);
				turn = 0;
				LockSupport.unpark(ping);
			}
		}, "pong");
		pong.setDaemon(true);
		pong.start();
		run(warmup);
		System.out.println("ready");
		System.out.flush();
		while (in.readLine() != null) {
			long n = run(window);

			System.out.println("count " + n);
			System.out.flush();
		}
	}
}
