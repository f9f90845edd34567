// Inlined frames for jitrace's HotSpot tests: outer() spends its time in mix(), a small hot
// method C2 inlines into it, so outer's compiled code is mostly mix's. Run with
// -XX:CompileCommand=dontinline,Inline::outer so that outer stays its own compiled method.
// Usage: java Inline SECONDS   (prints "inline ready" after a second, "inline done" at the end)
public class Inline {
	static long sink;

	static long mix(long x) {
		x ^= x << 13;
		x ^= x >>> 7;
		x ^= x << 17;
		x *= 0x9E3779B97F4A7C15L;
		x ^= x >>> 31;
		x *= 0xBF58476D1CE4E5B9L;
		return x ^ (x >>> 29);
	}

	static long outer(long x) {
		for (int i = 0; i < 20000; i++)
			x = mix(x ^ i);
		return x;
	}

	public static void main(String[] args) {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2;
		long start = System.nanoTime(), end = start + (long)(secs * 1e9), now, x = 1;
		boolean ready = false;

		do {
			x = outer(x);
			now = System.nanoTime();
			if (!ready && now - start > 1000000000L) {
				System.out.println("inline ready");
				System.out.flush();
				ready = true;
			}
		} while (now < end);
		sink = x;
		System.out.println("inline done");
	}
}
