#!/bin/sh
# Builds newlib from Debian's newlib-source for x86_64-elf with the host gcc
# into DIR/install. Serialised with flock: parallel makes share one build.
# usage: build-newlib.sh DIR STAMP CFLAGS
set -eu
mkdir -p "$1"
dir=$(cd "$1" && pwd)
stamp=$2
cflags=$3
tarball=$(ls /usr/src/newlib/newlib-*.tar.* 2>/dev/null | head -n 1)
[ -n "$tarball" ] || { echo "build-newlib: no tarball in /usr/src/newlib (package newlib-source)" >&2; exit 1; }

exec 9>"$dir.lock"
flock 9
[ -f "$stamp" ] && exit 0

echo "  NEWLIB  $tarball -> $dir/install (about 60 s)"
find "$dir" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
mkdir -p "$dir/obj"
tar -C "$dir" -xf "$tarball"
src=$(find "$dir" -mindepth 1 -maxdepth 1 -type d ! -name obj | head -n 1)
cd "$dir/obj"
CC_FOR_TARGET=gcc AR_FOR_TARGET=ar AS_FOR_TARGET=as LD_FOR_TARGET=ld RANLIB_FOR_TARGET=ranlib \
NM_FOR_TARGET=nm OBJCOPY_FOR_TARGET=objcopy STRIP_FOR_TARGET=strip CFLAGS_FOR_TARGET="$cflags" \
    "$src/configure" --target=x86_64-elf --prefix="$dir/install" --disable-multilib \
    --disable-newlib-supplied-syscalls --enable-newlib-reent-small --enable-newlib-io-c99-formats \
    --enable-newlib-io-long-long --disable-nls >"$dir/configure.log" 2>&1 ||
    { tail -20 "$dir/configure.log"; exit 1; }
make -s -j"$(nproc)" all-target-newlib >"$dir/build.log" 2>&1 || { tail -30 "$dir/build.log"; exit 1; }
make -s install-target-newlib >"$dir/install.log" 2>&1 || { tail -30 "$dir/install.log"; exit 1; }
touch "$stamp"
