import Reactor
import ClusterBus
import Foundation
import Locking
import ToolSupport
#if canImport(Glibc)
import Glibc
#endif

let busBenchHelp = """
usage: moonrunner-bench bus [--redis redis://HOST:PORT] [--events N] [--rate N] [--partitions N] [--runners N] [--size BYTES]

Two cluster-bus instances in this process (nodes a and b) through one Redis: a publishes, b reads. As the
server does, each event is a runner's (one of --runners, default 1000, in turn) and goes to its runner's
partition stream (one of --partitions, default 64), one in ten also to the cluster stream (as a runner's
pace at 10 a second is summarized there once a second); b reads every partition and the cluster stream (a
node with followers of every runner) and counts what it reads from the partitions. An event carries a --size byte payload (default 200, about a pace:
line) and the time it was published.
Two phases of --events events each (default 400000):
  saturated: a publishes as fast as the queue takes (waiting when it is full): throughput, and the latency
             events see in a full queue;
  paced:     a publishes --rate events per second (default 200000): the latency a remote spectator adds.
Reports events/s, publish-to-receive latency (p50, p99, max) and how many events a stream entry packed.
Without --redis, a throwaway redis-server (no persistence) is started on a free loopback port. Build with
-c release for meaningful figures.
"""

/// `moonrunner-bench bus …` (`arguments` are the words after `bus`).
func runBusBenchmark(arguments: [String]) -> Int32 {
    let events: Int, rate: Int, partitions: Int, runners: Int, size: Int
    let url: String?
    do {
        var options = try Options(arguments)
        if options.wantsHelp {
            print(busBenchHelp)
            return 0
        }
        events = try options.number("events", default: 400_000)
        rate = try options.number("rate", default: 200_000)
        partitions = try options.number("partitions", default: ClusterStreams.defaultPartitions)
        runners = try options.number("runners", default: 1_000)
        size = try options.number("size", default: 200)
        url = options.string("redis")
        try options.finish()
        guard events > 0, rate > 0, partitions > 0, runners > 0, size >= 0 else {
            throw Options.UsageError(description: "--events, --rate, --partitions and --runners must be positive")
        }
    } catch {
        printError("moonrunner-bench bus: \(error)\n\n\(busBenchHelp)")
        return 2
    }
    var spawned: BenchRedis?
    let redisURL: String
    if let url {
        redisURL = url
    } else {
        do {
            let redis = try BenchRedis.start()
            spawned = redis
            redisURL = redis.url
        } catch {
            printError("moonrunner-bench bus: \(error)")
            return 1
        }
    }
    defer { spawned?.stop() }

    let layout = ClusterStreams(namespace: "bench:" + String(UInt32.random(in: 0...UInt32.max), radix: 16),
                                partitions: partitions)
    let streams = (0..<runners).map { layout.stream(of: "r\($0)") }
    let receiver = BusBenchReceiver(ignoring: layout.cluster)
    do {
        let a = try ClusterBus(url: redisURL, configuration: ClusterBusConfiguration(node: "bench-a"), onEntries: { _ in })
        let b = try ClusterBus(url: redisURL, configuration: ClusterBusConfiguration(node: "bench-b"),
                               onEntries: receiver.receive)
        defer { a.close(); b.close() }
        b.setSubscriptions(Set(streams).union([layout.cluster]))
        guard b.awaitSubscriptions(timeout: 10) else {
            printError("moonrunner-bench bus: cannot read from \(redisURL)")
            return 1
        }
        print("bus: \(events) events per phase, \(runners) runners over \(partitions) partitions (a tenth also in the cluster stream), \(size) B payload, "
              + "Redis \(redisURL)\(spawned == nil ? "" : " (started for this run)")")
        let payload = [UInt8](repeating: UInt8(ascii: "x"), count: size)
        for (phase, pace) in [("saturated", nil as Int?), ("paced", rate)] {
            receiver.reset(expecting: events)
            let before = a.statistics.publishedEntries
            let started = LoadClock.monotonicSeconds()
            var full = 0
            for index in 0..<events {
                if let pace {
                    let due = started + Double(index) / Double(pace)
                    while LoadClock.monotonicSeconds() < due { usleep(50) }
                }
                let fields: [(String, [UInt8])] = [("t", Array(String(BusBenchReceiver.microseconds()).utf8)),
                                                   ("line", payload)]
                while !a.publish(stream: streams[index % runners], fields: fields) {
                    full += 1
                    usleep(100)  // back-pressure: the queue is full
                }
                while index % 10 == 0 && !a.publish(stream: layout.cluster, fields: fields) {
                    full += 1
                    usleep(100)
                }
            }
            guard receiver.waitForAll(timeout: 120) else {
                printError("moonrunner-bench bus: \(phase): only \(receiver.count) of \(events) events arrived")
                return 1
            }
            let seconds = LoadClock.monotonicSeconds() - started
            let latency = receiver.histogram
            let packed = Double(events) / Double(max(1, a.statistics.publishedEntries - before))
            print(String(format: "%@: %.0f events/s, latency p50 %.2f ms, p99 %.2f ms, max %.2f ms (%.1f events per entry%@)",
                         phase, Double(events) / seconds, Double(latency.percentile(0.5)) / 1000,
                         Double(latency.percentile(0.99)) / 1000, Double(latency.maximum) / 1000, packed,
                         full > 0 ? ", queue full \(full) times" : ""))
        }
    } catch {
        printError("moonrunner-bench bus: \(error)")
        return 1
    }
    return 0
}

