// Code freed and compiled again at the same addresses, for jitrace's Node tests: one new
// function after another (each made from source, with a name of its own, run hot until V8
// optimises it, then dropped and collected), so V8 reuses the code space of the dead ones.
// Usage: node --perf-basic-prof --expose-gc churn.js [MS]
// Prints "pid N", then every call's span ("iv NAME BEGIN END", CLOCK_MONOTONIC ns),
// "units NAME=N" for each function and "done".
'use strict';

const ms = Number(process.argv[2] || 3000);
const now = process.hrtime.bigint;
const end = now() + BigInt(ms) * 1000000n;
const iv = [], units = [];

process.stdout.write(`pid ${process.pid}\n`);
for (let k = 0; now() < end; k++) {
	const name = `churn${k}`;
	// a different constant in each: the same source would share its bytecode
	const fn = new Function('n', `return function ${name}(n) {
		let x = ${k};
		for (let i = 0; i < n; i++)
			x = (Math.imul(x, 1103515245) + ${k + 12345} + i) | 0;
		return x;
	};`)();
	let calls = 0;

	for (const stop = now() + 20000000n; now() < stop; calls++) {
		const t = now();

		fn(200000);
		iv.push(`iv ${name} ${t} ${now()}`);
	}
	units.push(`units ${name}=${calls}`);
	if (k % 8 === 7)
		gc();
}
process.stdout.write(iv.join('\n') + '\n' + units.join('\n') + '\ndone\n');
