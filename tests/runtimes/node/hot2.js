// Like hot.js, with other names and a 1:2 split: coolC does one unit for every two of coolD's.
// Usage: node --perf-basic-prof hot2.js [MS]
'use strict';
const { drive, UNIT } = require('./hot.js');

function coolC(units) {
	let x = 7;
	for (let i = 0; i < units * UNIT; i++)
		x = (Math.imul(x, 69069) + 1 + i) | 0;
	return x;
}

function coolD(units) {
	let x = 7;
	for (let i = 0; i < units * UNIT; i++)
		x = (Math.imul(x, 69069) + 1 + i) | 0;
	return x;
}

drive([[coolC, 1], [coolD, 2]], Number(process.argv[2] || 4000));
