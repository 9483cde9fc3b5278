#!/bin/sh
# Runs libFuzzer harnesses one after another: fuzz-run.sh DIR SECONDS NAME...
# Each starts from its committed seeds (tests/fuzz/seeds/NAME) and its own
# corpus in DIR/corpus/NAME, stops at the first finding (saved as
# DIR/crash-NAME-*). Prints one line per harness with its execution count;
# exits 1 if any harness found something.
set -u
dir=$1 secs=$2
shift 2
fail=0
for name in "$@"; do
    corpus=$dir/corpus/$name
    log=$dir/log-$name.txt
    mkdir -p "$corpus"
    "$dir/$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$dir/crash-$name-" "$corpus" "tests/fuzz/seeds/$name" >"$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    if [ "$rc" -ne 0 ]; then
        echo "fuzz: $name: FINDING after ${runs:-?} executions (exit $rc), log $log:"
        grep -E "ERROR|runtime error|cross-check|Test unit written" "$log" | head -5
        fail=1
    else
        echo "fuzz: $name: ${runs:-?} executions in ${secs} s, no finding"
    fi
done
exit $fail
