// A JVM found as it runs, for the reader of HotSpot's own structures (itest_hsreader): the
// thread "napper" sleeps inside deep(3), interpreted (every method on its way is called
// once), while main sleeps inside tick(3), compiled after a warm-up of many calls.
// Usage: java Asleep SECONDS   (prints "asleep ready" once both sleep, "asleep done" at the end)
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

	public static void main(String[] args) throws Exception {
		long ms = (long)((args.length > 0 ? Double.parseDouble(args[0]) : 30) * 1000);
		Thread t = new Thread(() -> napper(ms), "napper");

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
