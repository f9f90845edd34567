// Exact call counts for jitrace's HotSpot tests: target() is called exactly N times.
// Usage: java Calls N   (prints "calls done N")
public class Calls {
	static int sink;

	static int target(int x) {
		return x * 31 + 7;
	}

	public static void main(String[] args) {
		int n = Integer.parseInt(args[0]), x = 0;

		for (int i = 0; i < n; i++)
			x = target(x);
		sink = x;
		System.out.println("calls done " + n);
	}
}
