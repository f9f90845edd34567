#!/usr/bin/env bash
# Run test programs (cmocka) from the repository root; sum their results in one closing line.
# Usage: run-tests.sh unit|integration|all TEST...
set -uo pipefail
cd "$(dirname "$0")/.."
mode=$1
shift

passed=0 failed=0 skipped=0 broken=()
for t in "$@"; do
	name=$(basename "$t")
	case "$name" in
	itest_*)
		if [ "$(id -u)" -ne 0 ]; then
			echo "$name: integration tests load BPF programs: run them as root (sudo make test)"
			broken+=("$name")
			continue
		fi ;;
	esac
	case "$t" in */san/*) echo "=== $name (ASan+UBSan)" ;; *) echo "=== $name" ;; esac
	out=$(mktemp)
	"$t" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
	s=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$out" | tail -1)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	skipped=$((skipped + ${s:-0}))
	if [ "$rc" -ne 0 ] && [ -z "$f" ]; then
		broken+=("$t (exit $rc)")
	fi
	rm -f "$out"
done

echo
[ ${#broken[@]} -gt 0 ] && echo "did not complete: ${broken[*]}"
echo "$mode: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ ${#broken[@]} -eq 0 ]