/// What b received: a latency histogram and a count, filled on b's reader thread.
final class BusBenchReceiver: Sendable {
    /// What the reader thread fills and the benchmark waits on.
    private struct Tally {
        var latencies = LatencyHistogram()
        var received = 0
        var expected = 0
    }

    private let tally = Locked(Tally())
    /// The stream whose copies are not counted: a node reading a runner's partition takes its events there.
    private let ignored: String

    init(ignoring stream: String) {
        ignored = stream
    }

    /// Monotonic microseconds (both buses are in this process: one clock).
    static func microseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }

    var receive: @Sendable ([BusEntry]) -> Void {
        { [tally, ignored] batch in
            let now = Self.microseconds()
            let done = tally.withLock { tally in
                for entry in batch where entry.stream != ignored {
                    guard let sent = entry["t"].flatMap({ Int64(String(decoding: $0, as: UTF8.self)) }) else { continue }
                    tally.latencies.record(now - sent)
                    tally.received += 1
                }
                return tally.received >= tally.expected
            }
            if done { tally.broadcast() }
        }
    }

    func reset(expecting count: Int) {
        tally.withLock { $0 = Tally(expected: count) }
    }

    func waitForAll(timeout: Double) -> Bool {
        tally.withLock(when: { $0.received >= $0.expected }, before: Date(timeIntervalSinceNow: timeout)) { _, done in done }
    }

    var count: Int { tally.withLock { $0.received } }

    var histogram: LatencyHistogram { tally.withLock { $0.latencies } }
}

/// A throwaway `redis-server` for the benchmark: a free loopback port, no persistence, its log in a
/// temporary directory; stopped and removed by ``stop()``.
struct BenchRedis {
    let url: String
    private let server: SpawnedServer
    private let directory: String

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func start() throws -> BenchRedis {
        guard let executable = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw Failure(description: "no redis-server installed (apt-get install redis-server), or pass --redis")
        }
        let directory = NSTemporaryDirectory() + "moonrunner-bench-redis-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let port = try freePort()
        let server = try SpawnedServer(executable: executable, arguments: [
            "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", directory,
            "--daemonize", "no", "--logfile", "",
        ], logPath: directory + "/redis.log")
        let endpoint = RedisEndpoint(host: "127.0.0.1", port: Int(port))
        // Polls: redis-server says nothing on stderr (the log) that could be awaited more simply.
        let deadline = LoadClock.monotonicSeconds() + 10
        while LoadClock.monotonicSeconds() < deadline && server.isRunning {
            if let redis = try? RedisConnection(endpoint: endpoint, connectTimeout: 1, commandTimeout: 1),
               (try? redis.command("PING")) == .status("PONG") {
                return BenchRedis(url: endpoint.description, server: server, directory: directory)
            }
            usleep(20_000)
        }
        server.terminate()
        _ = server.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
        throw Failure(description: "redis-server on port \(port) did not answer PING")
    }

    func stop() {
        server.terminate()
        _ = server.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }

    private static func freePort() throws -> UInt16 {
        // Bound to port 0, then released when the socket goes at the end of this line.
        try ListeningSocket(host: "127.0.0.1", port: 0).port
    }
}
