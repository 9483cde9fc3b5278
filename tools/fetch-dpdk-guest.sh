#!/bin/sh
# Adds DPDK to the Linux-guest baseline in DIR (build/linux-guest, made by
# tools/fetch-linux-guest.sh first): DIR/initrd-dpdk.img is DIR/initrd.img
# followed by a second newc archive (the kernel unpacks both, the second
# over the first) holding Debian's dpdk-testpmd (package dpdk-dev), the
# shared libraries of its NEEDED closure together with the virtio PMD and
# the ring mempool driver it loads with -d, and the kernel's uio and
# uio_pci_generic modules (Debian's kernel has no VFIO_NOIOMMU) and
# coreutils' libstdbuf.so (stdbuf's LD_PRELOAD: testpmd's stdout to a file
# line by line, so /init sees when it starts forwarding) under /lib/dpdk. Every file comes from a Debian package fetched with
# `apt-get download` and unpacked with dpkg-deb -x; which package holds a
# library is asked of this host's dpkg database (deps.sh installs
# dpdk-dev here, so every librte_* soname is known to it).
# Idempotent: done when DIR/dpdk-stamp's packages are still the archive's
# candidates and the sources are the same.
#   tools/fetch-dpdk-guest.sh DIR
set -eu
[ $# -eq 1 ] || { echo "usage: fetch-dpdk-guest.sh DIR" >&2; exit 64; }
dir=$(cd "$1" && pwd)
exec 9>"$dir.lock"
flock 9

die() { echo "fetch-dpdk-guest: $*" >&2; exit 1; }

if [ ! -f "$dir/initrd.img" ] || [ ! -f "$dir/versions" ]; then
    die "no Linux guest in $dir (make linux-guest)"
fi
kpkg=$(sed -n 's/^\(linux-image-[^=]*\)=.*/\1/p' "$dir/versions")
kver=${kpkg#linux-image-}
kdeb=$(ls "$dir/dl/${kpkg}_"*.deb 2>/dev/null | head -n 1)
[ -n "$kdeb" ] || die "no $kpkg package in $dir/dl"
tp=/usr/bin/dpdk-testpmd
# The PMDs testpmd does not link but loads (-d): the guest's NIC, the pool.
pmds="librte_net_virtio.so.23 librte_mempool_ring.so.23"
# Already in the base initramfs (libc6, libstdc++6, libgcc-s1).
base=" libc.so.6 libm.so.6 libstdc++.so.6 libgcc_s.so.1 ld-linux-x86-64.so.2 "

pkg_of() {
    dpkg -S "*/$1" 2>/dev/null | sed -n 's/^\([^:,]*\)[:,].*/\1/p' | head -n 1
}

candidates() {
    # shellcheck disable=SC2086
    apt-cache policy $1 | awk '/^[^ ]/ { p = $1; sub(/:$/, "", p) }
        /^ *Candidate:/ { print p "=" $2 }' | sort
}

sum=$(cat "$0" "$dir/stamp" | md5sum | cut -c1-12)
# Up to date: the packages of the last build still the archive's candidates
# (the closure's dpkg -S takes most of a minute; its packages' versions
# decide what it finds).
if [ -f "$dir/dpdk-stamp" ] && [ -f "$dir/initrd-dpdk.img" ]; then
    last=$(sed '$d' "$dir/dpdk-stamp" | sed 's/=.*//' | tr '\n' ' ')
    [ "$(printf '%s\n%s\n' "$(candidates "$last")" "$sum")" = "$(cat "$dir/dpdk-stamp")" ] &&
        exit 0
fi

# NEEDED closure over the host's copies, names only: which packages to fetch.
tppkg=$(pkg_of dpdk-testpmd)
[ -n "$tppkg" ] || die "dpkg knows no dpdk-testpmd (apt-get install dpdk-dev)"
libs=" " todo="$tp"
for p in $pmds; do todo="$todo /usr/lib/x86_64-linux-gnu/$p"; libs="$libs$p "; done
while [ -n "$todo" ]; do
    next=""
    for elf in $todo; do
        for lib in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            case "$base$libs" in *" $lib "*) continue ;; esac
            libs="$libs$lib "
            next="$next /usr/lib/x86_64-linux-gnu/$lib"
        done
    done
    todo=$next
done
# One dpkg -S for all: "pkg:arch[, pkg:arch]: /path" per path that matched.
# shellcheck disable=SC2046
owners=$(dpkg -S $(for lib in $libs; do echo "*/$lib"; done) 2>/dev/null)
pkgs="$tppkg coreutils"
for lib in $libs; do
    p=$(echo "$owners" | grep "/$lib\$" | sed -n 's/^\([^:,]*\)[:,].*/\1/p' | head -n 1)
    [ -n "$p" ] || die "dpkg knows no package holding $lib"
    case " $pkgs " in *" $p "*) ;; *) pkgs="$pkgs $p" ;; esac
