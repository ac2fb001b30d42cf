@testable import ClusterBus
import Foundation
import MoonRunnerTestSupport
import Testing

/// Packing: what a publish batch holds for one stream goes into one stream entry, and every event still gets an
/// id of its own, growing within its stream, the same in its partition and in the all-runners stream.
struct PackingTests {
    private func queued(_ streams: [String], alsoTo: String? = "all", from first: UInt64 = 1) -> [OutgoingEntry] {
        streams.enumerated().map { index, stream in
            OutgoingEntry(stream: stream, alsoTo: alsoTo, fields: entry(index), sequence: first + UInt64(index))
        }
    }

    @Test func aBatchPacksOneEntryPerStreamInTheOrderOfItsFirstEvent() {
        let packed = PackedEntry.pack(queued(["p1", "p2", "p1", "p3", "p2", "p1"], from: 41))
        #expect(packed.map(\.stream) == ["p1", "p2", "p3"])
        #expect(packed.map { $0.events.map(\.sequence) } == [[41, 43, 46], [42, 45], [44]])
        // Numbered from the batch's first sequence: below any later batch's, the same each time it is packed.
        #expect(packed.map(\.number) == [41, 42, 43])
        #expect(PackedEntry.pack(queued(["p1", "p2", "p1", "p3", "p2", "p1"], from: 41)).map(\.number) == [41, 42, 43])
        #expect(PackedEntry.pack([]).isEmpty)
    }

    @Test func aStreamsEventsKeepTheirOrderWhereTheAlsoToStreamChanges() {
        let batch = queued(["p1", "p1"], alsoTo: "all") + queued(["p1"], alsoTo: nil, from: 3)
            + queued(["p2"], alsoTo: "all", from: 4) + queued(["p1"], alsoTo: "all", from: 5)
        let packed = PackedEntry.pack(batch)
        #expect(packed.map { $0.events.map(\.sequence) } == [[1, 2], [3], [5], [4]])
        #expect(packed.map(\.alsoTo) == ["all", nil, "all", "all"])
        #expect(packed.map(\.number) == [1, 2, 3, 4])
    }

    @Test func aLongRunOfOneStreamIsCutToFitAMillisecondsSequenceNumbers() {
        let count = PublishScript.eventsPerEntry * 2 + 1
        let packed = PackedEntry.pack(queued(Array(repeating: "p", count: count)))
        #expect(packed.map { $0.events.count } == [PublishScript.eventsPerEntry, PublishScript.eventsPerEntry, 1])
        #expect(packed.map(\.number) == [1, 2, 3])
    }

    @Test func anEntryOfSeveralEventsUnpacksUnderTheIdsReservedBelowIts() {
        var pack: [UInt8] = []
        for event in [[("n", [48]), ("k", [1])], [("n", [49])], [("n", [50])]] as [[(String, [UInt8])]] {
            EventPack.append(event, to: &pack)
        }
        let fields: [(String, [UInt8])] = [("_node", Array("a".utf8)), (PublishScript.packField, pack)]
        let events = ClusterBus.unpack(ClusterBus.ReadEntry(id: StreamID(milliseconds: 7, sequence: 5), fields: fields),
                                       droppingField: "_node")
        #expect(events.map(\.0) == [3, 4, 5].map { StreamID(milliseconds: 7, sequence: $0) })
        #expect(events.map { $0.1.map(\.0) } == [["n", "k"], ["n"], ["n"]])
        #expect(events.map { $0.1.map(\.1) } == [[[48], [1]], [[49]], [[50]]])
        // An entry of one event is as entries always were: its own id, its fields less the node's.
        let single = ClusterBus.unpack(ClusterBus.ReadEntry(id: StreamID(milliseconds: 7, sequence: 0),
                                                            fields: [("_node", [97]), ("n", [48])]), droppingField: "_node")
        #expect(single.map(\.0) == [StreamID(milliseconds: 7, sequence: 0)] && single[0].1.map(\.0) == ["n"])
        // One Redis numbered itself (the script's fallback) with too few numbers below it: still in order.
        let crowded = ClusterBus.unpack(ClusterBus.ReadEntry(id: StreamID(milliseconds: 9, sequence: 1), fields: fields),
                                        droppingField: "_node")
        #expect(crowded.map(\.0.sequence) == [0, 1, 1])
        // A damaged pack gives nothing rather than half of it.
        let damaged = ClusterBus.unpack(ClusterBus.ReadEntry(id: StreamID(milliseconds: 9, sequence: 5),
                                                             fields: [(PublishScript.packField, Array(pack.dropLast()))]),
                                        droppingField: "_node")
        #expect(damaged.isEmpty)
    }

