// SPDX-License-Identifier: GPL-2.0
/*
 * CPU-bound workload for bench_sampling: a mix of hashing, sorting small arrays and
 * integer arithmetic, called through a chain of nested frames (as a real application's
 * stack is), so the JIT compiles several methods and a sample walks a realistic stack.
 *
 * Usage: java Work WARMUP_MS WINDOW_MS
 * Works for WARMUP_MS, prints "ready", then for every line read on stdin works for
 * WINDOW_MS and prints "count N" (units of work done in the window); exits at EOF.
 * Single-threaded.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;

public final class Work {
	static final int DEPTH = 24;	/* frames between the driver and the work */
	static final byte[] data = new byte[256];
	static final int[] arr = new int[48];
	static long seed = 0x9e3779b97f4a7c15L;
	static long sink;

	static long next() {
		seed ^= seed << 13;
		seed ^= seed >>> 7;
		seed ^= seed << 17;
		return seed;
	}

	/* FNV-1a over the buffer, then a murmur-style finish. */
	static long hash(byte[] b, long salt) {
		long h = 0xcbf29ce484222325L ^ salt;

		for (int i = 0; i < b.length; i++) {
			h ^= b[i] & 0xff;
			h *= 0x100000001b3L;
		}
		h ^= h >>> 33;
		h *= 0xff51afd7ed558ccdL;
		h ^= h >>> 33;
		return h;
	}

	static void fill(int[] a) {
		for (int i = 0; i < a.length; i++)
			a[i] = (int)next();
	}

	static void isort(int[] a) {
		for (int i = 1; i < a.length; i++) {
			int v = a[i], j = i - 1;

			while (j >= 0 && a[j] > v) {
				a[j + 1] = a[j];
				j--;
			}
			a[j + 1] = v;
		}
	}

	static long gcdsum(long n) {
		long s = 0;

		for (long i = 1; i <= n; i++) {
			long a = i * 7919 + 13, b = n + i * 31;

			while (b != 0) {
				long t = a % b;

				a = b;
				b = t;
			}
			s += a;
		}
		return s;
	}

	static long unit(int k) {
		data[k & 255] = (byte)k;
		long h = hash(data, k);

		fill(arr);
		isort(arr);
		return h + arr[k % arr.length] + gcdsum(64 + (k & 31));
	}

	static long nest(int d, int k) {
		if (d == 0)
			return unit(k);
		return nest(d - 1, k) + d;
	}

	/* Units done in ms milliseconds; the clock is read once a unit (tens of µs each). */
	static long run(long ms) {
		long end = System.nanoTime() + ms * 1000000L, n = 0;

		while (System.nanoTime() < end) {
			sink += nest(DEPTH, (int)n);
			n++;
		}
		return n;
	}

	public static void main(String[] args) throws Exception {
		long warmup = Long.parseLong(args[0]), window = Long.parseLong(args[1]);
		BufferedReader in = new BufferedReader(new InputStreamReader(System.in));

		run(warmup);
		System.out.println("ready");
		System.out.flush();
		while (in.readLine() != null) {
			long n = run(window);

			System.out.println("count " + n + " " + (sink & 0xff));
			System.out.flush();
		}
	}
}
