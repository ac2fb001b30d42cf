import ClusterBus
import Foundation
import MoonRunnerTestSupport
import Testing

/// Redis going away under the bus: servers of the tests' own, killed (SIGKILL) and started again on the same
/// port. The reader (node b) is held inside its callback while node a publishes, so that Redis holds entries
/// b has not read when it dies.
@Suite(.mayBlock, .serialized, .enabled(if: RedisTestServer.canStartServers, Comment(rawValue: RedisTestServer.skipReason)))
struct RestartTests {
    /// Publishes 0, lets b read it and holds b; publishes 1…9 (into Redis); kills Redis; publishes 10…19
    /// while it is down (they wait in a's queue); restarts Redis; lets b go. Returns what b read.
    private func readAcrossARestart(appendOnly: Bool) throws -> (values: [String], ids: [StreamID], notices: Int) {
        let redis = try RedisTestServer.start(appendOnly: appendOnly)
        defer { redis.stop() }
        let stream = uniqueStreams("run")[0]
        let seen = BusRecorder()
        let a = try ClusterBus(url: redis.url, configuration: testConfiguration("a"), onEntries: { _ in })
        let b = try ClusterBus(url: redis.url, configuration: testConfiguration("b"), onEntries: seen.onEntries,
                               onNotice: seen.onNotice)
        defer { a.close(); b.close() }
        b.subscribe(stream)
        #expect(b.awaitSubscriptions(timeout: 10))
        seen.hold()
        a.publish(stream: stream, fields: entry(0))
        try seen.awaitHeld()
        for index in 1..<10 { a.publish(stream: stream, fields: entry(index)) }
        #expect(a.flush(timeout: 10), "1…9 are in Redis")

        redis.kill()
        for index in 10..<20 { #expect(a.publish(stream: stream, fields: entry(index))) }
        seen.release()
        // b finds its connection dead and retries; a cannot send.
        try seen.waitUntil("b to notice Redis is gone") { _, notices in
            notices.contains { if case .disconnected(.reader, _, _) = $0 { true } else { false } }
        }
        #expect(!a.flush(timeout: 0.3), "nothing reaches a Redis that is down")
        #expect(a.statistics.queued == 10)

        try redis.restart()
        #expect(a.flush(timeout: 20), "the queue goes once Redis is back")
        try seen.waitFor(appendOnly ? 20 : 11, in: stream)
        #expect(b.statistics.reconnects >= 1)
        let entries = seen.all.filter { $0.stream == stream }
        return (entries.map { String(decoding: $0["n"]!, as: UTF8.self) }, entries.map(\.id),
                seen.all.count)
    }

    @Test func withoutPersistenceWhatRedisHeldUnreadIsLostAndTheRestComesOnce() throws {
        let read = try readAcrossARestart(appendOnly: false)
        // 1…9 died with Redis; 10…19 waited in the publisher's queue and came after the restart.
        #expect(read.values == ["0"] + (10..<20).map(String.init))
        #expect(zip(read.ids, read.ids.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func withAnAppendOnlyFileTheReaderResumesAfterItsLastIDWithoutGapsOrDuplicates() throws {
        let read = try readAcrossARestart(appendOnly: true)
        #expect(read.values == (0..<20).map(String.init))
        #expect(Set(read.ids).count == 20)
        #expect(zip(read.ids, read.ids.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func aFullQueueRefusesEntriesAndSaysWhenItHasDrained() throws {
        let redis = try RedisTestServer.start()
        defer { redis.stop() }
        let stream = uniqueStreams("full")[0]
        redis.kill()
        let notices = BusRecorder(), seen = BusRecorder()
        var configuration = testConfiguration("a")
        configuration.publishQueueCapacity = 5
        configuration.publishQueueLowWater = 2
        let a = try ClusterBus(url: redis.url, configuration: configuration, onEntries: { _ in },
                               onNotice: notices.onNotice)
        let b = try ClusterBus(url: redis.url, configuration: testConfiguration("b"), onEntries: seen.onEntries)
        defer { a.close(); b.close() }
        for index in 0..<5 { #expect(a.publish(stream: stream, fields: entry(index))) }
        #expect(!a.publish(stream: stream, fields: entry(5)), "the sixth does not fit")
        #expect(!a.publish(stream: stream, fields: entry(6)))
        #expect(a.statistics.droppedFull == 2 && a.statistics.queued == 5)
        try notices.waitUntil("a's publisher to fail to connect") { _, notices in
            notices.contains { if case .disconnected(.publisher, let error, _) = $0 { error.kind == .connection } else { false } }
        }

        try redis.restart()
        try notices.waitUntil("the queue to drain") { _, notices in
            notices.contains { if case .publishQueueDrained = $0 { true } else { false } }
        }
        #expect(a.publish(stream: stream, fields: entry(7)), "room again")
        b.subscribe(stream, from: .beginning)
        try seen.waitFor(6, in: stream)
        #expect(seen.values(in: stream) == ["0", "1", "2", "3", "4", "7"])
        // Counted once Redis's reply is read, which may come after b has read the entry.
        try notices.waitUntil("a to count 6 published") { _, _ in a.statistics.published == 6 }
    }
}
