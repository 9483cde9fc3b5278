#!/bin/sh
# Fetches lwIP from Debian's lwip source package into DIR/src, without
# touching the machine's apt configuration: a private sources list with
# deb-src and a private lists directory under DIR/apt.
set -eu
mkdir -p "$1"; dir=$(cd "$1" && pwd)
apt="$dir/apt"
exec 9>"$dir.lock"
flock 9
[ -f "$dir/.unpacked" ] && exit 0
echo "  LWIP    apt-get source lwip -> $dir/src"
rm -rf "$dir/src" "$apt"
mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$dir/dl"

# Same mirrors and suites as the machine's own deb entries, as deb-src.
srcs=$(mktemp)
trap 'rm -f "$srcs"' EXIT
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    case "$f" in
    *.sources)
        awk 'BEGIN{RS=""; ORS="\n\n"} /Types:/ { sub(/Types:[^\n]*/, "Types: deb-src"); print }' "$f" ;;
    *)
        grep -E '^[[:space:]]*deb[[:space:]]' "$f" | sed 's/^[[:space:]]*deb[[:space:]]/deb-src /' ;;
    esac
done > "$srcs.tmp"
mv "$srcs.tmp" "$srcs"
opts="-o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts=$apt/parts \
 -o Dir::State::Lists=$apt/lists -o Dir::Cache::Archives=$apt/archives \
 -o Debug::NoLocking=1"
mkdir -p "$apt/parts"
if grep -q '^Types:' "$srcs"; then
    cp "$srcs" "$apt/parts/vnperf.sources"
else
    cp "$srcs" "$apt/parts/vnperf.list"
fi

# shellcheck disable=SC2086
apt-get $opts -q update >"$apt/update.log" 2>&1 || { tail -5 "$apt/update.log"; exit 1; }
# shellcheck disable=SC2086
(cd "$dir/dl" && apt-get $opts -q source --download-only lwip >"$apt/source.log" 2>&1) ||
    { tail -5 "$apt/source.log"; echo "fetch-lwip: apt-get source lwip failed" >&2; exit 1; }
tarball=$(ls "$dir"/dl/lwip_*.orig.tar.* | head -n 1)
mkdir -p "$dir/src"
tar -C "$dir/src" --strip-components=1 -xf "$tarball"
test -f "$dir/src/src/core/tcp.c" || { echo "fetch-lwip: unexpected layout in $tarball" >&2; exit 1; }
echo "  LWIP    $(basename "$tarball")"
touch "$dir/.unpacked"
