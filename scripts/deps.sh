#!/usr/bin/env bash
# Install the Debian packages a make target needs (idempotent). Usage: deps.sh build|test|demo|bench
set -euo pipefail

build=(make gcc clang llvm pkg-config libbpf-dev bpftool libelf-dev zlib1g-dev)
case "${1:-build}" in
build | demo) want=("${build[@]}") ;;
test) want=("${build[@]}" libcmocka-dev valgrind) ;;
bench) want=("${build[@]}" linux-perf) ;;
*) echo "deps.sh: unknown set '$1' (build, test, demo, bench)" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "jitrace: missing Debian packages: ${missing[*]}" >&2
	echo "jitrace: run 'sudo make $1', or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "jitrace: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
