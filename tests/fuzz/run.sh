#!/usr/bin/env bash
# Run libFuzzer targets one after another; print executions, exec/s, corpus and findings.
# Usage: run.sh FUZZ_DIR RUNS SECONDS TARGET...
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=$1 runs=$2 secs=$3
shift 3

found=0
for t in "$@"; do
	name=${t#fuzz_}
	corpus=$dir/corpus/$name
	art=$dir/artifacts/$name/
	mkdir -p "$corpus" "$art"
	log=$dir/$t.log
	echo "=== $t: up to $runs runs or $secs s (log: $log)"
	# new inputs go to the first corpus directory; the seeds in tests/fuzz stay as they are
	"$dir/$t" -runs="$runs" -max_total_time="$secs" -print_final_stats=1 -close_fd_mask=2 \
		-artifact_prefix="$art" "$corpus" "tests/fuzz/corpus/$name" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	units=$(ls "$corpus" | wc -l)
	crashes=$(ls "$art" | wc -l)
	echo "$t: ${execs:-?} executions, ${speed:-?} exec/s, corpus $units inputs" \
		"(+ $(ls "tests/fuzz/corpus/$name" | wc -l) seeds), findings $crashes, exit $rc"
	if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
		found=1
		grep -E "ERROR: |SUMMARY: |runtime error" "$log" | head -5
		ls "$art"
	fi
done
exit $found
