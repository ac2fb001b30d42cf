import Foundation
import ToolSupport
import Broadcaster
import PostgresRunStore
import RunCore
import RunStore
import Wire

let serveHelp = """
usage: moonrunner serve [options]

Runs the live broadcast server until SIGINT/SIGTERM (then open runs are ended and saved, the store is
flushed, and it exits 0). Logs one line per happening to stderr.

  --host ADDR             address to listen on (default 127.0.0.1)
  --port N                TCP port, 0 for any free one (default 4242)
  --db PATH|URL           SQLite file (default moonrunner.sqlite); :memory: keeps nothing;
                          postgres://USER@HOST:PORT/DB a PostgreSQL database (several servers may share one)
  --loops N               event loops, one thread each; runners are shared out among them by name
                          (default: the number of cores this process may run on)
  --cluster redis://HOST:PORT  be one node of a cluster: events to and from the other nodes go through
                          this Redis, and runs are leased there; needs a shared --db postgres://...
  --node NAME             this node's name in the cluster and its log (default HOST:PORT)
  --cluster-name NAME     the cluster's name, the prefix of every key and stream it keeps in Redis, so that
                          clusters sharing one Redis stay apart (default moonrunner; the same on every node)
  --lease S               seconds a run's lease lasts unless its node renews it: how long a runner
                          whose node died waits before another node takes its run over (default 3)
  --bus-queue N           events waiting for Redis at most; past half of it the node reads no more fixes
                          until a quarter is left, so a slow or paused Redis slows its runners instead of
                          losing events (default 40000)
  --max-connections N     line-protocol connections at once; the next gets err:busy (default 20000)
  --max-connections-per-address N|off  connections at once from one source address, line protocol
                          and HTTP together; the next gets err:busy or 503 (default 256, a venue's NAT);
                          loopback is not capped (a reverse proxy, a load test) unless --cap-loopback on
  --cap-loopback on|off   whether that cap counts loopback connections too (default off)
  --idle-timeout S        seconds a silent new connection may stay (default 30)
  --lines-per-second N    sustained lines per connection per second; past it reading pauses (default 20000)
  --line-burst N          lines a connection may send at once before the rate applies (default 50000)
  --errors-per-second N   error replies per second before err:flood and close (default 200)
  --high-water BYTES      pending output above which pace: lines are conflated (default 65536)
  --hard-limit BYTES      pending output above which a slow client is closed (default 4194304); the
                          connection of a runner with a run going only after --runner-stall, or at 4x
  --runner-stall S        seconds such a runner's connection may read nothing, over the hard limit,
                          before it is closed; its run goes on (default 60)
  --output-budget MIB     pending output and partly received requests over all connections together,
                          in MiB; past it the clients furthest behind are closed, oldest first, never
                          a runner with a run going (default 256)
  --cheers-per-second N   cheers (msg:, the page's button) one connection may send a second, 5 s worth
                          at once; past it err:busy / 429 (default 1)
  --cheers-per-address N  ... from one source address, all its connections together (default 10)
  --cheers-per-runner N   cheers one runner gets a second from one address; past it a cheer skips the
                          runner (default 5)
  --write-per-turn BYTES  bytes written to one client per loop turn (default 65536)
  --resume-window S       seconds a disconnected runner's run stays open (default 600)
  --max-followed N        runners one connection may follow by name (default 1000)
  --http-port N|off       HTTP port for the web page, its event stream and JSON API, same host;
                          0 for any free one, off for none (default 8080)
  --http-header-timeout S seconds a client may take to send a whole request (default 10)
  --http-idle-timeout S   seconds an idle keep-alive HTTP connection stays open (default 60)
  --max-http-connections N  HTTP connections at once, event streams included; the next gets 503
                          (default 20000). Both limits are fitted within the open-file limit at start:
                          the soft limit is raised to the hard one, and if that is still short of both
                          plus a reserve (store, loops, listeners) the larger is lowered first, logged
  --http-max-head BYTES   request line and headers at most (431 past it; default 8192)
  --http-max-body BYTES   request body at most (413 past it; default 16384)
  --device-max-body BYTES a phone app's request body (/osmand, /owntracks: a queue of positions) at most
                          (413 past it; default 1048576)
  --sse-heartbeat S       seconds of silence before an event stream gets a comment heartbeat (default 15)
  --sse-backlog N         events kept per runner for event streams reconnecting with Last-Event-ID
                          (default 32)
  --lines-per-turn N      lines one connection has handled per loop turn before the others' turn
                          (default 256)
  --lines-per-loop-turn N lines one loop handles per turn over all its connections; the rest wait
                          their turn, in order (default 4096)
  --read-ahead BYTES      bytes read ahead of what a connection had handled, at least the longest
                          line, 4096 (default 16384)
  --receive-buffer BYTES  the kernel's receive buffer per line connection, or auto for the kernel's own
                          growing one (default 32768)
  --memory-return S       seconds between handing freed memory back to the system, or off (default 10)
  --store-high-water N    writes waiting for the store above which reading stops (default 50000)
  --store-low-water N     ... and below which it resumes (default 20000)
  --store-batch-delay S   seconds the store waits after a write for more before committing one batch
                          (default 0.005); replies that say a change was stored come after the commit
  --device-idle S         seconds without a position after which a run fed by a phone app ends, saved
                          (default 600)
  --device-failures N     wrong device tokens, keys and share tokens a minute, per source address and per
                          runner, before their answers slow down; past 5 times it the address is
                          refused for the minute; a connection is closed after N; a right key or
                          token is always taken (at least 1; default 20)
  --course NAME           a race: every run follows course NAME (moonrunner course add) unless its runner
                          chose another (course:NAME) or none (course:off)
  --off-course M          metres from the course, for 30 s (15 s at twice as far), that make an off_course alert (default 50)
  --max-accuracy M        fixes at or above this accuracy are filtered (default 20)
  --max-speed MPS         implied speeds above this are jumps (default 12.5)
  --tiles URL|off         map tiles under the pages' tracks: a {z}/{x}/{y} URL template (default
                          OpenStreetMap's, https://tile.openstreetmap.org/{z}/{x}/{y}.png); off for none
  --tiles-attribution TEXT  the tiles' attribution shown on the map (default OpenStreetMap's)
  --tiles-private on|off  whether a private runner's pages (share links) load tiles, telling the tile
                          server where the runner is (default off)
  --leaflet DIR           where Leaflet's files are (default /usr/share/javascript/leaflet, Debian's
                          libjs-leaflet); without them the pages draw tracks without a street map
  --quiet                 no log lines
"""

