@testable import ClusterBus
import Foundation
import MoonRunnerTestSupport

/// What a bus under test delivered and noticed, with waits for what a test expects. The callback can be held
/// (``hold()``): the reader thread then stays inside it, reading nothing more, until ``release()``.
final class BusRecorder: @unchecked Sendable {
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var entries: [BusEntry] = []
    private var notices: [ClusterBusNotice] = []
    private var holding = false
    private var held = false

    /// The callback for ``ClusterBus``'s `onEntries`.
    var onEntries: @Sendable ([BusEntry]) -> Void {
        { [self] batch in
            condition.lock()
            entries += batch
            condition.broadcast()
            while holding {
                held = true
                condition.broadcast()
                condition.wait()
            }
            held = false
            condition.unlock()
        }
    }

    /// The callback for ``ClusterBus``'s `onNotice`.
    var onNotice: @Sendable (ClusterBusNotice) -> Void {
        { [self] notice in
            condition.lock()
            notices.append(notice)
            condition.broadcast()
            condition.unlock()
        }
    }

    /// From now on the callback keeps the reader inside it after recording a batch.
    func hold() {
        condition.lock()
        holding = true
        condition.unlock()
    }

    /// Lets a held reader go on.
    func release() {
        condition.lock()
        holding = false
        condition.broadcast()
        condition.unlock()
    }

    /// Everything delivered so far.
    var all: [BusEntry] {
        condition.lock()
        defer { condition.unlock() }
        return entries
    }

    /// The `n` values delivered from `stream`, in order.
    func values(in stream: String) -> [String] {
        all.filter { $0.stream == stream }.map { String(decoding: $0["n"] ?? [], as: UTF8.self) }
    }

    /// Waits until `predicate` holds for the entries (or the notices); throws on timeout with what came.
    func waitUntil(_ what: String, timeout: Double = 20,
               _ predicate: ([BusEntry], [ClusterBusNotice]) -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        // Woken by entries and notices; the predicate may also read a bus's statistics, which change without a
        // signal here: so look again every 20 ms too.
        while !predicate(entries, notices) {
            guard Date() < deadline else {
                throw Timeout(description: "timed out waiting for \(what); got \(entries.count) entries: "
                    + entries.suffix(20).map { "\($0.stream)#\(String(decoding: $0["n"] ?? [], as: UTF8.self))" }
                        .joined(separator: " ") + "; notices: \(notices.suffix(6))")
            }
            _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.02)))
        }
    }

    /// Waits until `stream` has delivered `count` entries.
    func waitFor(_ count: Int, in stream: String, timeout: Double = 20) throws {
        try waitUntil("\(count) entries in \(stream)", timeout: timeout) { entries, _ in
            entries.filter { $0.stream == stream }.count >= count
        }
    }

    /// Waits until the reader is held inside the callback.
    func awaitHeld(timeout: Double = 20) throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !held {
            guard condition.wait(until: deadline) else { throw Timeout(description: "the reader never got held") }
        }
    }

    /// A wait that ran out.
    struct Timeout: Error, CustomStringConvertible {
        let description: String
    }
}

/// A configuration for tests: node `node`, quick reconnects.
func testConfiguration(_ node: String) -> ClusterBusConfiguration {
    var configuration = ClusterBusConfiguration(node: node)
    configuration.reconnectInitialDelay = 0.02
    configuration.reconnectMaximumDelay = 0.2
    configuration.connectTimeout = 1
    configuration.readBlockTimeout = 5
    return configuration
}

/// A connection to the tests' Redis with the publish script loaded, and the script's SHA1.
func connectionWithPublishScript() throws -> (RedisConnection, [UInt8]) {
    let redis = try RedisTestServer.shared()
    let connection = try RedisConnection(endpoint: RedisEndpoint(url: redis.url), connectTimeout: 2, commandTimeout: 5)
    guard case .string(let sha) = try connection.call(["SCRIPT", "LOAD", PublishScript.source].map { Array($0.utf8) }) else {
        throw ScriptNotLoaded()
    }
    return (connection, sha)
}

/// `SCRIPT LOAD` answered something other than a SHA1.
struct ScriptNotLoaded: Error {}

/// Stream names of one test (tests share a Redis).
func uniqueStreams(_ names: String...) -> [String] {
    let tag = UUID().uuidString.prefix(8)
    return names.map { "test:\(tag):\($0)" }
}

/// Fields with one value `n`.
func entry(_ value: some CustomStringConvertible) -> [(String, [UInt8])] {
    [("n", Array(value.description.utf8))]
}