    @Test func aPackDecodesOnlyWhenWholeToItsLastByte() {
        let events: [[(String, [UInt8])]] = [[("m", Array("e".utf8)), ("l", Array(repeating: 7, count: 300)), ("x", [])], [],
                                             [("r", Array("ann".utf8))]]
        var pack: [UInt8] = []
        for event in events { EventPack.append(event, to: &pack) }
        let decoded = EventPack.decode(pack)
        #expect(decoded?.map { $0.map(\.0) } == events.map { $0.map(\.0) })
        #expect(decoded?.map { $0.map(\.1) } == events.map { $0.map(\.1) })
        // Every cut short of the end, and a byte too many, is refused; so are lengths past the end.
        let wholeEvents = [0, 2 + 1 + 1 + 4 + 1 + 1 + 1 + 4 + 300 + 1 + 1 + 4, 2 + 1 + 1 + 4 + 1 + 1 + 1 + 4 + 300 + 1 + 1 + 4 + 2]
        for cut in 0..<pack.count where !wholeEvents.contains(cut) {
            #expect(EventPack.decode(Array(pack[..<cut])) == nil, "cut at \(cut)")
        }
        #expect(EventPack.decode(pack + [0]) == nil)
        #expect(EventPack.decode([0, 1, 1, 65, 255, 255, 255, 255]) == nil)
        #expect(EventPack.decode([])?.isEmpty == true)
    }

    @Test(.enabled(if: RedisTestServer.isAvailable, Comment(rawValue: RedisTestServer.skipReason)))
    func theScriptReservesASequenceNumberForEveryEventOfAnEntry() throws {
        let (connection, sha) = try connectionWithPublishScript()
        let streams = uniqueStreams("p1", "p2", "all"), counter = Array(("test:counter:" + UUID().uuidString).utf8)
        // Two calls, each of two entries packing 4 and 2 events into two partitions and the all stream.
        for first in [1, 7] as [UInt64] {
            let batch = queued([streams[0], streams[1], streams[0], streams[0], streams[1], streams[0]], alsoTo: streams[2],
                               from: first)
            let packed = PackedEntry.pack(batch)
            #expect(packed.map { $0.events.count } == [4, 2])
            let reply = try connection.command(PublishScript.arguments(
                sha: sha, entries: packed[...], counterKey: counter, nodeField: Array("_node".utf8), node: Array("a".utf8),
                configuration: ClusterBusConfiguration(node: "a")))
            #expect(reply == .array([.integer(1), .integer(1)]))
        }
        func read(_ stream: String) throws -> [(StreamID, [(String, [UInt8])])] {
            try ClusterBus.parseRead(connection.command("XREAD", "STREAMS", stream, "0-0"))[stream, default: []]
                .flatMap { ClusterBus.unpack($0, droppingField: "_node") }
        }
        let all = try read(streams[2])
        #expect(all.count == 12)
        let ids = all.map(\.0)
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "every event has an id of its own, growing: \(ids)")
        #expect(ids.allSatisfy { $0.sequence < 1000 })
        // A partition holds its events under the ids they have in the all stream.
        let byID = Dictionary(uniqueKeysWithValues: all.map { ($0.0, $0.1.first { $0.0 == "n" }?.1 ?? []) })
        for stream in streams[0...1] {
            let events = try read(stream)
            #expect(!events.isEmpty)
            for (id, fields) in events { #expect(byID[id] == fields.first { $0.0 == "n" }?.1, "\(id) in \(stream)") }
        }
        #expect(try read(streams[0]).count == 8 && read(streams[1]).count == 4)
        _ = try connection.command("DEL", streams[0], streams[1], streams[2])
    }
}

/// A busy publisher on a real Redis: a burst packs into far fewer entries than events, and a reader still gets
/// every event once, each stream's in order, under ids that grow.
@Suite(.mayBlock, .serialized, .enabled(if: RedisTestServer.isAvailable, Comment(rawValue: RedisTestServer.skipReason)))
struct PackedBusTests {
    @Test func aBurstArrivesWholeInOrderPerStreamUnderGrowingIds() throws {
        let redis = try RedisTestServer.shared()
        let streams = uniqueStreams("p0", "p1", "p2", "all")
        let seen = BusRecorder()
        let a = try ClusterBus(url: redis.url, configuration: testConfiguration("a"), onEntries: { _ in })
        let b = try ClusterBus(url: redis.url, configuration: testConfiguration("b"), onEntries: seen.onEntries)
        defer { a.close(); b.close() }
        b.setSubscriptions([streams[3]])
        #expect(b.awaitSubscriptions(timeout: 10))
        let count = 3_000
        for index in 0..<count {
            #expect(a.publish(stream: streams[index % 3], fields: entry(index), alsoTo: streams[3]))
        }
        #expect(a.flush(timeout: 20))
        try seen.waitFor(count, in: streams[3])
        let values = seen.values(in: streams[3]).compactMap { Int($0) }
        #expect(values.sorted() == Array(0..<count))
        for partition in 0..<3 {
            #expect(values.filter { $0 % 3 == partition } == Array(stride(from: partition, to: count, by: 3)))
        }
        let ids = seen.all.map(\.id)
        #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 })
        let statistics = a.statistics
        #expect(statistics.published == count)
        // Queued far faster than a round trip each: the publisher's batches (up to 256) pack into an entry per
        // partition. (Unpacked, there would be one entry per event.)
        #expect(statistics.publishedEntries < count / 2, "\(statistics.publishedEntries) entries for \(count) events")
        #expect(b.statistics.received == count && b.statistics.receivedEntries == statistics.publishedEntries)
    }
}
