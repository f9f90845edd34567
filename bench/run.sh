#!/usr/bin/env bash
# make bench: run every benchmark, one after another, and write bench/RESULTS.md.
# Each benchmark prints its Markdown section on stdout (progress on stderr); a line that
# begins "MISSED: " is lifted into the list of missed targets at the top.
set -uo pipefail
out=${1:-build}
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: the benchmarks load BPF programs: run them as root (sudo make bench)" >&2
	exit 1
fi
results=bench/RESULTS.md
tmp=$(mktemp -d /tmp/jt_bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# name, then the command: one line each, in the order they run and are printed.
benches=(
	"sampling|$out/bench/bench_sampling $out/jitrace $out/libjitrace-jvmti.so"
	"calls|$out/bench/bench_calls $out/libjitrace-agent.so"
	"mono|$out/bench/bench_mono $out/jitrace $out/libmono-profiler-jitrace.so tests/runtimes/mono/Hot.cs"
	"dotnet|$out/bench/bench_dotnet $out/libjitrace-agent.so $out/libjitrace-coreclr.so $out/libmono-profiler-jitrace.so tests/runtimes/dotnet tests/runtimes/mono/Hot.cs"
	"collector|$out/bench/bench_collector"
	"offline|$out/bench/bench_offline $out/toyjit"
	"scale|$out/bench/bench_scale $out/jitrace $out/toyjit"
	"jitdump|$out/bench/bench_jitdump $out/jitrace"
	"flight|$out/bench/bench_flight $out/jitrace $out/toyjit"
	"names|$out/bench/bench_names $out/jitrace $out/libjitrace-jvmti.so"
	"offcpu|$out/bench/bench_offcpu $out/jitrace"
	"maps|$out/bench/bench_maps $out/jitrace $out/toyjit"
	"syscalls|$out/bench/bench_syscalls $out/jitrace"
	"attach|$out/bench/bench_attach $out/jitrace"
	"stacks|$out/bench/bench_stacks $out/jitrace $out/tests/nofp"
	"cfi|$out/bench/bench_cfi /usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so /usr/bin/mono-sgen /usr/bin/python3 /lib/x86_64-linux-gnu/libc.so.6 $out/tests/nofp-dbgframe"
)

start=$(date +%s)
for b in "${benches[@]}"; do
	name=${b%%|*}
	cmd=${b#*|}
	echo "bench: $cmd" >&2
	t0=$(date +%s)
	$cmd > "$tmp/$name.md"
	rc=$?
	t1=$(date +%s)
	echo "bench: $name took $((t1 - t0)) s" >&2
	if [ $rc -ne 0 ]; then
		echo "MISSED: \`$cmd\` failed with status $rc; its figures are absent." >> "$tmp/$name.md"
	fi
	echo "$((t1 - t0))" > "$tmp/$name.secs"
done
total=$(( $(date +%s) - start ))

version() { "$@" 2>&1 | head -n 1; }
{
	echo "# jitrace benchmarks"
	echo
	echo "Written by \`make bench\` (bench/run.sh) on $(date -u '+%Y-%m-%d %H:%M UTC'), in $((total / 60)) min $((total % 60)) s."
	echo "Every figure is the median of interleaved rounds, with the minimum and maximum beside it."
	echo "The machine is shared and has two cores: the spread is part of the result."
	echo
	echo "## Missed targets"
	echo
	# not `cat | grep -q`: grep's early exit fails the pipeline under pipefail
	if grep -qh '^MISSED: ' "$tmp"/*.md; then
		grep -h '^MISSED: ' "$tmp"/*.md | sed 's/^MISSED: /- /'
	else
		echo "None."
	fi
	echo
	echo "## Machine"
	echo
	echo "- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs online"
	echo "- Memory: $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "- Kernel: $(uname -srm)"
	echo "- System: $(. /etc/os-release && echo "$PRETTY_NAME")"
	echo "- Compiler: $(version "${CC:-cc}" --version)"
	echo "- perf: $(version perf --version)"
	for rt in java node mono; do
		if command -v $rt > /dev/null; then
			case $rt in
			java) v=$(version java -version) ;;
			mono) v=$(version mono --version) ;;
			*) v=$(version $rt --version) ;;
			esac
			echo "- $rt: $v"
		fi
	done
	echo "- perf_event_max_sample_rate: $(cat /proc/sys/kernel/perf_event_max_sample_rate)"
	echo
	echo "## Commands"
	echo
	for b in "${benches[@]}"; do
		name=${b%%|*}
		echo "- \`${b#*|}\` ($(cat "$tmp/$name.secs") s)"
	done
	echo
	for b in "${benches[@]}"; do
		grep -v '^MISSED: ' "$tmp/${b%%|*}.md"
		echo
	done
} | cat -s > "$results"
echo "bench: wrote $results ($((total / 60)) min $((total % 60)) s)" >&2
