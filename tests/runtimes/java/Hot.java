// A known CPU split for jitrace's HotSpot tests: a() does three times the work of b(), both
// called from outer() under main()'s loop, so a sampled stack reads Hot.a <- Hot.outer <-
// Hot.main. Run with -XX:CompileCommand=dontinline,Hot::* so each stays its own compiled
// method; the loop is short enough per turn for main() itself to be compiled (OSR) early.
// Usage: java Hot SECONDS   (prints "hot ready" after a second, "hot done" at the end)
public class Hot {
	static long sink;

	// The same loop in each, so that the leaf is a() or b() itself.
	static long a(long x) {
		for (int i = 0; i < 3000; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static long b(long x) {
		for (int i = 0; i < 1000; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	static long outer(long x) {
		return b(a(x));
	}

	public static void main(String[] args) {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2;
		long start = System.nanoTime(), end = start + (long)(secs * 1e9), now, x = 1;
		boolean ready = false;

		do {
			x = outer(x);
			now = System.nanoTime();
			if (!ready && now - start > 1000000000L) {
				System.out.println("hot ready");
				System.out.flush();
				ready = true;
			}
		} while (now < end);
		sink = x;
		System.out.println("hot done");
	}
}
