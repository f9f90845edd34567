#!/bin/sh
# PID 1 of a test kernel (after tests/kernels/init, which mounted /proc, /sys, /sys/fs/bpf
# and tmpfs on /tmp and /run): run the tests of tests/kernels/tests one by one, report them
# on the console and into OUT/results, and power off. Usage: guest.sh WORKTREE OUT
# OUT/tests is the list (a copy of tests/kernels/tests, or the one the host was given); a
# failing test's scratch files (/tmp/jitrace-itest.*) are kept in OUT/PROGRAM.TEST.files.
wt=$1 out=$2
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/tmp LANG=C.UTF-8

say() {
	echo "jt-kernels: $*" >/dev/console
}
# seconds since boot, to 0.1 s
now() {
	cut -d' ' -f1 /proc/uptime
}
off() {
	sync
	echo o >/proc/sysrq-trigger
	sleep 60
}

# timed workloads run longer here (tests/integration/lib.h): the host says how much longer
for arg in $(cat /proc/cmdline); do
	case "$arg" in jt.scale=*) export JT_TEST_SCALE=${arg#jt.scale=} ;; esac
done
cd "$wt" || { say "no worktree $wt"; off; }
boot=$(now)
say "kernel $(uname -r) up in $boot s; JT_TEST_SCALE=${JT_TEST_SCALE:-1};" \
	"tracefs mounted $(grep -c ' tracefs ' /proc/mounts), debugfs $(grep -c ' debugfs ' /proc/mounts)"
dmesg >"$out/dmesg.log"
: >"$out/results"

# One plain recording first: whether the BPF programs load at all, with libbpf's log (-v)
# kept for whoever reads why not.
build/jitrace record -v -F 99 -f -o /tmp/probe.jtl -- true >"$out/probe.log" 2>&1
say "probe: jitrace record exits $?: $(grep -v '^libbpf:' "$out/probe.log" | tail -n 1)"

passed=0 failed=0
while read -r prog test; do
	case "$prog" in '' | '#'*) continue ;; esac
	log="$out/$prog.$test.log"
	t0=$(now)
	JT_TEST_FILTER=$test timeout 900 "build/tests/$prog" >"$log" 2>&1
	rc=$?
	t1=$(now)
	if [ $rc -eq 0 ] && grep -q '^\[  PASSED  \] 1 test(s)' "$log"; then
		result=passed passed=$((passed + 1))
	elif grep -q '^\[  SKIPPED \] 1 test(s)' "$log"; then
		result=skipped
	elif grep -q '^\[==========\] 0 test(s) run' "$log"; then
		result="failed (no such test)" failed=$((failed + 1))
	else
		result="failed (exit $rc)" failed=$((failed + 1))
	fi
	case "$result" in
	failed*) mkdir -p "$out/$prog.$test.files" && cp -r /tmp/jitrace-itest.* "$out/$prog.$test.files/" ;;
	esac
	rm -rf /tmp/jitrace-itest.*
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	echo "$prog $test $result $secs" >>"$out/results"
	say "test $prog $test: $result in $secs s"
done <"$out/tests"

end=$(now)
echo "done $boot $end $passed $failed" >>"$out/results"
say "done: $passed passed, $failed failed; boot $boot s, tests $(awk -v a="$boot" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s"
off