done
versions=$(candidates "$pkgs")
echo "$versions" | grep -q '=(none)$' && die "no candidate for: $(echo "$versions" | grep '=(none)$')"
stamp=$(printf '%s\n%s\n' "$versions" "$sum")
echo "  DPDK    $(echo "$versions" | wc -l) packages (dpdk-testpmd, librte_*) -> $dir"

dl="$dir/dl-dpdk"
mkdir -p "$dl"
chmod 0777 "$dl" 2>/dev/null || true
missing=""
for v in $versions; do
    p=${v%%=*}; ver=${v#*=}
    ls "$dl/${p}_$(echo "$ver" | sed 's/:/%3a/')_"*.deb >/dev/null 2>&1 || missing="$missing $v"
done
if [ -n "$missing" ]; then
    # shellcheck disable=SC2086
    (cd "$dl" && apt-get download -q $missing >"$dir/download-dpdk.log" 2>&1) || {
        tail -5 "$dir/download-dpdk.log"
        die "apt-get download failed (log: $dir/download-dpdk.log)"
    }
fi

pk="$dir/pkgs-dpdk"
r="$dir/root-dpdk"
rm -rf "$pk" "$r"
mkdir -p "$pk" "$r/usr/bin" "$r/lib/x86_64-linux-gnu" "$r/lib/dpdk" "$r/var/run" \
    "$r/dev"
for v in $versions; do
    p=${v%%=*}; ver=${v#*=}
    dpkg-deb -x "$(ls "$dl/${p}_$(echo "$ver" | sed 's/:/%3a/')_"*.deb | head -n 1)" "$pk"
done
cp "$pk$tp" "$r/usr/bin/dpdk-testpmd"
for lib in $libs; do
    src=""
    for d in lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu; do
        [ -e "$pk/$d/$lib" ] && { src="$pk/$d/$lib"; break; }
    done
    [ -n "$src" ] || die "$lib not in the fetched packages"
    cp -L "$src" "$r/lib/x86_64-linux-gnu/$lib"
done
cp "$pk/usr/libexec/coreutils/libstdbuf.so" "$r/lib/dpdk/"
mkdir -p "$pk/kernel"
dpkg-deb -x "$kdeb" "$pk/kernel"
for m in uio uio_pci_generic; do
    f=$(find "$pk/kernel/lib/modules/$kver" -name "$m.ko*" | head -n 1)
    [ -n "$f" ] || die "module $m not in $kpkg"
    cp "$f" "$r/lib/dpdk/"
done

bb="$dir/root/bin/busybox"
(cd "$r" && find . | sort | "$bb" cpio -o -H newc 2>/dev/null) > "$dir/dpdk.cpio"
cat "$dir/initrd.img" "$dir/dpdk.cpio" > "$dir/initrd-dpdk.img.tmp"
mv "$dir/initrd-dpdk.img.tmp" "$dir/initrd-dpdk.img"
rm -rf "$pk" "$r" "$dir/dpdk.cpio"
printf '%s\n' "$stamp" > "$dir/dpdk-stamp"
echo "  DPDK    $(du -k "$dir/initrd-dpdk.img" | cut -f1) KB initramfs with dpdk-testpmd"
