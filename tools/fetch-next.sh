#!/bin/sh
# Installs Debian 13 (trixie)'s qemu-system-x86 (10.0) and dpdk-dev (24.11,
# the package with dpdk-testpmd) into DIR (build/next) with debootstrap from
# the machine's Debian mirror:
# the second, real QEMU and DPDK that `--qemu next` and `--testpmd next`
# run (tools/vnperflib/run/nextroot.py). Nothing from outside Debian's archive;
# nothing installed on the machine itself. Root (debootstrap needs it).
# Idempotent: done when DIR.stamp exists (the versions installed, from
# dpkg-query inside DIR). Installs into DIR.part and renames, so a failed
# run leaves no half-root that looks done.
#   tools/fetch-next.sh DIR
set -eu
[ $# -eq 1 ] || { echo "usage: fetch-next.sh DIR" >&2; exit 64; }
SUITE=trixie
PKGS=qemu-system-x86,dpdk-dev
mkdir -p "$(dirname "$1")"
dir=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
exec 9>"$dir.lock"
flock 9

die() { echo "fetch-next: $*" >&2; exit 1; }

[ -s "$dir.stamp" ] && [ -x "$dir/usr/bin/qemu-system-x86_64" ] &&
    [ -x "$dir/usr/bin/dpdk-testpmd" ] && exit 0
[ "$(id -u)" -eq 0 ] || die "debootstrap needs root (run make next as root)"
# debootstrap among them; here, so that a done root costs no dpkg queries.
"$(dirname "$0")/deps.sh"
mirror=$("$(dirname "$0")/debian-mirror.sh")
echo "  NEXT    debootstrap $SUITE ($PKGS) from $mirror -> $dir"

part=$dir.part
# debootstrap mounts proc and sys inside the root; a failed run can leave
# them mounted, and rm -rf must not walk into them.
unmount() {
    for m in "$part/proc" "$part/sys"; do
        mountpoint -q "$m" 2>/dev/null && umount -l "$m"
    done
    return 0
}
unmount
rm -rf "$part" "$dir" "$dir.stamp"
trap unmount EXIT
debootstrap --variant=minbase --include="$PKGS" "$SUITE" "$part" "$mirror" \
    >"$dir.log" 2>&1 ||
    { tail -n 5 "$dir.log"; die "debootstrap failed (log: $dir.log)"; }
unmount
[ -x "$part/usr/bin/qemu-system-x86_64" ] || die "no qemu-system-x86_64 in $part"
[ -x "$part/usr/bin/dpdk-testpmd" ] || die "no dpdk-testpmd in $part"
# The versions the runner's identity names (dpkg-query inside the root).
versions=$(chroot "$part" dpkg-query -W -f='${Package} ${Version}\n' \
    qemu-system-x86 dpdk-dev) || die "dpkg-query in $part failed"
mv "$part" "$dir"
echo "$versions" >"$dir.stamp"
echo "  NEXT    $dir: $(echo "$versions" | tr '\n' ' ')"
