#!/usr/bin/env bash
# make bench: run every benchmark side by side and print the figures.
set -euo pipefail
out=${1:-build}
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: the benchmarks load BPF programs: run them as root (sudo make bench)" >&2
	exit 1
fi
echo "machine: $(nproc) CPUs, $(uname -r), $(date -u +%Y-%m-%d)"
"$out/bench/bench_calls" "$out/libjitrace-agent.so"
"$out/bench/bench_collector"
"$out/bench/bench_offline" "$out/toyjit"
