#!/usr/bin/env bash
# Runs the test suite (or part of it) under a sanitizer, in its own scratch path so the normal build stays:
#   tools/sanitize.sh thread|address [swift test arguments, e.g. --filter BroadcasterTests]
# thread: ThreadSanitizer (.build-tsan); address: AddressSanitizer with leak detection off (.build-asan;
# the test runners leak by design at exit). .ci/run runs both over the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1:-} in
    thread) shift; TSAN_OPTIONS=${TSAN_OPTIONS:-suppressions=$PWD/.ci/tsan.supp} exec swift test --sanitize=thread --scratch-path .build-tsan "$@" ;;
    address) shift; ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0} exec swift test --sanitize=address --scratch-path .build-asan "$@" ;;
    *) echo "usage: tools/sanitize.sh thread|address [swift test arguments]" >&2; exit 2 ;;
esac
