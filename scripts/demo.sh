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
echo "== recording 3 s, whole host, 999 Hz, with calls, while three toy JIT processes run"
"$out/jitrace" record -a --calls -F 999 -d 3 -f -o "$log" &
rec=$!
sleep 1
"$out/toyjit" split --ms 1500 >/dev/null &
"$out/toyjit" split --ms 1500 --ratio 1:1 >/dev/null &
"$out/toyjit" calls >/dev/null
wait
echo
echo "== hottest methods (leaf samples), from 'jitrace dump $log'"
"$out/jitrace" dump "$log" | awk '
	$2 == "method" { name[$3] = substr($0, index($0, "name=") + 5); pid[$3] = $4 }
	$2 == "sample" { split($6, f, /[=,]/); leaf = f[2]; sub(/\+.*/, "", leaf); n[leaf]++; total++ }
	END {
		for (k in n) {
			id = "id=" substr(k, 2)
			label = (substr(k, 1, 1) == "#" && (id in name)) ? name[id] " (" pid[id] ")" : k
			printf "%7d %5.1f%%  %s\n", n[k], 100 * n[k] / total, label
		}
	}' | sort -rn | head -12
echo
echo "== calls counted (enter records per method)"
"$out/jitrace" dump "$log" | awk '
	$2 == "method" { name[$3] = substr($0, index($0, "name=") + 5) }
	$2 == "enter" { n[$5]++ }
	END { for (k in n) printf "%7d  %s\n", n[k], name[k] }' | sort -rn | head -8
echo
echo "The log is $log; 'jitrace dump $log | less' shows every record."
