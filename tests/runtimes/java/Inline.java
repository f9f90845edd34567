// Inlined frames for jitrace's HotSpot tests: outer() spends its time in mix(), a small hot
// method C2 inlines into it, so outer's compiled code is mostly mix's. Run with
// -XX:CompileCommand=dontinline,Inline::outer so that outer stays its own compiled method.
// Usage: java Inline SECONDS   (prints "inline done" at the end)
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
		long end = System.nanoTime() + (long)(Double.parseDouble(args[0]) * 1e9), x = 1;

		while (System.nanoTime() < end)
			x = outer(x);
		sink = x;
		System.out.println("inline done");
	}
}
