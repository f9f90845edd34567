// SPDX-License-Identifier: GPL-2.0
/*
 * CPU-bound workload for bench_sampling and bench_stacks: the same mix as Work.java (hashing,
 * sorting small arrays, integer arithmetic) under a chain of nested frames, for V8's JIT tiers.
 *
 * Usage: node work.js WARMUP_MS WINDOW_MS
 * Works for WARMUP_MS, prints "ready", then for every line read on stdin works for
 * WINDOW_MS and prints "count N" (units of work done in the window); exits at EOF.
 *
 * Usage: node work.js --for SECONDS
 * Works for SECONDS, then prints "pid P", "rounds N" and "cpu_s S": the units done after a second's
 * warm-up (V8's tiers compiling) and the main thread's CPU time over them, as Deep.java and
 * bench_stacks' other workloads do (throughput on a shared machine, the samples' interrupts
 * charged to it).
 */
'use strict';

const DEPTH = 24;		/* frames between the driver and the work */
const data = new Uint8Array(256);
const arr = new Int32Array(48);
let seed = 0x9e3779b9 | 0;
let sink = 0;

function next() {
	seed ^= seed << 13;
	seed ^= seed >>> 17;
	seed ^= seed << 5;
	return seed;
}

/* FNV-1a (32-bit) over the buffer, then a murmur3-style finish. */
function hash(b, salt) {
	let h = (0x811c9dc5 ^ salt) | 0;

	for (let i = 0; i < b.length; i++) {
		h ^= b[i];
		h = Math.imul(h, 0x01000193);
	}
	h ^= h >>> 16;
	h = Math.imul(h, 0x85ebca6b);
	h ^= h >>> 13;
	return h;
}

function fill(a) {
	for (let i = 0; i < a.length; i++)
		a[i] = next();
}

function isort(a) {
	for (let i = 1; i < a.length; i++) {
		const v = a[i];
		let j = i - 1;

		while (j >= 0 && a[j] > v) {
			a[j + 1] = a[j];
			j--;
		}
		a[j + 1] = v;
	}
}

function gcdsum(n) {
	let s = 0;

	for (let i = 1; i <= n; i++) {
		let a = (i * 7919 + 13) | 0, b = (n + i * 31) | 0;

		while (b !== 0) {
			const t = a % b;

			a = b;
			b = t;
		}
		s = (s + a) | 0;
	}
	return s;
}

function unit(k) {
	data[k & 255] = k;
	const h = hash(data, k);

	fill(arr);
	isort(arr);
	return (h + arr[k % arr.length] + gcdsum(64 + (k & 31))) | 0;
}

function nest(d, k) {
	if (d === 0)
		return unit(k);
	return (nest(d - 1, k) + d) | 0;
}

/* Units done in ms milliseconds; the clock is read once a unit (tens of µs each). */
function run(ms) {
	const end = process.hrtime.bigint() + BigInt(ms) * 1000000n;
	let n = 0;

	while (process.hrtime.bigint() < end) {
		sink = (sink + nest(DEPTH, n)) | 0;
		n++;
	}
	return n;
}

/* The main thread's CPU time in seconds: its schedstat counts ns, where process.cpuUsage()
 * would add V8's compiler and GC threads. */
function thread_cpu_s() {
	const f = `/proc/self/task/${process.pid}/schedstat`;

	return Number(require('fs').readFileSync(f, 'utf8').split(' ')[0]) / 1e9;
}

function run_for(secs) {
	run(1000);
	const cpu0 = thread_cpu_s();
	const n = run(secs * 1000 - 1000);

	process.stdout.write(`pid ${process.pid}\nrounds ${n}\ncpu_s ${thread_cpu_s() - cpu0}\n`);
}

if (process.argv[2] === '--for') {
	run_for(Number(process.argv[3]));
	return;
}

const warmup = Number(process.argv[2]), window = Number(process.argv[3]);
let pending = '';

run(warmup);
process.stdout.write('ready\n');
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
	pending += chunk;
	let nl;

	while ((nl = pending.indexOf('\n')) >= 0) {
		pending = pending.slice(nl + 1);
		const n = run(window);

		process.stdout.write(`count ${n} ${sink & 0xff}\n`);
	}
});
