#!/usr/bin/env bash
# Run every reader of jitrace over logs with a set of options, keeping each command's
# output files, stdout, stderr and exit code, so that two builds can be compared byte for
# byte (a refactoring that must change no behaviour): replay.sh OUT JITRACE LOG... then
# diff -r OUT_A OUT_B. Paths are the same in both runs: logs are copied into OUT/in.
set -uo pipefail
[ $# -ge 3 ] || { echo "usage: replay.sh OUT JITRACE LOG..." >&2; exit 2; }
out=$1 bin=$(realpath "$2")
shift 2
rm -rf "$out"
mkdir -p "$out/in" "$out/run"
logs=()
for l in "$@"; do
	cp "$l" "$out/in/"
	logs+=("in/$(basename "$l")")
done
cd "$out"
n=0
run() {	# NAME ARGS...: stdout, stderr and status into run/NAME.*
	local name=$1
	shift
	"$bin" "$@" > "run/$name.out" 2> "run/$name.err"
	echo $? > "run/$name.rc"
	n=$((n + 1))
}
for l in "${logs[@]}"; do
	b=$(basename "$l" .jtl)
	run "$b.dump" dump "$l"
	run "$b.dump-salvage" dump --salvage "$l"
	run "$b.report" report "$l"
	run "$b.report-json" report --json "$l"
	run "$b.report-n3-threads" report -n 3 --threads "$l"
	run "$b.report-comm" report --comm toyjit "$l"
	run "$b.report-window" report --from 0.2 --to 0.9 "$l"
	run "$b.folded" flamegraph --folded "$l"
	run "$b.folded-offcpu" flamegraph --folded --off-cpu "$l"
	run "$b.svg" flamegraph -o "run/$b.svg" "$l"
	run "$b.svg-offcpu" flamegraph --off-cpu -o "run/$b.offcpu.svg" "$l"
	for f in pprof speedscope chrome; do
		run "$b.export-$f" export --format $f -o "run/$b.$f" "$l"
	done
	run "$b.missing-force" export --format chrome -f -o "run/$b.chrome" "in/missing.jtl"
done
if [ ${#logs[@]} -ge 2 ]; then
	run "diff.report" report --diff "${logs[0]}" "${logs[1]}"
	run "diff.report-json" report --diff --json -s total "${logs[0]}" "${logs[1]}"
	run "diff.svg" flamegraph --diff -o "run/diff.svg" "${logs[0]}" "${logs[1]}"
	run "set.report" report "${logs[@]}"
fi
echo "replay: $n commands over ${#logs[@]} logs into $out/run"
