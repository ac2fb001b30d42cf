import ClusterBus
import Foundation
import MoonRunnerTestSupport
import Testing

/// Two bus instances ("nodes" a and b) on one real Redis: what one publishes the other reads, in order,
/// with its ids; echoes dropped; subscriptions changed on the fly.
@Suite(.mayBlock, .serialized, .enabled(if: RedisTestServer.isAvailable, Comment(rawValue: RedisTestServer.skipReason)))
struct BusTests {
    @Test func whatANodePublishesTheOtherReadsInOrderAndNeverItsOwn() throws {
        let redis = try RedisTestServer.shared()
        let streams = uniqueStreams("one", "two")
        let seenByA = BusRecorder(), seenByB = BusRecorder()
        let a = try ClusterBus(url: redis.url, configuration: testConfiguration("a"), onEntries: seenByA.onEntries)
        let b = try ClusterBus(url: redis.url, configuration: testConfiguration("b"), onEntries: seenByB.onEntries)
        defer { a.close(); b.close() }
        for bus in [a, b] {
            bus.setSubscriptions(Set(streams))
            #expect(bus.awaitSubscriptions(timeout: 10))
        }
        let count = 600  // more than two publish batches (256 each)
        for index in 0..<count {
            #expect(a.publish(stream: streams[index % 2], fields: entry(index)))
        }
        #expect(b.publish(stream: streams[0], fields: entry("from b")))
        #expect(a.flush(timeout: 10) && b.flush(timeout: 10))
        try seenByB.waitFor(count / 2, in: streams[1])
        try seenByB.waitFor(count / 2, in: streams[0])
        try seenByA.waitFor(1, in: streams[0])

        #expect(seenByB.values(in: streams[0]) == stride(from: 0, to: count, by: 2).map(String.init))
        #expect(seenByB.values(in: streams[1]) == stride(from: 1, to: count, by: 2).map(String.init))
        #expect(seenByB.all.allSatisfy { $0.node == "a" && $0.fields.count == 1 })
        for stream in streams {
            let ids = seenByB.all.filter { $0.stream == stream }.map(\.id)
            #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "ids grow within \(stream)")
            // At the last entry read: a's last, or b's own (its echo, read and dropped) when that came later.
            let position = b.position(of: stream)
            #expect(position != nil && ids.last != nil && position! >= ids.last!, "\(String(describing: position))")
        }
        // Each node hears the other only: a's 600 and b's 1 came back to their publishers and were dropped.
        #expect(seenByA.all.map(\.node) == ["b"])
        #expect(seenByA.values(in: streams[0]) == ["from b"])
        try seenByA.waitUntil("a's echoes") { _, _ in a.statistics.echoesDropped == count }
        try seenByB.waitUntil("b's echo") { _, _ in b.statistics.echoesDropped == 1 }
        #expect(a.statistics.published == count && a.statistics.queued == 0)
        #expect(b.statistics.received == count)
    }

    @Test func anEntryAlsoAddedToTheAllRunnersStreamHasTheSameIDInBoth() throws {
        let redis = try RedisTestServer.shared()
        let streams = uniqueStreams("run:ann", "run:bob", "runs")
        let seen = BusRecorder()
        let a = try ClusterBus(url: redis.url, configuration: testConfiguration("a"), onEntries: { _ in })
        let b = try ClusterBus(url: redis.url, configuration: testConfiguration("b"), onEntries: seen.onEntries)
        defer { a.close(); b.close() }
        b.setSubscriptions(Set(streams))
        #expect(b.awaitSubscriptions(timeout: 10))
        for index in 0..<20 {
            a.publish(stream: streams[index % 2], fields: entry(index), alsoTo: streams[2])
        }
        try seen.waitFor(20, in: streams[2])
        try seen.waitFor(10, in: streams[0])
        try seen.waitFor(10, in: streams[1])
        // Each runner's events in order; the two runners' may interleave otherwise (a batch goes stream by stream).
        let values = seen.values(in: streams[2]).compactMap { Int($0) }
        #expect(values.sorted() == Array(0..<20))
        #expect(values.filter { $0 % 2 == 0 } == Array(stride(from: 0, to: 20, by: 2)))
        #expect(values.filter { $0 % 2 == 1 } == Array(stride(from: 1, to: 20, by: 2)))
        let all = Dictionary(uniqueKeysWithValues: seen.all.filter { $0.stream == streams[2] }.map { ($0.id, $0["n"]!) })
        for entry in seen.all where entry.stream != streams[2] {
            #expect(all[entry.id] == entry["n"], "\(entry.stream) \(entry.id) has the all-runners stream's id")
        }
    }

