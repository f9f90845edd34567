#!/usr/bin/env bash
# Install the Debian packages a make target needs (idempotent).
# Usage: deps.sh build|test|demo|bench|fuzz|kernels
# Packages in "required" must install or this fails. Packages in "optional" are the real
# runtimes and viewers the tests drive: one that cannot be installed is named, and the
# tests that need it say they skip and why.
set -euo pipefail

build=(make gcc clang llvm pkg-config libbpf-dev bpftool libelf-dev zlib1g-dev libcurl4-openssl-dev)
runtimes=(openjdk-17-jdk-headless mono-runtime mono-devel nodejs erlang-base)
viewers=(protobuf-compiler chromium tmux golang-go)
optional=()
case "${1:-build}" in
build) required=("${build[@]}") ;;
fuzz) required=("${build[@]}" libclang-rt-14-dev) ;;	# libFuzzer and the sanitizers' runtime
demo) required=("${build[@]}") ;;
test) required=("${build[@]}" libcmocka-dev valgrind util-linux bsdutils libc6-dbg python3
		libclang-rt-14-dev)	# the fuzz targets are built too: they must keep linking
	# docker.io: itest_containers starts its own dockerd (a private socket and data root)
	optional=("${runtimes[@]}" "${viewers[@]}" docker.io) ;;
# QEMU boots the kernels, busybox and the modules 9p needs (found by kmod's modprobe,
# unpacked by xz) make their initramfs (cpio); Node is the real runtime tested there.
kernels) required=("${build[@]}" libcmocka-dev qemu-system-x86 busybox-static kmod xz-utils cpio)
	optional=(nodejs) ;;
bench) required=("${build[@]}" linux-perf)
	# bpfcc-tools: bcc's offcputime, beside which bench_offcpu puts jitrace --off-cpu
	optional=(openjdk-17-jdk-headless mono-runtime mono-devel nodejs bpfcc-tools) ;;
*) echo "deps.sh: unknown set '$1' (build, test, demo, bench, fuzz, kernels)" >&2; exit 2 ;;
esac

installed() {
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"
}

# nodejs may come from another repository under the same name; a working node is enough.
present() {
	case "$1" in
	nodejs) command -v node >/dev/null 2>&1 && return 0 ;;
	esac
	installed "$1"
}

missing=() optmissing=()
for p in "${required[@]}"; do present "$p" || missing+=("$p"); done
for p in "${optional[@]}"; do present "$p" || optmissing+=("$p"); done
[ ${#missing[@]} -eq 0 ] && [ ${#optmissing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	[ ${#missing[@]} -eq 0 ] && {
		echo "jitrace: not installed (their tests will skip): ${optmissing[*]}" >&2
		exit 0
	}
	echo "jitrace: missing Debian packages: ${missing[*]}" >&2
	echo "jitrace: run 'sudo make $1', or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
if [ ${#missing[@]} -gt 0 ]; then
	echo "jitrace: installing ${missing[*]}" >&2
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# One at a time, so that one package that cannot be installed does not stop the rest.
for p in "${optmissing[@]}"; do
	echo "jitrace: installing $p" >&2
	if ! apt-get install -y -qq --no-install-recommends "$p" >/tmp/jitrace-apt.$$ 2>&1; then
		echo "jitrace: could not install $p (its tests will skip): $(tail -n 1 /tmp/jitrace-apt.$$)" >&2
	fi
done
rm -f /tmp/jitrace-apt.$$
