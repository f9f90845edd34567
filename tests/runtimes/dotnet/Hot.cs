// Workloads with known answers for jitrace's .NET tests: a 3:1 CPU split between two methods,
// a method that tiers up while it runs, exact call counts (some calls throwing through two
// frames), code freed at run time, and a per-call benchmark.
// Build: dotnet build -c Release Hot.csproj.
// Run: Hot split MS | tier MS | calls N | unload N | compile MS | bench N | batches N
using System;
using System.Diagnostics;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace JitraceTest
{
	static class Hot
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

		static void Split(int ms)
		{
			const int unit = 20000;	// many alternations per scheduler tick: no aliasing

			var clock = Stopwatch.StartNew();
			Console.WriteLine("split ratio 0.75");
			while (clock.ElapsedMilliseconds < ms) {
				sink += Big(3 * unit);
				sink += Small(unit);
			}
		}

		// Long calls, so that tiering's 30 calls take a while at tier 0: QuickJitted code
		// first, then (call counting, a background compile) OptimizedTier1 at new addresses.
		[MethodImpl(MethodImplOptions.NoInlining)]
		static long Tiered(int n)
		{
			long x = sink;
			for (int i = 0; i < n; i++)
				x = x * 6364136223846793005L + 1442695040888963407L;
			return x;
		}

		static void Tier(int ms)
		{
			var clock = Stopwatch.StartNew();
			int calls = 0;

			while (clock.ElapsedMilliseconds < ms) {
				sink += Tiered(3000000);
				calls++;
			}
			Console.WriteLine("tiered calls {0}", calls);
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
			Console.WriteLine("calls JitraceTest.Hot.Work(int)={0}", n);
			Console.WriteLine("calls JitraceTest.Hot.Leaf(int)={0}", n);
		}

		// A method made at run time, called once, made count times: Dyn<k>(n) spins n
		// times, so that samples find it. The runtime frees each one's code when the GC
		// collects it.
		[MethodImpl(MethodImplOptions.NoInlining)]
		static void Dynamic(int count)
		{
			Dynamic(0, count);
		}

		static void Dynamic(int from, int count)
		{
			for (int k = from; k < from + count; k++) {
				var dm = new DynamicMethod("Dyn" + k, typeof(int), new[] { typeof(int) },
							   typeof(Hot).Module);
				var il = dm.GetILGenerator();
				var x = il.DeclareLocal(typeof(int));
				var i = il.DeclareLocal(typeof(int));
				var loop = il.DefineLabel();
				var check = il.DefineLabel();

				// int x = 0; for (int i = 0; i < n; i++) x = x * 31 + i; return x + k;
				il.Emit(OpCodes.Ldc_I4_0);
				il.Emit(OpCodes.Stloc, x);
				il.Emit(OpCodes.Ldc_I4_0);
				il.Emit(OpCodes.Stloc, i);
				il.Emit(OpCodes.Br, check);
				il.MarkLabel(loop);
				il.Emit(OpCodes.Ldloc, x);
				il.Emit(OpCodes.Ldc_I4, 31);
				il.Emit(OpCodes.Mul);
				il.Emit(OpCodes.Ldloc, i);
				il.Emit(OpCodes.Add);
				il.Emit(OpCodes.Stloc, x);
				il.Emit(OpCodes.Ldloc, i);
				il.Emit(OpCodes.Ldc_I4_1);
				il.Emit(OpCodes.Add);
				il.Emit(OpCodes.Stloc, i);
				il.MarkLabel(check);
				il.Emit(OpCodes.Ldloc, i);
				il.Emit(OpCodes.Ldarg_0);
				il.Emit(OpCodes.Blt, loop);
				il.Emit(OpCodes.Ldloc, x);
				il.Emit(OpCodes.Ldc_I4, k);
				il.Emit(OpCodes.Add);
				il.Emit(OpCodes.Ret);
				sink += ((Func<int, int>)dm.CreateDelegate(typeof(Func<int, int>)))(20000000);
			}
		}

		// New code all the time: a method made at run time every turn, between turns of the
		// split, so that a perf map left on keeps growing.
		static void Compile(int ms)
		{
			var clock = Stopwatch.StartNew();
			int k = 0;

			Console.WriteLine("compiling");
			while (clock.ElapsedMilliseconds < ms) {
				Dynamic(k++, 1);
				for (int i = 0; i < 20; i++) {
					sink += Big(60000);
					sink += Small(20000);
				}
			}
			Console.WriteLine("compiled {0}", k);
		}

		static void Unload(int count)
		{
			Dynamic(count);
			for (int i = 0; i < 3; i++) {
				GC.Collect();
				GC.WaitForPendingFinalizers();
			}
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

			for (int i = 0; i < 1000000; i++)	// at its final tier before the clock starts
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
			int warm = (200000 + BatchCalls - 1) / BatchCalls;
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
				Console.Error.WriteLine("usage: Hot split MS | tier MS | calls N | unload N | compile MS | bench N | batches N");
				return 2;
			}
			Console.WriteLine("pid {0}", Environment.ProcessId);
			int n = int.Parse(args[1]);
			switch (args[0]) {
			case "split": Split(n); break;
			case "tier": Tier(n); break;
			case "calls": Calls(n); break;
			case "unload": Unload(n); break;
			case "compile": Compile(n); break;
			case "bench": Bench(n); break;
			case "batches": Batches(n); break;
			default:
				Console.Error.WriteLine("unknown mode " + args[0]);
				return 2;
			}
			Console.WriteLine("done");
			return 0;
		}
	}
}
