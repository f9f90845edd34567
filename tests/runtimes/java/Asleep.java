// A JVM found as it runs, for the reader of HotSpot's own structures (itest_hsreader): the
// thread "napper" sleeps inside deep(3), interpreted (every method on its way is called
// once), while main sleeps inside tick(3), compiled after a warm-up of many calls, and the
// thread "burner", while the file FLAG exists, works in compiled code most of the time (5 ms
// of mix(), then 1 ms asleep; else it sleeps 20 ms at a time).
// Usage: java Asleep SECONDS [FLAG]   (prints "asleep ready" once both sleep, "asleep done"
// at the end)
public class Asleep {
	static long sink;

	static void deep(int n, long ms) throws InterruptedException {
		if (n == 0)
			Thread.sleep(ms);
		else
			deep(n - 1, ms);
	}

	static void napper(long ms) {
		try {
			deep(3, ms);
		} catch (InterruptedException e) {
		}
	}

	// Recursive, so that some of its calls stay calls when C2 inlines the rest. Warmed up
	// with sleep(0) (a yield), so that the last call's path is the compiled one, not a trap.
	static void tick(int n, long ms) throws InterruptedException {
		if (n == 0) {
			Thread.sleep(ms);
			sink++;
		} else {
			tick(n - 1, ms);
		}
	}

	static long mix(long x) {
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	// Recursive: the compiler inlines a level or so, the rest stay calls, so that a stop
	// often finds the thread in a prologue or an epilogue.
	static long rec(int n, long x) {
		if (n == 0)
			return x * 6364136223846793005L + 1442695040888963407L;
		return rec(n - 1, x) * 6364136223846793005L + 1442695040888963407L;
	}

	static void burn(java.io.File flag) {
		long x = 1;

		try {
			for (;;) {
				if (flag == null || !flag.exists()) {
					Thread.sleep(20);
					continue;
				}
				long until = System.nanoTime() + 5000000L;

				while (System.nanoTime() < until)
					x = rec(16, mix(x));
				sink = x;
				Thread.sleep(1);
			}
		} catch (InterruptedException e) {
		}
	}

	public static void main(String[] args) throws Exception {
		long ms = (long)((args.length > 0 ? Double.parseDouble(args[0]) : 30) * 1000);
		Thread t = new Thread(() -> napper(ms), "napper");
		java.io.File flag = args.length > 1 ? new java.io.File(args[1]) : null;
		Thread b = new Thread(() -> burn(flag), "burner");

		b.setDaemon(true);
		b.start();

		for (int i = 0; i < 100000; i++)
			tick(3, 0);
		Thread.sleep(1500);	// for the compiler's queue to empty
		t.start();
		System.out.println("asleep ready");
		System.out.flush();
		tick(3, ms);
		t.join();
		System.out.println("asleep done");
	}
}
