#!/usr/bin/env bash
# Runs one libFuzzer target for SECONDS: tools/fuzz.sh TARGET SECONDS [extra libFuzzer flags]
# or, as CI does, as a regression gate: tools/fuzz.sh TARGET --regress [extra libFuzzer flags]
#   --regress: replays every seed, then a fixed number of runs (FUZZ_RUNS, default 20000) from a fixed seed
#   (-seed=1) in a throwaway corpus: the same inputs every time on the same code, so it fails only when the
#   code changed. Open-ended fuzzing (SECONDS) runs outside CI; an input it finds that crashed goes into the
#   target's seed folder (named crash-*) with its fix, so the gate replays it from then on.
#   TARGET: command | line-framer | server-event | activity-file | http-request | resp-reply | all (each for SECONDS)
# Exits non-zero when the target crashed (trap, ASan report, timeout, leak), after printing the reproducer
# and the command that replays it. Seeds are read from Fuzz/Corpus/<target>/ (http-request: also the HTTP
# tests' corpus, Tests/HTTPTests/Corpus/) and never written; what the fuzzer finds goes to .build/fuzz/<target>/.
# Files named crash-* in a seed folder are reproducers of bugs found before: they keep failing until fixed.
#
# Build: the targets live in their own package (Fuzz/) because an executable whose main is libFuzzer's only
# links with -sanitize=fuzzer. `--sanitize=fuzzer --sanitize=address` alone is not enough on Swift 6.3.1:
# swiftc passes only the last -sanitize= to the frontend, so nothing gets coverage instrumentation (libFuzzer
# says "no interesting inputs"); the combined `-Xswiftc -sanitize=fuzzer,address` restores it, and SwiftPM's
# own --sanitize=fuzzer is still needed so it does not rename the executable's (absent) main.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=(command line-framer server-event activity-file http-request resp-reply)
usage() { local IFS="|"; echo "usage: tools/fuzz.sh {${targets[*]}|all} SECONDS|--regress [libFuzzer flags]" >&2; exit 2; }
(($# >= 2)) || usage
target=$1 seconds=$2
shift 2
regress=false
if [[ $seconds == --regress ]]; then
    regress=true
else
    [[ $seconds =~ ^[0-9]+$ ]] || usage
fi
if [[ $target == all ]]; then
    failed=()
    for each in "${targets[@]}"; do "$0" "$each" "$seconds" "$@" || failed+=("$each"); done
    ((${#failed[@]} == 0)) || { echo "fuzz: crashed: ${failed[*]}" >&2; exit 1; }
    exit 0
fi

case $target in
    command) product=FuzzCommand seeds=Fuzz/Corpus/command ;;
    line-framer) product=FuzzLineFramer seeds=Fuzz/Corpus/line-framer ;;
    server-event) product=FuzzServerEvent seeds=Fuzz/Corpus/server-event ;;
    activity-file) product=FuzzActivityFile seeds=Fuzz/Corpus/activity-file ;;
    http-request) product=FuzzHTTPRequest seeds="Fuzz/Corpus/http-request Tests/HTTPTests/Corpus" ;;
    resp-reply) product=FuzzRESPReply seeds=Fuzz/Corpus/resp-reply ;;
    *) usage ;;
esac

build_flags=(--package-path Fuzz --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The linker warns about every ASan helper it cannot export: keep them out of the output, keep errors.
if ! swift build "${build_flags[@]}" --product "$product" >"$log" 2>&1; then
    grep -v 'ld.gold: warning: Cannot export local symbol' "$log" >&2
    echo "fuzz: build of $product failed" >&2
    exit 1
fi
binary="Fuzz/.build/debug/$product"

work=.build/fuzz/$target
if $regress; then
    # A fresh corpus each time: what an earlier run found must not change what this one tries.
    rm -rf "$work/corpus"
    limit=(-runs="${FUZZ_RUNS:-20000}" -seed=1)
    what="replaying its seeds, then ${FUZZ_RUNS:-20000} runs from seed 1"
else
    limit=(-max_total_time="$seconds")
    what="for ${seconds}s"
fi
mkdir -p "$work/corpus" "$work/artifacts"
rm -f "$work"/artifacts/*
# The Swift runtime's crash backtracer reads the stack under ASan (a false stack-buffer-underflow) and
# hangs: libFuzzer and ASan print the stack themselves.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:symbolize=1}
# Leaks are reported (libFuzzer's -detect_leaks), except the toolchain's own listed in Fuzz/lsan.supp.
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/Fuzz/lsan.supp:print_suppressions=0}
echo "fuzz: $target ($product) $what, seeds $seeds, corpus $work/corpus"
status=0
"$binary" "${limit[@]}" -timeout=10 -rss_limit_mb=2048 -max_len=8192 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "$@" "$work/corpus" $seeds >"$log" 2>&1 || status=$?
grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb|stat::new_units_added)|DONE' "$log" || true

shopt -s nullglob
artifacts=("$work"/artifacts/*)
if ((status == 0 && ${#artifacts[@]} == 0)); then
    echo "fuzz: $target: no crash $what ($(ls "$work/corpus" | wc -l) inputs in the corpus)"
    exit 0
fi
echo "fuzz: $target: CRASH (libFuzzer exit $status)" >&2
# The report: the failure message and the top of the stack.
grep -E -A40 'Fatal error|ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|deadly signal|Precondition failed' "$log" \
    | grep -v '^ *"' | head -60 >&2 || tail -40 "$log" >&2
for artifact in "${artifacts[@]}"; do
    echo "reproducer: $artifact ($(wc -c <"$artifact") bytes)" >&2
    echo "  bytes (python repr): $(python3 -c 'import sys; print(repr(open(sys.argv[1],"rb").read()[:400]))' "$artifact")" >&2
    echo "  replay: SWIFT_BACKTRACE=enable=no $binary $artifact" >&2
done
exit 1