/// A port number option's value.
func parsePort(_ text: String, option: String) throws(Options.UsageError) -> UInt16 {
    guard let port = UInt16(text) else { throw Options.UsageError(description: "--\(option): not a port: \(text)") }
    return port
}

/// The cores the process may run on: its CPU affinity (`taskset -c 0 moonrunner serve` gets one loop), else
/// the cores online.
func usableCores() -> Int {
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
       let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) {
        let hex = line.dropFirst("Cpus_allowed:".count).filter { $0.isHexDigit }
        let count = hex.reduce(0) { $0 + (Int(String($1), radix: 16) ?? 0).nonzeroBitCount }
        if count > 0 { return count }
    }
    return max(1, ProcessInfo.processInfo.activeProcessorCount)
}

/// `moonrunner serve`.
func runServeCommand(arguments: [String]) -> Int32 {
    var configuration = ServerConfiguration()
    var storeConfiguration = StoreConfiguration()
    let path: String
    let quiet: Bool
    let loops: Int
    var mapNotice: String?
    var cluster: ClusterSettings?
    var raceCourse: String?
    do {
        var options = try Options(arguments, switches: ["quiet"])
        if options.wantsHelp {
            print(serveHelp)
            return 0
        }
        configuration.host = options.string("host") ?? configuration.host
        configuration.port = try options.number("port", default: configuration.port)
        path = options.string("db") ?? StoreDefaults.path
        loops = try options.number("loops", default: usableCores())
        guard (1...256).contains(loops) else { throw Options.UsageError(description: "--loops: from 1 to 256") }
        if let url = options.string("cluster") {
            guard PostgresLocation.isPostgresURL(path) else {
                throw Options.UsageError(description: "--cluster needs a store the nodes share: --db postgres://...")
            }
            var settings = ClusterSettings(redisURL: url, node: options.string("node") ?? "")
            settings.leaseSeconds = try options.number("lease", default: settings.leaseSeconds)
            guard settings.leaseSeconds >= 0.3 else { throw Options.UsageError(description: "--lease: at least 0.3 s") }
            settings.publishQueueCapacity = try options.number("bus-queue", default: settings.publishQueueCapacity)
            guard settings.publishQueueCapacity >= 10 else { throw Options.UsageError(description: "--bus-queue: at least 10") }
            if let name = options.string("cluster-name") {
                guard Command.isValidName(name) else {
                    throw Options.UsageError(description: "--cluster-name: 1-32 of A-Z a-z 0-9 _ . -, not \(name)")
                }
                settings.name = name
            }
            cluster = settings
        } else if ["node", "lease", "cluster-name", "bus-queue"].contains(where: { options.string($0) != nil }) {
            throw Options.UsageError(
                description: "--node, --lease, --cluster-name and --bus-queue are for a cluster node: add --cluster redis://...")
        }
        configuration.maximumConnections = try options.number("max-connections", default: configuration.maximumConnections)
        if let text = options.string("max-connections-per-address") {
            guard text == "off" || Int(text).map({ $0 >= 1 }) == true else {
                throw Options.UsageError(description: "--max-connections-per-address: a number (at least 1) or off, not \(text)")
            }
            configuration.maximumConnectionsPerAddress = Int(text)
        }
        switch options.string("cap-loopback") ?? "off" {
        case "on": configuration.capsLoopbackPerAddress = true
        case "off": configuration.capsLoopbackPerAddress = false
        case let other: throw Options.UsageError(description: "--cap-loopback: on or off, not \(other)")
        }
        configuration.idleTimeout = try options.number("idle-timeout", default: configuration.idleTimeout)
        configuration.linesPerSecond = try options.number("lines-per-second", default: configuration.linesPerSecond)
        configuration.lineBurst = try options.number("line-burst", default: configuration.lineBurst)
        configuration.errorsPerSecond = try options.number("errors-per-second", default: configuration.errorsPerSecond)
        configuration.outputHighWaterMark = try options.number("high-water", default: configuration.outputHighWaterMark)
        configuration.outputHardLimit = try options.number("hard-limit", default: configuration.outputHardLimit)
        configuration.writeBytesPerTurn = try options.number("write-per-turn", default: configuration.writeBytesPerTurn)
        configuration.resumeWindow = try options.number("resume-window", default: configuration.resumeWindow)
        configuration.maximumFollowedRunners = try options.number("max-followed",
                                                                  default: configuration.maximumFollowedRunners)
        configuration.tracker.filter.maximumAccuracy = try options.number("max-accuracy",
                                                                          default: configuration.tracker.filter.maximumAccuracy)
        configuration.tracker.filter.maximumSpeed = try options.number("max-speed",
                                                                       default: configuration.tracker.filter.maximumSpeed)
        if let http = options.string("http-port") {
            configuration.httpPort = http == "off" ? nil : try parsePort(http, option: "http-port")
        }
        configuration.httpHeaderTimeout = try options.number("http-header-timeout",
                                                             default: configuration.httpHeaderTimeout)
        configuration.httpIdleTimeout = try options.number("http-idle-timeout", default: configuration.httpIdleTimeout)
        configuration.maximumHTTPConnections = try options.number("max-http-connections",
                                                                  default: configuration.maximumHTTPConnections)
        configuration.httpLimits.maximumHeadBytes = try options.number("http-max-head",
                                                                       default: configuration.httpLimits.maximumHeadBytes)
        configuration.httpLimits.maximumBodyBytes = try options.number("http-max-body",
                                                                       default: configuration.httpLimits.maximumBodyBytes)
        let deviceBody: Int = try options.number("device-max-body", default: ServerConfiguration.deviceBatchBytes)
        configuration.httpLimits.bodyAllowances = ["/osmand": deviceBody, "/owntracks": deviceBody]
        configuration.eventStreamHeartbeat = try options.number("sse-heartbeat", default: configuration.eventStreamHeartbeat)
        configuration.eventBacklog = try options.number("sse-backlog", default: configuration.eventBacklog)
        configuration.linesPerTurn = try options.number("lines-per-turn", default: configuration.linesPerTurn)
        configuration.readAhead = try options.number("read-ahead", default: configuration.readAhead)
        configuration.linesPerLoopTurn = try options.number("lines-per-loop-turn", default: configuration.linesPerLoopTurn)
        // Zero would leave every line waiting for a turn that never has room.
        guard configuration.linesPerTurn >= 1, configuration.linesPerLoopTurn >= 1 else {
            throw Options.UsageError(description: "--lines-per-turn and --lines-per-loop-turn: at least 1")
        }
        // Less than a whole line and a long line's start would fill it: nothing more read, that line never ends.
        guard configuration.readAhead >= configuration.maximumLineLength else {
            throw Options.UsageError(description:
                "--read-ahead: at least the longest line, \(configuration.maximumLineLength) bytes")
        }
        if let text = options.string("receive-buffer") {
            guard text == "auto" || Int(text).map({ $0 >= 1024 }) == true else {
                throw Options.UsageError(description: "--receive-buffer: bytes (at least 1024) or auto, not \(text)")
            }
            configuration.socketReceiveBuffer = Int(text)
        }
        if let text = options.string("memory-return") {
            guard text == "off" || Double(text).map({ $0 > 0 }) == true else {
                throw Options.UsageError(description: "--memory-return: seconds (> 0) or off, not \(text)")
            }
            configuration.memoryReturnInterval = Double(text)
        }
        configuration.storeQueueHighWater = try options.number("store-high-water", default: configuration.storeQueueHighWater)
        configuration.storeQueueLowWater = try options.number("store-low-water", default: configuration.storeQueueLowWater)
        configuration.stalledRunnerTimeout = try options.number("runner-stall", default: configuration.stalledRunnerTimeout)
        configuration.outputBudget = try options.number("output-budget", default: configuration.outputBudget >> 20) << 20
        configuration.cheersPerSecond = try options.number("cheers-per-second", default: configuration.cheersPerSecond)
        configuration.cheersPerSecondPerAddress = try options.number("cheers-per-address",
                                                                     default: configuration.cheersPerSecondPerAddress)
        configuration.cheersPerSecondPerRunner = try options.number("cheers-per-runner",
                                                                    default: configuration.cheersPerSecondPerRunner)
        guard configuration.cheersPerSecond > 0, configuration.cheersPerSecondPerAddress > 0,
              configuration.cheersPerSecondPerRunner > 0, configuration.outputBudget > 0 else {
            throw Options.UsageError(description: "--cheers-per-*, --output-budget: more than 0")
        }
        storeConfiguration.maximumBatchDelay = try options.number("store-batch-delay",
                                                                  default: storeConfiguration.maximumBatchDelay)
        guard (0...10).contains(storeConfiguration.maximumBatchDelay) else {
            throw Options.UsageError(description: "--store-batch-delay: from 0 to 10 seconds")
        }
        configuration.deviceIdle = try options.number("device-idle", default: configuration.deviceIdle)
        raceCourse = options.string("course")
        if let raceCourse, !Wire.Command.isValidName(raceCourse) {
            throw Options.UsageError(description: "--course: not a course name: \(raceCourse)")
        }
        configuration.course.offCourseDistance = try options.number("off-course",
                                                                    default: configuration.course.offCourseDistance)
        guard configuration.course.offCourseDistance >= 10 else {
            throw Options.UsageError(description: "--off-course: at least 10 metres (GPS noise is a few)")
        }
        configuration.deviceFailuresPerMinute = try options.number("device-failures",
                                                                   default: configuration.deviceFailuresPerMinute)
        (configuration.streetMap, mapNotice) = try options.streetMap()
        quiet = options.flag("quiet")
        try options.finish()
    } catch {
        printError("moonrunner serve: \(error)\n\(serveHelp)")
        return 2
    }
    // Before the store starts its writer thread: signals are blocked per thread and inherited.
    let signals: ShutdownSignals
    do {
        signals = try ShutdownSignals()
    } catch {
        printError("moonrunner serve: \(error)")
        return 1
    }
    // Both ports before the store: a port that is taken must not leave a new database file behind.
    let listeners: ServerListeners
    do {
        listeners = try ServerListeners(configuration: configuration)
    } catch {
        printError("moonrunner serve: \(error.advice)")
        return 1
    }
    // Said once, as serving starts (not for a server that could not): how to get the street map.
    if let mapNotice, configuration.httpPort != nil, !quiet { printError(mapNotice) }
    let store: any RunStore
    do {
        store = try openStore(at: path, configuration: storeConfiguration)
    } catch {
        printError("moonrunner serve: cannot open the database \(PostgresLocation.redacted(path)): \(error)")
        return 1
    }
    if let raceCourse {
        do {
            guard let stored = try store.course(named: raceCourse) else {
                printError("moonrunner serve: no course \(raceCourse) in the database: moonrunner course add FILE --name \(raceCourse)")
                store.close()
                return 1
            }
            configuration.raceCourse = try stored.course()
        } catch {
            printError("moonrunner serve: course \(raceCourse): \(error)")
            store.close()
            return 1
        }
    }
    do {
        let group = try ServerGroup(configuration: configuration, store: store, loops: loops,
                                    log: ServerLog(isEnabled: !quiet), loop: signals.loop, listeners: listeners)
        if var cluster {
            if cluster.node.isEmpty { cluster.node = "\(configuration.host):\(group.port)" }
            try group.joinCluster(cluster)
        }
        signals.route(to: group)
        try group.run()
        store.close()
        return 0
    } catch {
        printError("moonrunner serve: \(error)")
        store.close()
        return 1
    }
}
