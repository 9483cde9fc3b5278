#!/bin/sh
# Integration tests (pytest, real QEMU boots under TCG). Called by `make test`
# after the unit tests. Extra arguments go to pytest (e.g. -k dgram); test
# files or node ids among them replace the default tests/integration.
# VNPERF_SLOW=1 also runs the tests marked slow.
set -u
cd "$(dirname "$0")/.." || exit 1
where=tests/integration
for a in "$@"; do
    case "$a" in tests/*) where= ;; esac
done
/usr/bin/python3 -m pytest -q -ra -p no:cacheprovider --durations=10 $where "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "run-integration: no tests collected (that is a failure)" >&2
    exit 1
fi
exit "$rc"
