// A known CPU split between two functions, for jitrace's Node tests: hotA does three units of
// work for every one of hotB's, the same work per unit.
// Usage: node --perf-basic-prof [--interpreted-frames-native-stack] hot.js [MS]
// Prints "pid N" at once, then, when done, each function's units of work ("units F=N") and
// every call's span ("iv F BEGIN END", CLOCK_MONOTONIC ns from process.hrtime, the clock of
// jitrace's samples), then "done". hot2.js drives other functions with drive().
'use strict';
const v8 = require('v8');

// keep the hot functions out of their caller, so each has code (and map lines) of its own
v8.setFlagsFromString('--max-inlined-bytecode-size=0');

const UNIT = 500000;	// iterations in a unit of work: about 0.7 ms once optimised

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

// Call each [fn, units] in turn for ms milliseconds, then print what was done.
function drive(work, ms) {
	const now = process.hrtime.bigint;
	const iv = [], units = work.map(() => 0);
	const end = now() + BigInt(ms) * 1000000n;
	let sink = 0;

	process.stdout.write(`pid ${process.pid}\n`);
	while (now() < end) {
		for (let k = 0; k < work.length; k++) {
			const t = now();

			sink ^= work[k][0](work[k][1]);
			iv.push(`iv ${work[k][0].name} ${t} ${now()}`);
			units[k] += work[k][1];
		}
	}
	process.stdout.write(iv.join('\n') + '\n' +
		work.map((w, k) => `units ${w[0].name}=${units[k]}\n`).join('') +
		`sink ${sink}\ndone\n`);
}

module.exports = { drive, UNIT };

if (require.main === module)
	drive([[hotA, 3], [hotB, 1]], Number(process.argv[2] || 4000));