    @Test func subscriptionsChangeWhileTheReaderIsBlocked() throws {
        let redis = try RedisTestServer.shared()
        let streams = uniqueStreams("one", "two", "three")
        let seen = BusRecorder()
        let a = try ClusterBus(url: redis.url, configuration: testConfiguration("a"), onEntries: { _ in })
        var slow = testConfiguration("b")
        slow.readBlockTimeout = 30  // only the wake can end a read in time
        let b = try ClusterBus(url: redis.url, configuration: slow, onEntries: seen.onEntries)
        defer { a.close(); b.close() }
        b.subscribe(streams[0])
        #expect(b.awaitSubscriptions(timeout: 10))
        #expect(b.subscriptions == [streams[0]])

        // Not read: two. Then one, published after it: had two been read, its entry would have come first.
        a.publish(stream: streams[1], fields: entry("two-0"))
        a.publish(stream: streams[0], fields: entry("one-0"))
        #expect(a.flush(timeout: 10))
        try seen.waitFor(1, in: streams[0])
        #expect(seen.values(in: streams[1]).isEmpty)

        // two from its beginning: what it already held comes too.
        b.subscribe(streams[1], from: .beginning)
        try seen.waitFor(1, in: streams[1], timeout: 10)
        #expect(seen.values(in: streams[1]) == ["two-0"])

        // three from now: what it held before is not read, what comes after is.
        a.publish(stream: streams[2], fields: entry("three-old"))
        #expect(a.flush(timeout: 10))
        b.subscribe(streams[2], from: .new)
        #expect(b.awaitSubscriptions(timeout: 10))
        a.publish(stream: streams[2], fields: entry("three-new"))
        try seen.waitFor(1, in: streams[2], timeout: 10)
        #expect(seen.values(in: streams[2]) == ["three-new"])

        // One dropped: entries published to it before an entry of three never arrive.
        b.unsubscribe(streams[0])
        #expect(b.awaitSubscriptions(timeout: 10))
        a.publish(stream: streams[0], fields: entry("one-1"))
        a.publish(stream: streams[2], fields: entry("three-1"))
        try seen.waitFor(2, in: streams[2], timeout: 10)
        #expect(seen.values(in: streams[0]) == ["one-0"])
        #expect(b.subscriptions == [streams[1], streams[2]])

        // A position kept from before: only what came after it, also while the stream was not read. (Published
        // after two is dropped: while still subscribed the reader may deliver it first, and reading again from
        // the kept position rightly gives it again.)
        let two = seen.all.first { $0.stream == streams[1] }!.id
        b.setSubscriptions([streams[2]])
        #expect(b.awaitSubscriptions(timeout: 10))
        a.publish(stream: streams[1], fields: entry("two-1"))
        #expect(a.flush(timeout: 10))
        b.subscribe(streams[1], from: .after(two))
        try seen.waitFor(2, in: streams[1], timeout: 10)
        #expect(seen.values(in: streams[1]) == ["two-0", "two-1"])
    }

    @Test func closingEndsABlockedReadAtOnce() throws {
        let redis = try RedisTestServer.shared()
        var configuration = testConfiguration("a")
        configuration.readBlockTimeout = 60
        let bus = try ClusterBus(url: redis.url, configuration: configuration, onEntries: { _ in })
        bus.subscribe(uniqueStreams("quiet")[0])
        #expect(bus.awaitSubscriptions(timeout: 10))
        let started = Date()
        bus.close()
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(!bus.publish(stream: "x", fields: entry(1)), "a closed bus takes nothing")
    }
}
