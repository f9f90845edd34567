// Whole Java stacks without frame pointers, interpreted frames named (itest_hswalk): main
// burns in burnA() (compiled, under outer() in main's loop) and, every 8th turn, in slow(),
// which the test keeps interpreted (-XX:CompileCommand=exclude,Naps::slow); the thread
// "napper" sleeps 20 ms at a time inside nap(3), kept interpreted alike (exclude,Naps::nap),
// so that its waits leave the CPU from interpreted frames while the JVM lives.
// Usage: java Naps SECONDS   (prints "naps ready" after a second, "naps done" at the end)
public class Naps {
	static long sink;
	static volatile boolean done;

	static long burnA(long x) {
		for (int i = 0; i < 3000; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	// The same loop, run by the interpreter: slower per turn, hence fewer of them.
	static long slow(long x) {
		for (int i = 0; i < 300; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static long outer(long x) {
		return burnA(x);
	}

	static void nap(int n, long ms) throws InterruptedException {
		if (n == 0)
			Thread.sleep(ms);
		else
			nap(n - 1, ms);
	}

	static void napper() {
		try {
			while (!done)
				nap(3, 20);
		} catch (InterruptedException e) {
		}
	}

	public static void main(String[] args) throws Exception {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2;
		long start = System.nanoTime(), end = start + (long)(secs * 1e9), now, x = 1;
		Thread t = new Thread(Naps::napper, "napper");
		boolean ready = false;
		int turn = 0;

		t.start();
		do {
			x = outer(x);
			if ((++turn & 7) == 0)
				x = slow(x);
			now = System.nanoTime();
			if (!ready && now - start > 1000000000L) {
				System.out.println("naps ready");
				System.out.flush();
				ready = true;
			}
		} while (now < end);
		done = true;
		t.join();
		sink = x;
		System.out.println("naps done");
	}
}
