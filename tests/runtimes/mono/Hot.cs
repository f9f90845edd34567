// Workloads with known answers for jitrace's Mono tests: a 3:1 CPU split between two methods,
// exact call counts (some calls throwing), code freed at run time, and a per-call benchmark.
// Build: mcs -out:Hot.exe Hot.cs. Run: mono Hot.exe split MS | calls N | unload N | bench N | batches N
using System;
using System.Diagnostics;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

class Hot
{
	static long sink;

	// The same loop in both: Big gets three times the iterations of Small.
	[MethodImpl(MethodImplOptions.NoInlining)]
	static long Big(int n)
	{
		long x = sink;
		for (int i = 0; i < n; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	static long Small(int n)
	{
		long x = sink;
		for (int i = 0; i < n; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	// A method made at run time, called once; made count times, then freed by the GC.
	static void Dynamic(string prefix, int count)
	{
		for (int k = 0; k < count; k++) {
			var dm = new DynamicMethod(prefix + k, typeof(int), new[] { typeof(int) },
						   typeof(Hot).Module);
			var il = dm.GetILGenerator();

			il.Emit(OpCodes.Ldarg_0);
			il.Emit(OpCodes.Ldc_I4, k);
			il.Emit(OpCodes.Add);
			il.Emit(OpCodes.Ret);
			sink += ((Func<int, int>)dm.CreateDelegate(typeof(Func<int, int>)))(k);
		}
	}

	static void Split(int ms)
	{
		const int unit = 20000;	// many alternations per scheduler tick: no aliasing

		// `mono --jitmap` writes its perf map through a 4 KiB stdio buffer: lines reach the
		// file only as it fills, and at exit. Compile Big and Small, then enough other
		// methods that their lines are written before the loop, as in a long-running program.
		Big(1);
		Small(1);
		Dynamic("Pad", 128);
		var clock = Stopwatch.StartNew();
		Console.WriteLine("split ratio 0.75");
		while (clock.ElapsedMilliseconds < ms) {
			sink += Big(3 * unit);
			sink += Small(unit);
		}
	}

	// Leaf throws on every tenth call; the exception unwinds through Leaf and Work and is
	// caught in Calls, so both must still be left exactly once a call.
	[MethodImpl(MethodImplOptions.NoInlining)]
	static int Leaf(int i)
	{
		if (i % 10 == 0)
			throw new InvalidOperationException("call " + i);
		return i + 1;
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	static int Work(int i)
	{
		return Leaf(i) * 2;
	}

	static void Calls(int n)
	{
		int thrown = 0;

		for (int i = 0; i < n; i++) {
			try {
				sink += Work(i);
			} catch (InvalidOperationException) {
				thrown++;
			}
		}
		Console.WriteLine("thrown {0}", thrown);
		Console.WriteLine("calls Hot:Work (int)={0}", n);
		Console.WriteLine("calls Hot:Leaf (int)={0}", n);
	}

	// Dynamic methods are the code Mono frees (and tells profilers so) while running.
	static void Unload(int count)
	{
		Dynamic("Dyn", count);
		GC.Collect();
		GC.WaitForPendingFinalizers();
		GC.Collect();
		GC.WaitForPendingFinalizers();
		Console.WriteLine("dynamic {0}", count);
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	static int Empty(int i)
	{
		return i;
	}

	// Time per call of an empty method, for the cost of call tracing.
	static void Bench(int n)
	{
		long acc = 0;

		for (int i = 0; i < 100000; i++)	// compiled and warm before the clock starts
			acc += Empty(i);
		var clock = Stopwatch.StartNew();
		for (int i = 0; i < n; i++)
			acc += Empty(i);
		clock.Stop();
		sink += acc;
		Console.WriteLine("bench calls={0} ns_per_call={1:F2}", n,
				  clock.Elapsed.TotalMilliseconds * 1e6 / n);
	}

	// Batches: 8,000 calls (16,000 enter and leave records, a quarter of the agent's per-thread
	// ring of 65,536), 25 ms apart, so that calls logged one by one all reach the log.
	const int BatchCalls = 8000;
	const int BatchPauseMs = 25;

	[StructLayout(LayoutKind.Sequential)]
	struct Timespec
	{
		public long sec;
		public long nsec;
	}

	[DllImport("libc.so.6", EntryPoint = "clock_gettime")]
	static extern int ClockGettime(int clock, out Timespec ts);

	// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID): not the time it waited for a CPU.
	static long CpuNs()
	{
		Timespec ts;

		ClockGettime(3, out ts);
		return ts.sec * 1000000000L + ts.nsec;
	}

	// Time per call as Bench, in batches with pauses between them (warm-up too), only the
	// batches timed: by the thread's CPU time, and by Stopwatch beside it.
	static void Batches(int n)
	{
		int warm = (100000 + BatchCalls - 1) / BatchCalls;
		int timed = (n + BatchCalls - 1) / BatchCalls;
		var wall = new Stopwatch();
		long acc = 0, cpu = 0, calls = (long)timed * BatchCalls;

		for (int b = 0; b < warm; b++) {
			for (int i = 0; i < BatchCalls; i++)
				acc += Empty(i);
			Thread.Sleep(BatchPauseMs);
		}
		for (int b = 0; b < timed; b++) {
			long c0 = CpuNs();

			wall.Start();
			for (int i = 0; i < BatchCalls; i++)
				acc += Empty(i);
			wall.Stop();
			cpu += CpuNs() - c0;
			Thread.Sleep(BatchPauseMs);
		}
		sink += acc;
		Console.WriteLine("bench calls={0} warm={1} ns_per_call={2:F2} wall_ns_per_call={3:F2}",
				  calls, (long)warm * BatchCalls, (double)cpu / calls,
				  wall.Elapsed.TotalMilliseconds * 1e6 / calls);
	}

	static int Main(string[] args)
	{
		if (args.Length != 2) {
			Console.Error.WriteLine("usage: Hot.exe split MS | calls N | unload N | bench N | batches N");
			return 2;
		}
		Console.WriteLine("pid {0}", Process.GetCurrentProcess().Id);
		int n = int.Parse(args[1]);
		switch (args[0]) {
		case "split": Split(n); break;
		case "calls": Calls(n); break;
		case "bench": Bench(n); break;
		case "batches": Batches(n); break;
		case "unload": Unload(n); break;
		default:
			Console.Error.WriteLine("unknown mode " + args[0]);
			return 2;
		}
		Console.WriteLine("done");
		return 0;
	}
}
