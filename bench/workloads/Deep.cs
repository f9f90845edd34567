// SPDX-License-Identifier: GPL-2.0
// CPU-bound workload for bench_stacks on Mono: BurnA() under Level3 < Level2 < Level1 < Main,
// none inlined, so that a whole stack of a sample in BurnA holds all four callers. Mono
// leaves the frame pointer out of all five (amd64 omit_fp) unless MONO_DEBUG=disable_omit_fp.
//
// Build: mcs -optimize+ -out:Deep.exe Deep.cs. Usage: mono --jitmap Deep.exe SECONDS
// Works for SECONDS, then prints "pid P" (bench_stacks removes its perf map), "rounds N" and
// "cpu_s S": the rounds of work done after a second's warm-up and the process's CPU time over
// them.
using System;
using System.Diagnostics;
using System.Globalization;
using System.Reflection.Emit;
using System.Runtime.CompilerServices;

class Deep
{
	public static long Sink;

	[MethodImpl(MethodImplOptions.NoInlining)]
	static long BurnA(long x)
	{
		for (int i = 0; i < 3000; i++)
			x = x * 6364136223846793005L + 1442695040888963407L;
		return x;
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	static long Level3(long x)
	{
		return BurnA(x) ^ 1;
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	static long Level2(long x)
	{
		return Level3(x) ^ 2;
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	static long Level1(long x)
	{
		return Level2(x) ^ 3;
	}

	// `mono --jitmap` writes its perf map through a 4 KiB stdio buffer: lines reach the file
	// only as it fills. Compile enough small methods that the work's lines are written before
	// it runs, as in a long-running program.
	static void Pad(int count)
	{
		for (int k = 0; k < count; k++) {
			var dm = new DynamicMethod("Pad" + k, typeof(int), new[] { typeof(int) },
						   typeof(Deep).Module);
			var il = dm.GetILGenerator();

			il.Emit(OpCodes.Ldarg_0);
			il.Emit(OpCodes.Ret);
			Sink += ((Func<int, int>)dm.CreateDelegate(typeof(Func<int, int>)))(k);
		}
	}

	static int Main(string[] args)
	{
		double secs = args.Length > 0 ? double.Parse(args[0], CultureInfo.InvariantCulture) : 4;
		var clock = Stopwatch.StartNew();
		var self = Process.GetCurrentProcess();
		TimeSpan cpu0 = TimeSpan.Zero;
		bool warm = false;
		long rounds = 0, x = Level1(1);

		// all the loop calls compiled first, then lines enough to flush theirs
		x ^= clock.ElapsedMilliseconds + (long)clock.Elapsed.TotalSeconds;
		self.Refresh();
		cpu0 = self.TotalProcessorTime;
		Pad(128);

		do {
			x = Level1(x);
			if (!warm && clock.ElapsedMilliseconds > 1000) {
				warm = true;
				self.Refresh();
				cpu0 = self.TotalProcessorTime;
			} else if (warm) {
				rounds++;
			}
		} while (clock.Elapsed.TotalSeconds < secs);
		Sink = x;
		self.Refresh();
		Console.WriteLine("pid {0}", self.Id);
		Console.WriteLine("rounds {0}", rounds);
		Console.WriteLine("cpu_s {0}", (self.TotalProcessorTime - cpu0).TotalSeconds
			.ToString(CultureInfo.InvariantCulture));
		return 0;
	}
}
