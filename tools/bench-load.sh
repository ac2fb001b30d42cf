#!/bin/sh
# Builds the release binary and runs the load benchmark: by default the issue's scenarios in turn
# (live, flat, flat-replay, idle; 10 s each). Extra arguments replace the default ones, e.g.
#   tools/bench-load.sh --scenario live              # the 30 s version of scenario 1
#   tools/bench-load.sh --runners 100 --flat-out     # a custom load
set -eu
cd "$(dirname "$0")/.."
swift build -c release --product moonrunner >&2
swift build -c release --product moonrunner-bench >&2
if [ "$#" -eq 0 ]; then set -- --scenario all; fi
exec .build/release/moonrunner-bench load "$@"
