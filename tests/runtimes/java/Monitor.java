// A thread blocked on a monitor another thread holds, for jitrace's off-CPU tests. Thread
// "holder" takes the lock for 30 ms at a time and lets it go for 5 ms; thread "waiter"
// calls contend(), which takes the same lock, again and again, so it spends most of its
// time blocked in contend(). contend() is called uncontended first, until it is compiled.
// Usage: java Monitor SECONDS   (prints "monitor ready" when contention starts, then
// "monitor done")
public class Monitor {
	static final Object lock = new Object();
	static volatile boolean stop;
	static long sink;

	static long contend(long x) {
		synchronized (lock) {
			return x * 6364136223846793005L + 1442695040888963407L;
		}
	}

	static void hold(long ms) throws InterruptedException {
		synchronized (lock) {
			Thread.sleep(ms);
		}
	}

	public static void main(String[] args) throws Exception {
		double secs = args.length > 0 ? Double.parseDouble(args[0]) : 2;
		long x = 1;

		for (int i = 0; i < 300000; i++)	// compiled before any contention
			x = contend(x);
		Thread holder = new Thread(() -> {
			try {
				while (!stop) {
					hold(30);
					Thread.sleep(5);
				}
			} catch (InterruptedException e) {
			}
		}, "holder");
		Thread waiter = new Thread(() -> {
			long y = 1;

			while (!stop)
				y = contend(y);
			sink = y;
		}, "waiter");
		holder.start();
		Thread.sleep(10);
		waiter.start();
		System.out.println("monitor ready");
		System.out.flush();
		Thread.sleep((long)(secs * 1000));
		stop = true;
		holder.join();
		waiter.join();
		sink += x;
		System.out.println("monitor done");
	}
}
