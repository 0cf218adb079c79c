#!/usr/bin/env bash
# Time the README's test command (.ci/run) on a fresh clone of this repository at COMMIT,
# for comparing two commits one after the other on one machine (docs/measurements.md,
# "The test suite"). The clone goes beside this checkout (so ../shared/data is found the
# same way); the result lines go to time-NAME.log there.
#   usage: scripts/time_ci.sh NAME COMMIT      e.g. scripts/time_ci.sh old 8878bc0
set -u
name=$1; commit=$2
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
parent=$(dirname "$repo")
dir=$parent/t-$name
log=$parent/time-$name.log
full=$parent/time-$name.full.log  # the whole output (the failures' tracebacks)
rm -rf "$dir"
git clone -q "$repo" "$dir" && cd "$dir" && git checkout -q "$commit" || exit 2
{
  echo "commit $(git rev-parse --short HEAD)  start $(date -u +%T)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
  /usr/bin/time -f "time: %e s wall, %U s user, %S s sys" bash .ci/run > "$full" 2>&1
  grep -m1 "randomly-seed" "$full"
  grep -E "passed|failed|error|time:|^FAILED" "$full" | tail -15
  echo "end $(date -u +%T)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
} > "$log" 2>&1
rm -rf "$dir"
