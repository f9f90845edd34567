// hot.js's split (hotA three units of work for every one of hotB's) for jitrace's jitdump test:
// node --perf-prof [--interpreted-frames-native-stack] hot_jitdump.js [MS] in the directory
// where V8 writes jit-PID.dump.
// V8 writes its jitdump through a stdio buffer (4 KiB): a code record reaches the file only
// when later records fill the buffer, or at exit, and a profiler that reads the file live
// cannot name code before its record is there. So this first runs the work for WARM_MS, until
// V8 has its final code for hotA and hotB, then makes new functions until the file has grown
// by 8 KiB (every record of that code is then in it), then runs and reports as hot.js does:
// "pid N", every call's span ("iv F BEGIN END", CLOCK_MONOTONIC ns), "units F=N", "done".
// "flush N B" tells how many new functions that took and how many bytes the file grew by
// ("flush none": no jitdump in the current directory).
'use strict';
const fs = require('fs');
const v8 = require('v8');

// keep the hot functions out of their caller, so each has code (and records) of its own
v8.setFlagsFromString('--max-inlined-bytecode-size=0');

const UNIT = 500000;	// iterations in a unit of work: about 0.7 ms once optimised
const WARM_MS = 1500;
const FLUSH_BYTES = 8192;
const now = process.hrtime.bigint;

function hotA(units) {
	let x = 1;
	for (let i = 0; i < units * UNIT; i++)
		x = (Math.imul(x, 1103515245) + 12345 + i) | 0;
	return x;
}

function hotB(units) {
	let x = 1;
	for (let i = 0; i < units * UNIT; i++)
		x = (Math.imul(x, 1103515245) + 12345 + i) | 0;
	return x;
}

// Call each [fn, units] in turn for ms milliseconds; with iv, each call's span into it.
function run(work, ms, iv, units) {
	const end = now() + BigInt(ms) * 1000000n;
	let sink = 0;

	while (now() < end) {
		for (let k = 0; k < work.length; k++) {
			const t = now();

			sink ^= work[k][0](work[k][1]);
			if (iv) {
				iv.push(`iv ${work[k][0].name} ${t} ${now()}`);
				units[k] += work[k][1];
			}
		}
	}
	return sink;
}

function dumpSize(path) {
	try {
		return fs.statSync(path).size;
	} catch (e) {
		return -1;
	}
}

// New functions, each called a few times, until the jitdump grew by FLUSH_BYTES (V8's own
// code may do it first): each gets code of its own (an interpreter entry with
// --interpreted-frames-native-stack, baseline code after a few calls), and with it a record.
function flush() {
	const path = `jit-${process.pid}.dump`, start = dumpSize(path);
	let n = 0;

	if (start < 0)
		return 'none';
	while (dumpSize(path) < start + FLUSH_BYTES && n < 20000) {
		const f = new Function('x', `let y = x; for (let i = 0; i < 3; i++) y += ${n} * i;` +
				       ' return y;');

		for (let i = 0; i < 10; i++)
			f(i);
		n++;
	}
	return `${n} ${dumpSize(path) - start}`;
}

const work = [[hotA, 3], [hotB, 1]];
const ms = Number(process.argv[2] || 4000);
let sink = run(work, WARM_MS, null, null);
const flushed = flush();
const iv = [], units = work.map(() => 0);

process.stdout.write(`pid ${process.pid}\nflush ${flushed}\n`);
sink ^= run(work, ms, iv, units);
process.stdout.write(iv.join('\n') + '\n' +
	work.map((w, k) => `units ${w[0].name}=${units[k]}\n`).join('') +
	`sink ${sink}\ndone\n`);
