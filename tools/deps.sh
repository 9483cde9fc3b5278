#!/bin/sh
# Installs the Debian packages vnperf builds and runs with, when missing.
# Idempotent: with everything present it only asks dpkg and exits (< 1 s).
set -eu

# package:reason. Build and boot essentials first; backends after.
PKGS="
gcc:compiler
make:build
binutils:linker
xz-utils:unpacks the newlib and lwIP tarballs
newlib-source:libc for the guest (built into build/)
dpkg-dev:apt-get source (lwIP)
gnu-efi:UEFI loader
ovmf:UEFI firmware for --boot uefi
mtools:ESP image without root mounts
dosfstools:ESP image (mkfs.fat)
qemu-system-x86:runs the appliance
libcmocka-dev:host unit tests
python3:runner
python3-pytest:integration tests
python3-matplotlib:plots (runner falls back to tables without it)
chromium:renders vnperf report's page headless in the integration tests
iproute2:tap and network namespaces
iperf:iperf2 peer for app=iperf
iputils-ping:host ping test
dpdk-dev:dpdk-testpmd vhost-user backend
debootstrap:installs Debian 13's QEMU and DPDK into build/next (make next)
libdpdk-dev:vnperf-peer-dpdk (vhost-user sink feeder)
pkg-config:finds libdpdk for vnperf-peer-dpdk
passt:passt backend
curl:fetches passt's source (tools/fetch-passt.sh)
libvirt-daemon-system:libvirtd for --engine libvirt and vnperf fleet
libvirt-clients:virsh
python3-libvirt:the runner's libvirt engine
clang-format:format check
clang:libFuzzer harnesses (make fuzz); the tc-bpf VLAN host end (tools/vlantc)
libbpf-dev:bpf_helpers.h for the tc-bpf VLAN host end
libfuzzer-14-dev:libFuzzer harnesses (make fuzz)
"

missing=$(printf '%s\n' "$PKGS" | sed -n 's/^\([a-z0-9.+-]*\):.*/\1/p' | while read -r p; do
    s=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$s" = installed ] || printf '%s ' "$p"
done)

[ -z "$missing" ] && exit 0

echo "deps: installing missing Debian packages: $missing"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# Refresh the lists only when a package is not known at all.
for p in $missing; do
    if ! apt-cache show "$p" >/dev/null 2>&1; then
        $SUDO apt-get update -q >/dev/null
        break
    fi
done
# shellcheck disable=SC2086
if ! $SUDO apt-get install -y -q --no-install-recommends $missing >/tmp/vnperf-deps.log 2>&1; then
    $SUDO apt-get update -q >/dev/null
    $SUDO apt-get install -y -q --no-install-recommends $missing >/tmp/vnperf-deps.log 2>&1 || {
        tail -20 /tmp/vnperf-deps.log
        echo "deps: apt-get install failed (log: /tmp/vnperf-deps.log)" >&2
        exit 1
    }
fi
echo "deps: done"
