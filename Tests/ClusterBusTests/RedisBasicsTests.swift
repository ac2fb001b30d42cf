@testable import ClusterBus
import Foundation
import MoonRunnerTestSupport
import Testing

/// The pieces under the bus: URLs, stream ids, the connection's replies, the publish script's counter.
struct RedisBasicsTests {
    @Test func redisURLsParse() throws {
        #expect(try RedisEndpoint(url: "redis://127.0.0.1:6390") == RedisEndpoint(host: "127.0.0.1", port: 6390))
        #expect(try RedisEndpoint(url: "redis://cache.local") == RedisEndpoint(host: "cache.local", port: 6379))
        #expect(try RedisEndpoint(url: "redis://:s3cret@[::1]:7000/2")
                == RedisEndpoint(host: "::1", port: 7000, database: 2, password: "s3cret"))
        #expect(try RedisEndpoint(url: "redis://:s3cret@[::1]:7000/2").description == "redis://[::1]:7000/2")
        for bad in ["http://x:1", "redis://", "redis://h:0", "redis://h:99999", "redis://h:port", "redis://h/x", "redis://[::1"] {
            #expect(throws: BusError.self, "\(bad)") { try RedisEndpoint(url: bad) }
        }
    }

    @Test func streamIDsParseAndOrder() {
        #expect(StreamID("1700000000000-3") == StreamID(milliseconds: 1_700_000_000_000, sequence: 3))
        #expect(StreamID("5") == StreamID(milliseconds: 5, sequence: 0))
        #expect(StreamID("1-2")!.description == "1-2")
        for bad in ["", "-", "1-", "a-1", "1-2-3", "-1"] { #expect(StreamID(bad) == nil, "\(bad)") }
        #expect(StreamID("9-99")! < StreamID("10-0")!)
        #expect(StreamID("10-1")! > StreamID("10-0")!)
        #expect(StreamID.zero < StreamID("0-1")!)
    }

    @Test(.enabled(if: RedisTestServer.isAvailable, Comment(rawValue: RedisTestServer.skipReason)))
    func repliesComeBackAsValuesAndErrorsAsErrors() throws {
        let redis = try RedisTestServer.shared()
        let connection = try RedisConnection(endpoint: RedisEndpoint(url: redis.url), connectTimeout: 2, commandTimeout: 5)
        let key = "test:" + UUID().uuidString
        let binary: [UInt8] = [0, 255, 13, 10, 36, 42]  // NUL, CR LF and RESP markers survive
        #expect(try connection.command([Array("SET".utf8), Array(key.utf8), binary]) == .status("OK"))
        #expect(try connection.command("GET", key) == .string(binary))
        #expect(try connection.command("GET", key + ":none") == .null)
        #expect(try connection.command("STRLEN", key) == .integer(6))
        guard case .error(let message) = try connection.command("LPUSH", key, "x") else {
            Issue.record("LPUSH on a string was not an error")
            return
        }
        #expect(message.hasPrefix("WRONGTYPE"))
        for index in 0..<3 { try connection.append(["RPUSH", key + ":list", String(index)].map { Array($0.utf8) }) }
        #expect(connection.pendingReplies == 3)
        #expect(try (0..<3).map { _ throws(BusError) in try connection.reply() } == [.integer(1), .integer(2), .integer(3)])
        #expect(try connection.command("LRANGE", key + ":list", "0", "-1") == .array([.string([48]), .string([49]), .string([50])]))
        _ = try connection.command("DEL", key, key + ":list")
    }

    @Test(.enabled(if: RedisTestServer.isAvailable, Comment(rawValue: RedisTestServer.skipReason)))
    func anEntrySentAgainWithTheSameNumberIsAddedOnce() throws {
        let (connection, sha) = try connectionWithPublishScript()
        let streams = uniqueStreams("dup", "other", "all"), counter = Array(("test:counter:" + UUID().uuidString).utf8)
        let configuration = ClusterBusConfiguration(node: "a")
        func send(_ sequences: [UInt64]) throws -> RedisValue {
            let entries = sequences.map {
                PackedEntry(stream: streams[Int($0) % 2], alsoTo: streams[2], number: $0,
                            events: [OutgoingEntry(stream: streams[Int($0) % 2], alsoTo: streams[2], fields: entry($0), sequence: $0)][...])
            }
            return try connection.command(PublishScript.arguments(sha: sha, entries: entries[...], counterKey: counter,
                                                                  nodeField: Array("_node".utf8), node: Array("a".utf8),
                                                                  configuration: configuration))
        }
        #expect(try send([1, 2]) == .array([.integer(1), .integer(1)]))
        // A batch resent after a broken connection: 1 and 2 are in already, 3 and 4 are new.
        #expect(try send([1, 2, 3, 4]) == .array([.integer(0), .integer(0), .integer(1), .integer(1)]))
        #expect(try send([4]) == .array([.integer(0)]))
        let stream = streams[1]
        // A key of the wrong type refuses its entry (6 goes to `dup`); the others of the call still go in.
        _ = try connection.command("SET", streams[0], "not a stream")
        guard case .array(let mixed) = try send([5, 6]), mixed.count == 2, case .error(let message) = mixed[1] else {
            Issue.record("a refused entry did not come back as an error")
            return
        }
        #expect(message.hasPrefix("WRONGTYPE"))
        #expect(mixed[0] == .integer(1))
        // Odd numbers went to `other`: 1, 3, 5. Each entry has one id in its stream and in `all`.
        #expect(try connection.command("XLEN", stream) == .integer(3))
        // 6 was refused by its own stream after it went into `all` (documented: a refusal may leave it there).
        #expect(try connection.command("XLEN", streams[2]) == .integer(6))
        let own = try connection.command("XRANGE", stream, "-", "+").elements?.compactMap { $0.elements?.first?.text }
        let all = try connection.command("XRANGE", streams[2], "-", "+").elements?.compactMap { $0.elements?.first?.text }
        #expect(own != nil && Set(own!).isSubset(of: Set(all ?? [])))
        let ttl = try connection.command("PTTL", stream)
        #expect({ if case .integer(let ms) = ttl { ms > 0 } else { false } }(), "the stream expires: \(ttl)")
    }
}
