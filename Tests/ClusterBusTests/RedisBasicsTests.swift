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
        let redis = try RedisTestServer.shared()
        let connection = try RedisConnection(endpoint: RedisEndpoint(url: redis.url), connectTimeout: 2, commandTimeout: 5)
        guard case .string(let sha) = try connection.call(["SCRIPT", "LOAD", PublishScript.source].map { Array($0.utf8) }) else {
            Issue.record("no SHA from SCRIPT LOAD")
            return
        }
        let stream = uniqueStreams("dup")[0], counter = Array(("test:counter:" + UUID().uuidString).utf8)
        let configuration = ClusterBusConfiguration(node: "a")
        func send(_ sequence: UInt64) throws -> RedisValue {
            let entry = OutgoingEntry(stream: stream, alsoTo: nil, fields: entry(sequence), sequence: sequence)
            return try connection.command(PublishScript.arguments(sha: sha, entry: entry, counterKey: counter,
                                                                  nodeField: Array("_node".utf8), node: Array("a".utf8),
                                                                  configuration: configuration))
        }
        guard case .string = try send(1), case .string = try send(2) else {
            Issue.record("the first sends added nothing")
            return
        }
        #expect(try send(1) == .null, "a resend of 1 is skipped")
        #expect(try send(2) == .null)
        guard case .string = try send(3) else {
            Issue.record("3 was not added")
            return
        }
        #expect(try connection.command("XLEN", stream) == .integer(3))
        let ttl = try connection.command("PTTL", stream)
        #expect({ if case .integer(let ms) = ttl { ms > 0 } else { false } }(), "the stream expires: \(ttl)")
    }
}
