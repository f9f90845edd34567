#!/usr/bin/env bash
# make demo: record the bundled workload (the toy JIT) system-wide and show what it found.
set -euo pipefail
out=${1:-build}
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: jitrace loads BPF programs: run it as root (sudo make demo)" >&2
	exit 1
fi
log=$out/demo.jtl
mkdir -p "$out/demo"
echo "== recording 3 s, whole host, 999 Hz, with calls, while three toy JIT processes run"
"$out/jitrace" record -a --calls -F 999 -d 3 -f -o "$log" &
rec=$!
sleep 1
"$out/toyjit" split --ms 1500 >/dev/null &
"$out/toyjit" split --ms 1500 --ratio 1:1 >/dev/null &
"$out/toyjit" calls >/dev/null
wait
echo
echo "== flame graph"
"$out/jitrace" flamegraph -f -o "$out/demo/flame.svg" "$log"
echo
echo "== report of the toy JIT processes (top 8 rows; 'jitrace report $log' shows the whole host)"
"$out/jitrace" report --comm toyjit --top 8 --procs 3 "$log"
echo
echo "Open $out/demo/flame.svg in a browser (click to zoom, Ctrl-F to search)."
echo "The log is $log; 'jitrace dump $log | less' shows every record."
