#!/bin/sh
# The root file system of itest_containers' image, as a tarball for `docker import`: no image
# registry is reachable, so the image is made here from nothing. It holds only the skeleton
# of a Debian 12 root (merged /usr: /bin, /lib, /lib64 and /sbin are links into /usr) and, as
# a DaemonSet's image would, jitrace under /opt/jitrace (bin/jitrace, lib/ its agent). The
# tests bind-mount the host's /usr and /etc/ld.so.cache read-only over it for the programs'
# files and libraries, so the image stays a few megabytes whatever storage driver copies it.
# Usage: mkimage.sh OUT.tar JITRACE AGENT
set -eu

[ $# -eq 3 ] || { echo "usage: $0 OUT.tar JITRACE AGENT" >&2; exit 2; }
out=$1 jitrace=$2 agent=$3
root=$(mktemp -d "${TMPDIR:-/tmp}/jitrace-rootfs.XXXXXX")
trap 'rm -rf "$root"' EXIT

mkdir -p "$root/usr" "$root/etc" "$root/tmp" "$root/proc" "$root/sys" "$root/dev" \
	"$root/opt/jitrace/bin" "$root/opt/jitrace/lib" "$root/var/lib/jitrace"
chmod 1777 "$root/tmp"
for d in bin lib lib64 sbin; do
	ln -s "usr/$d" "$root/$d"
done
# names for the ids of root, which some programs look up
printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"
install -m 0755 "$jitrace" "$root/opt/jitrace/bin/jitrace"
install -m 0755 "$agent" "$root/opt/jitrace/lib/libjitrace-agent.so"
tar -C "$root" --numeric-owner --owner=0 --group=0 -cf "$out" .
