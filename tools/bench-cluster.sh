#!/usr/bin/env bash
# The cluster benchmark (issue 15): a throwaway Redis and PostgreSQL on loopback, then
#   1. one node (`serve --db postgres://…`, no bus): runners and their spectators on it;
#   2. three nodes (`--cluster redis://…`): runners on node a, their spectators on node b;
# each with the same load (moonrunner-bench load), printing its figures: fixes/s, events/s, loss and the
# spectators' latency (p50/p99), so (2) minus (1) is what the bus costs a remote spectator.
#   tools/bench-cluster.sh [moonrunner-bench load flags]   default: --runners 200 --rate 10 --spectators 200 --duration 10
# Every process shares this machine's cores (2 here): the nodes are not one core each.
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product moonrunner >&2
swift build -c release --product moonrunner-bench >&2
(($#)) || set -- --runners 200 --rate 10 --spectators 200 --duration 10
bin=.build/release/moonrunner
work=$(mktemp -d /tmp/moonrunner-bench-cluster.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
    [[ -n ${pg_bin:-} ]] && "${as_postgres[@]}" "$pg_bin/pg_ctl" stop -D "$work/pg" -m fast -w >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
as_postgres=()
if (($(id -u) == 0)); then chown postgres: "$work"; as_postgres=(runuser -u postgres --); fi
pg_port=$(free_port)
"${as_postgres[@]}" "$pg_bin/initdb" -D "$work/pg" -U moonrunner --auth=trust -E UTF8 --locale=C --no-sync >/dev/null
"${as_postgres[@]}" "$pg_bin/pg_ctl" start -D "$work/pg" -l "$work/pg.log" -w \
    -o "-p $pg_port -k $work -c listen_addresses=127.0.0.1 -c fsync=off" >/dev/null
redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" --daemonize yes \
    --pidfile "$work/redis.pid" --logfile "$work/redis.log"
for _ in $(seq 50); do [[ $(redis-cli -p "$redis_port" ping 2>/dev/null) == PONG ]] && break; sleep 0.1; done
pids+=("$(cat "$work/redis.pid")")

# start NAME DATABASE [cluster flags]: a node on a free port; prints "PID PORT".
start() {
    local name=$1 db=$2 port
    shift 2
    port=$(free_port)
    # Every load connection comes from 127.0.0.1: no per-address cap.
    "$bin" serve --quiet --port "$port" --http-port off --loops 1 --db "$db" --max-connections-per-address off "$@" \
        >"$work/$name.log" 2>&1 &
    local pid=$!
    for _ in $(seq 100); do
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
        sleep 0.1
    done
    echo "$pid $port"
}
database() { "${as_postgres[@]}" "$pg_bin/createdb" -h 127.0.0.1 -p "$pg_port" -U moonrunner "$1"; echo "postgres://moonrunner@127.0.0.1:$pg_port/$1"; }

echo "=== one node, PostgreSQL store, no bus: $*"
read -r pid port < <(start single "$(database single)")
pids+=("$pid")
.build/release/moonrunner-bench load --port "$port" --server-pid "$pid" --prefix single "$@"
kill -TERM "$pid"
while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done

echo "=== three nodes on one Redis: runners on a, their spectators on b: $*"
db=$(database cluster)
read -r a port_a < <(start a "$db" --cluster "redis://127.0.0.1:$redis_port" --node a)
read -r b port_b < <(start b "$db" --cluster "redis://127.0.0.1:$redis_port" --node b)
read -r c port_c < <(start c "$db" --cluster "redis://127.0.0.1:$redis_port" --node c)
pids+=("$a" "$b" "$c")
.build/release/moonrunner-bench load --port "$port_a" --spectator-port "$port_b" --server-pid "$a" --prefix cluster "$@"
echo "node b (the spectators' node) used $(ps -o times= -p "$b" | tr -d ' ') s of CPU; node c (idle, reading the bus) $(ps -o times= -p "$c" | tr -d ' ') s"
