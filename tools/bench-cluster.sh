#!/usr/bin/env bash
# The cluster benchmark (issues 15 and 30): a throwaway Redis and PostgreSQL on loopback, then
#   1. one node (`serve --db postgres://…`, no bus): runners and their spectators on it;
#   2. three nodes (`--cluster redis://…`): runners on node a, their spectators on node b;
#   3. the same total load spread over 1, 2 and 3 nodes (a cluster of its own each): node i's share of the
#      runners, their spectators on node i+1 (so with 2 and 3 nodes every spectator is remote), one
#      moonrunner-bench load per node at once; per node: CPU, events delivered, bus events and stream entries
#      read per second (`stats:`), and CPU per delivered event;
# each with the same load (moonrunner-bench load), printing its figures: fixes/s, events/s, loss and the
# spectators' latency (p50/p99), so (2) minus (1) is what the bus costs a remote spectator.
#   tools/bench-cluster.sh [moonrunner-bench load flags]   default: --runners 200 --rate 10 --spectators 200 --duration 10
#   (part 3 takes --runners, --spectators, --rate and --duration from them, or the defaults)
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

# 3. The same total load over 1, 2 and 3 nodes.
flag() { local name=$1 default=$2; shift 2; while (($#)); do [[ $1 == "--$name" ]] && { echo "$2"; return; }; shift; done; echo "$default"; }
runners=$(flag runners 200 "$@") spectators=$(flag spectators 200 "$@") rate=$(flag rate 10 "$@") duration=$(flag duration 10 "$@")
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
stats() { # PORT: the node's stats: line
    exec 3<>"/dev/tcp/127.0.0.1/$1"
    printf 'stats:\n' >&3
    local line
    IFS= read -r -t 5 line <&3 || true
    exec 3>&-
    echo "$line"
}
counter() { sed -n "s/.* $1=\([0-9]*\).*/\1/p" <<<"$2"; }
hz=$(getconf CLK_TCK)
for n in 1 2 3; do
    echo "=== $n node(s), one cluster: $runners runners at $rate fix/s and $spectators spectators in all, node i's runners watched on node i+1"
    db=$(database "spread$n")
    nodes=() ports=()
    for ((i = 0; i < n; i++)); do
        read -r pid port < <(start "spread$n-$i" "$db" --cluster "redis://127.0.0.1:$redis_port" --node "n$i" --cluster-name "spread$n")
        pids+=("$pid"); nodes+=("$pid"); ports+=("$port")
    done
    before=() read_before=() received_before=()
    for ((i = 0; i < n; i++)); do
        before+=("$(cpu_ticks "${nodes[i]}")")
        line=$(stats "${ports[i]}")
        read_before+=("$(counter bus_entries_read "$line")") received_before+=("$(counter bus_received "$line")")
    done
    started=$(date +%s.%N)
    loads=()
    for ((i = 0; i < n; i++)); do
        .build/release/moonrunner-bench load --port "${ports[i]}" --spectator-port "${ports[(i + 1) % n]}" \
            --server-pid "${nodes[i]}" --prefix "s${n}n$i" --runners $((runners / n)) --spectators $((spectators / n)) \
            --rate "$rate" --duration "$duration" >"$work/load-$n-$i.txt" 2>&1 &
        loads+=($!)
    done
    wait "${loads[@]}"
    seconds=$(echo "$(date +%s.%N) - $started" | bc -l)
    total_cpu=0 total_events=0
    for ((i = 0; i < n; i++)); do
        # Node i delivers the events of load i-1's runners (its spectators' runners).
        from=$(((i + n - 1) % n))
        events=$(sed -n 's/^summary: .*fixes\/s, \([0-9]*\) events\/s.*/\1/p' "$work/load-$n-$from.txt")
        events=$((${events:-0} * duration))
        cpu=$(echo "($(cpu_ticks "${nodes[i]}") - ${before[i]}) / $hz" | bc -l)
        line=$(stats "${ports[i]}")
        entries=$(echo "($(counter bus_entries_read "$line") - ${read_before[i]}) / $seconds" | bc -l)
        received=$(echo "($(counter bus_received "$line") - ${received_before[i]}) / $seconds" | bc -l)
        printf 'node %d: CPU %.2f s, events delivered %d, bus read %.0f events/s in %.0f entries/s, CPU per delivered event %.1f us\n' \
            "$i" "$cpu" "$events" "$received" "$entries" "$(echo "$cpu * 1000000 / ($events + 1)" | bc -l)"
        total_cpu=$(echo "$total_cpu + $cpu" | bc -l) total_events=$((total_events + events))
        grep '^summary:' "$work/load-$n-$i.txt" | sed "s/^/  load $i: /"
    done
    printf 'all %d node(s): CPU %.2f s for %d events delivered: %.1f us per event\n' "$n" "$total_cpu" "$total_events" \
        "$(echo "$total_cpu * 1000000 / ($total_events + 1)" | bc -l)"
    for pid in "${nodes[@]}"; do kill -TERM "$pid"; done
    for pid in "${nodes[@]}"; do while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done; done
done
