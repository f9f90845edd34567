#!/usr/bin/env bash
# Run the integration tests of tests/kernels/tests under Debian's stock kernels, each booted
# under QEMU (TCG) with this machine's root shared read-only over 9p and build/ writable.
# Usage: test-kernels.sh [PACKAGE...]
# A PACKAGE is a Debian kernel package or its metapackage (default: $KERNELS, else
# linux-image-amd64 and linux-image-6.12-amd64: bookworm's 6.1 and 6.12). Its .deb is
# fetched with `apt-get download` into build/kernels/ and never installed. Exits non-zero
# if any test fails, or does not run, on any kernel. KERNEL_TESTS=FILE runs the tests FILE
# lists instead of tests/kernels/tests (same format).
set -uo pipefail
cd "$(dirname "$0")/.."
wt=$(pwd)
cache=build/kernels
# the modules the guest needs to mount its root (their dependencies are found by modprobe)
modules=(virtio_pci 9pnet_virtio 9p)
# a guest that has not powered off by then is stopped (TCG: everything is 5-20x slower)
limit=${JT_KERNEL_TIMEOUT:-3600}
tests=${KERNEL_TESTS:-tests/kernels/tests}
# Under TCG, code run once (exec, ld.so, a runtime's start) costs 10-20 times what it costs
# natively, and loops far less: timed workloads run this many times longer in the guest so
# that start-up weighs in them as on a host (tests/integration/lib.h: JT_TEST_SCALE)
scale=${JT_TEST_SCALE:-12}

say() { echo "test-kernels: $*" >&2; }

# The kernel package a metapackage stands for (linux-image-amd64 -> linux-image-6.1.0-N-amd64).
resolve() {
	local dep

	dep=$(apt-cache depends "$1" 2>/dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' |
		head -n 1)
	echo "${dep:-$1}"
}

# The .deb of package $1 in the cache, downloaded if absent; its path on stdout.
fetch() {
	local deb

	deb=$(ls "$cache/$1"_*.deb 2>/dev/null | tail -n 1)
	if [ -z "$deb" ]; then
		(cd "$cache" && apt-get download -q -o APT::Sandbox::User=root "$1" >&2) || {
			say "$1: apt-get download failed (is it in the apt mirror? apt-get update?)"
			return 1
		}
		deb=$(ls "$cache/$1"_*.deb 2>/dev/null | tail -n 1)
	fi
	echo "$deb"
}

# From deb $1, into $2: vmlinuz, and initrd.img holding busybox, tests/kernels/init and the
# modules 9p needs (decompressed, in dependency order). Prints the kernel's release.
prepare() {
	local deb=$1 dir=$2 tmp ver m line ko
	local -a order=()

	tmp=$(mktemp -d) || return 1
	# only the kernel, the module index and the trees 9p and virtio live in
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" --wildcards './boot/vmlinuz-*' \
		'./lib/modules/*/modules.*' './lib/modules/*/kernel/fs/*' \
		'./lib/modules/*/kernel/net/9p/*' './lib/modules/*/kernel/drivers/virtio/*' || {
		say "$deb: cannot extract the kernel and its modules"
		rm -rf "$tmp"
		return 1
	}
	ver=$(ls "$tmp/lib/modules")
	depmod -b "$tmp" "$ver" || { rm -rf "$tmp"; return 1; }
	mkdir -p "$tmp/initrd/bin" "$tmp/initrd/modules"
	for m in "${modules[@]}"; do
		line=$(modprobe -d "$tmp" -S "$ver" --show-depends "$m") || {
			say "$ver: no module $m"
			rm -rf "$tmp"
			return 1
		}
		while read -r kind ko _; do
			[ "$kind" = insmod ] || continue	# "builtin NAME": nothing to load
			case " ${order[*]} " in *" $ko "*) continue ;; esac
			order+=("$ko")
		done <<<"$line"
	done
	for ko in "${order[@]}"; do
		m=$(basename "$ko")
		case "$m" in
		*.xz) xz -dc "$ko" >"$tmp/initrd/modules/${m%.xz}"; m=${m%.xz} ;;
		*.zst) zstd -qdc "$ko" >"$tmp/initrd/modules/${m%.zst}"; m=${m%.zst} ;;
		*) cp "$ko" "$tmp/initrd/modules/$m" ;;
		esac
		echo "$m" >>"$tmp/initrd/modules/order"
	done
	cp /bin/busybox "$tmp/initrd/bin/busybox"
	cp tests/kernels/init "$tmp/initrd/init"
	mkdir -p "$dir"
	cp "$tmp/boot/vmlinuz-$ver" "$dir/vmlinuz"
	(cd "$tmp/initrd" && find . | cpio -o -H newc --quiet) >"$dir/initrd.img"
	rm -rf "$tmp"
	echo "$ver"
}

