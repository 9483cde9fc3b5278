#!/bin/sh
# Builds the Linux-guest baseline of bench/ into DIR (build/linux-guest):
# Debian's current linux-image-amd64 kernel (vmlinuz), and an uncompressed
# initramfs (initrd.img) with busybox-static, iperf 2 with its shared
# libraries, the virtio-net/virtio transport/pktgen modules and
# bench/linux-guest/init. Packages are fetched with `apt-get download` and
# unpacked with dpkg-deb -x: nothing is installed on the host.
# Idempotent: done when DIR/stamp matches the package versions and the
# sources; the .debs are kept in DIR/dl.
#   tools/fetch-linux-guest.sh DIR
set -eu
[ $# -eq 1 ] || { echo "usage: fetch-linux-guest.sh DIR" >&2; exit 64; }
here=$(cd "$(dirname "$0")/.." && pwd)
init="$here/bench/linux-guest/init"
mkdir -p "$1"; dir=$(cd "$1" && pwd)
exec 9>"$dir.lock"
flock 9

die() { echo "fetch-linux-guest: $*" >&2; exit 1; }

# The kernel package linux-image-amd64 points at (6.1.0-N-amd64 on bookworm).
kernel_pkg() {
    apt-cache depends linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1
}
kpkg=$(kernel_pkg)
if [ -z "$kpkg" ]; then
    apt-get update -q >/dev/null 2>&1 || true
    kpkg=$(kernel_pkg)
fi
[ -n "$kpkg" ] || die "apt-cache knows no linux-image-amd64 (no Debian archive?)"
pkgs="$kpkg busybox-static iperf libc6 libstdc++6 libgcc-s1"
# shellcheck disable=SC2086
versions=$(apt-cache policy $pkgs | awk '/^[^ ]/ { p = $1; sub(/:$/, "", p) }
    /^ *Candidate:/ { print p "=" $2 }')
[ "$(echo "$versions" | grep -cv '=(none)$')" -eq 6 ] || die "no candidate for: $versions"
sum=$(cat "$0" "$init" | md5sum | cut -c1-12)
stamp=$(printf '%s\n%s\n' "$versions" "$sum")
if [ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$stamp" ] &&
    [ -f "$dir/vmlinuz" ] && [ -f "$dir/initrd.img" ]; then
    exit 0
fi
echo "  LINUX   $kpkg, busybox-static, iperf -> $dir"

mkdir -p "$dir/dl"
# apt-get download writes as _apt where it can: the download directory
# must be writable by it, or it falls back to root with a warning.
chmod 0777 "$dir/dl" 2>/dev/null || true
missing=""
for v in $versions; do
    p=${v%%=*}; ver=${v#*=}
    ls "$dir/dl/${p}_$(echo "$ver" | sed 's/:/%3a/')_"*.deb >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
    # shellcheck disable=SC2086
    (cd "$dir/dl" && apt-get download -q $missing >"$dir/download.log" 2>&1) || {
        tail -5 "$dir/download.log"
        die "apt-get download$missing failed (log: $dir/download.log)"
    }
fi

pk="$dir/pkgs"
rm -rf "$pk" "$dir/root"
mkdir -p "$pk"
for v in $versions; do
    p=${v%%=*}; ver=${v#*=}
    deb=$(ls "$dir/dl/${p}_$(echo "$ver" | sed 's/:/%3a/')_"*.deb | head -n 1)
    dpkg-deb -x "$deb" "$pk"
done

kver=$(ls "$pk/lib/modules" | head -n 1)
[ -f "$pk/boot/vmlinuz-$kver" ] || die "no kernel in $kpkg"
bb="$pk/bin/busybox"
[ -x "$bb" ] || die "no busybox in busybox-static"

r="$dir/root"
mkdir -p "$r/bin" "$r/sbin" "$r/usr/bin" "$r/usr/sbin" "$r/proc" "$r/sys" "$r/dev" \
    "$r/tmp" "$r/lib64" "$r/lib/x86_64-linux-gnu" "$r/etc"
cp "$bb" "$r/bin/busybox"
for a in $("$bb" --list-full); do
    [ -e "$r/$a" ] || ln -s /bin/busybox "$r/$a"
done

# Modules: the closure of what the baseline loads, from busybox depmod's
# modules.dep of the whole package; the initramfs gets its own modules.dep.
"$bb" depmod -b "$pk" "$kver"
mods="virtio_net virtio_pci virtio_mmio pktgen"
md="$pk/lib/modules/$kver"
for m in $mods; do
    line=$(grep -E "/$m\.ko(\.[a-z]+)?:" "$md/modules.dep") || die "module $m not in $kpkg"
    echo "$line" | tr -d ':' | tr ' ' '\n'
done | sort -u | while read -r f; do
    [ -n "$f" ] || continue
    mkdir -p "$r/lib/modules/$kver/$(dirname "$f")"
    cp "$md/$f" "$r/lib/modules/$kver/$f"
done
"$bb" depmod -b "$r" "$kver"
echo "$mods" > "$r/etc/modules"

# iperf 2 and its shared libraries (NEEDED closure), the dynamic loader.
cp "$pk/usr/bin/iperf" "$r/usr/bin/iperf"
interp=$(readelf -l "$pk/usr/bin/iperf" | sed -n 's/.*program interpreter: \(.*\)\]/\1/p')
[ -n "$interp" ] || die "iperf has no program interpreter"
mkdir -p "$r$(dirname "$interp")"
cp -L "$pk$interp" "$r$interp"
todo=$pk/usr/bin/iperf
done_libs=" "
while [ -n "$todo" ]; do
    next=""
    for elf in $todo; do
        for lib in $(readelf -d "$elf" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
            case "$done_libs" in *" $lib "*) continue ;; esac
            src=""
            for d in lib/x86_64-linux-gnu usr/lib/x86_64-linux-gnu; do
                [ -e "$pk/$d/$lib" ] && { src="$pk/$d/$lib"; break; }
            done
            [ -n "$src" ] || die "iperf needs $lib, not in the fetched packages"
            cp -L "$src" "$r/lib/x86_64-linux-gnu/$lib"
            done_libs="$done_libs$lib "
            next="$next $src"
        done
    done
    todo=$next
done

cp "$init" "$r/init"
chmod 0755 "$r/init"
printf '%s\n' "$kver" > "$r/etc/kernel-release"

# Uncompressed newc archive: nothing to inflate in emulated code at boot.
(cd "$r" && find . | sort | "$bb" cpio -o -H newc 2>/dev/null) > "$dir/initrd.img.tmp"
mv "$dir/initrd.img.tmp" "$dir/initrd.img"
cp "$pk/boot/vmlinuz-$kver" "$dir/vmlinuz"
printf '%s\n' "$versions" > "$dir/versions"
rm -rf "$pk"
printf '%s\n' "$stamp" > "$dir/stamp"
echo "  LINUX   $kver: $(du -k "$dir/vmlinuz" | cut -f1) KB kernel, $(du -k "$dir/initrd.img" | cut -f1) KB initramfs"
