#!/bin/sh
# Builds passt from Debian trixie's source (a pinned upstream snapshot and
# its SHA-256) into DIR (build/passt): DIR/passt and DIR/passt.avx2, which
# the runner prefers to the machine's passt. Bookworm's passt
# 0.0~git20230309 stalls lwIP's TCP streams (docs/lwip.md); this one
# carries them. Plain C, no dependencies; nothing is installed.
# Idempotent: done when DIR/stamp names this version.
#   tools/fetch-passt.sh DIR
set -eu
[ $# -eq 1 ] || { echo "usage: fetch-passt.sh DIR" >&2; exit 64; }
VERSION=0.0~git20250503.587980c
TARBALL=passt_$VERSION.orig.tar.xz
SHA256=69d5eb843f7d648c2cc60bfbca6ea7b5014c6b6f07cdee362c2a8cf490515a49
mkdir -p "$1"; dir=$(cd "$1" && pwd)
exec 9>"$dir.lock"
flock 9

die() { echo "fetch-passt: $*" >&2; exit 1; }

[ -f "$dir/stamp" ] && [ "$(cat "$dir/stamp")" = "$VERSION" ] &&
    [ -x "$dir/passt" ] && [ -x "$dir/passt.avx2" ] && exit 0
echo "  PASST   $TARBALL -> $dir"

mirror=$("$(dirname "$0")/debian-mirror.sh")
url=$mirror/pool/main/p/passt/$TARBALL

mkdir -p "$dir/dl"
tb=$dir/dl/$TARBALL
if ! echo "$SHA256  $tb" | sha256sum -c --status 2>/dev/null; then
    curl -fsSL --retry 2 -o "$tb.part" "$url" 2>"$dir/download.log" ||
        die "download of $url failed: $(tail -n 1 "$dir/download.log")"
    echo "$SHA256  $tb.part" | sha256sum -c --status ||
        die "$url: SHA-256 is not the pinned $SHA256"
    mv "$tb.part" "$tb"
fi

rm -rf "$dir/src"
mkdir -p "$dir/src"
tar -C "$dir/src" --strip-components=1 -xf "$tb"
[ -f "$dir/src/passt.c" ] || die "unexpected layout in $TARBALL"
# VERSION: what `passt --version` prints (the runner's version gate reads it).
make -C "$dir/src" -s VERSION="$VERSION" passt passt.avx2 >"$dir/build.log" 2>&1 ||
    { tail -n 5 "$dir/build.log"; die "make passt failed (log: $dir/build.log)"; }
cp "$dir/src/passt" "$dir/src/passt.avx2" "$dir/"
echo "$VERSION" >"$dir/stamp"
echo "  PASST   $dir/passt $VERSION"