# Boot the kernel in $1 (vmlinuz, initrd.img); the guest writes its results there.
boot() {
	local dir=$1

	rm -rf "$dir"/results "$dir"/*.log "$dir"/*.files
	cp "$tests" "$dir/tests" || return 1
	# the console goes whole to console.log; the guest's own lines (jt-kernels:) to us
	timeout "$limit" qemu-system-x86_64 -accel tcg -machine q35 -cpu max -smp 2 -m 4G \
		-nodefaults -no-user-config -display none -no-reboot -serial stdio \
		-kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" \
		-append "console=ttyS0 loglevel=4 panic=1 jt.wt=$wt jt.out=$wt/$dir jt.scale=$scale" \
		-fsdev local,id=root,path=/,security_model=passthrough,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=root,mount_tag=hostroot \
		-fsdev "local,id=build,path=$wt/build,security_model=passthrough,multidevs=remap" \
		-device virtio-9p-pci,fsdev=build,mount_tag=build </dev/null |
		sed -u 's/\r$//' | tee "$dir/console.log" | sed -un 's/^jt-kernels: /  /p'
	return "${PIPESTATUS[0]}"
}

mkdir -p "$cache"
[ $# -gt 0 ] || set -- ${KERNELS:-linux-image-amd64 linux-image-6.12-amd64}
bad=0 summary=()
for want in "$@"; do
	pkg=$(resolve "$want")
	deb=$(fetch "$pkg") || { bad=1; summary+=("$pkg: not fetched"); continue; }
	ver=$(prepare "$deb" "$cache/tmp-boot") || { bad=1; summary+=("$pkg: not prepared"); continue; }
	dir=$cache/$ver
	rm -rf "$dir" && mv "$cache/tmp-boot" "$dir"
	echo "== $ver ($(basename "$deb"))"
	t0=$(date +%s.%N)
	boot "$dir"
	rc=$?
	wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.0f", b - a }')
	done_line=$(grep '^done ' "$dir/results" 2>/dev/null)
	if [ -z "$done_line" ]; then
		[ "$rc" -eq 124 ] && say "$ver: stopped after $limit s"
		echo "  the guest did not finish (qemu exit $rc); the end of $dir/console.log:"
		tail -n 15 "$dir/console.log" | sed 's/^/    /'
		bad=1
		summary+=("$ver: did not finish, $wall s")
		continue
	fi
	read -r _ up end passed failed <<<"$done_line"
	skipped=$(grep -c ' skipped ' "$dir/results")
	[ "$failed" -eq 0 ] || bad=1
	for f in $(awk '$3 == "failed" { print $1 "." $2 ".log" }' "$dir/results"); do
		echo "  $f: the end of its output"
		grep -E '^\[  (ERROR|FAILED) |Failure!|error: |jitrace: ' "$dir/$f" | tail -n 8 |
			sed 's/^/    /'
	done
	line=$(printf '%s: %d passed, %d failed, %d skipped; boot %.1f s, tests %.1f s, wall %d s' \
		"$ver" "$passed" "$failed" "$skipped" "$up" \
		"$(awk -v a="$up" -v b="$end" 'BEGIN { print b - a }')" "$wall")
	echo "$line"
	summary+=("$line")
done
if [ ${#summary[@]} -gt 1 ]; then
	echo
	printf '%s\n' "${summary[@]}"
fi
exit $bad
