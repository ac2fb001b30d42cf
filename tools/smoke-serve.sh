#!/usr/bin/env bash
# README's first command as a newcomer uses it: starts the built `moonrunner serve` (SQLite in a throwaway
# folder, free loopback ports), sends a short run over the line protocol as `nc` would, and checks the replies
# (the run starts, its fixes are acknowledged) and that the live page answers. Exits non-zero saying what
# failed. Needs only bash and python3 (for free ports and the page), both on the machine image.
#   tools/smoke-serve.sh [PATH-TO-moonrunner]   (default .build/debug/moonrunner)
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-.build/debug/moonrunner}
dir=$(mktemp -d /tmp/moonrunner-smoke.XXXXXX)
server=
cleanup() {
    [[ -n $server ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
    rm -rf "$dir"
}
trap cleanup EXIT
read -r port http_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')
"$binary" serve --port "$port" --http-port "$http_port" --db "$dir/runs.sqlite" >"$dir/serve.log" 2>&1 &
server=$!
for _ in $(seq 300); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    kill -0 "$server" 2>/dev/null || { cat "$dir/serve.log" >&2; echo "smoke: serve exited" >&2; exit 1; }
    sleep 0.1
done
now=$(date +%s)
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'iam:smoke\n' >&3
for i in 0 1 2 3 4 5; do printf 'loc:51.5007,%s,5,%s\n' "$(python3 -c "print(-0.1246 + $i * 0.00004)")" $((now - 5 + i)) >&3; done
printf 'stop:\nquit:\n' >&3
replies=$(timeout 20 cat <&3 || true)
exec 3>&-
echo "$replies" | sed 's/key=[0-9a-f]*/key=…/'
for want in '^ok:iam name=smoke' '^run:smoke id=' '^ack:smoke ts=' '^end:smoke'; do
    grep -Eq "$want" <<<"$replies" || { echo "smoke: no line matching $want" >&2; cat "$dir/serve.log" >&2; exit 1; }
done
python3 - "$http_port" <<'PY'
import sys, urllib.request
with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/", timeout=10) as page:
    body = page.read().decode()
    assert page.status == 200 and "<html" in body.lower(), "the live page did not answer"
print("smoke: the live page answers")
PY
[[ -s $dir/runs.sqlite ]] || { echo "smoke: no database written" >&2; exit 1; }
echo "smoke: serve works (line protocol and page)"
