import Foundation
import MoonRunnerTestSupport
import RunCore
import Testing
@testable import RunStore

/// A run read a page at a time (what a replay does): the pages, put together, are the whole run in time order,
/// on every store, however far back its late fixes reach; the timeline's own memory stays a few segments.
@Suite(.mayBlock) struct FixTimelineTests {
    /// A run of `count` fixes whose arrival order is not its time order, as a phone's queues make it: a queue
    /// sent newest first, one sent late between live positions, stragglers from far back, equal stamps, and
    /// fixes filtered out_of_order, future and inaccurate. Sequences have a gap (one never stored).
    static func disorderedRun(_ run: Int64, count: Int) -> [StoredFix] {
        var times = (0..<count).map(Double.init)
        if count >= 520 { times[400..<520].reverse() }  // a queue sent newest first
        if count >= 1_400 {
            // A queue of 200 sent late, each between two live positions.
            let late = Array(times[1_000..<1_200]), live = Array(times[1_200..<1_400])
            times.replaceSubrange(1_000..<1_400, with: zip(live, late).flatMap { [$0, $1] })
        }
        if count < 520 { times[(count / 3)..<(count / 2)].reverse() }
        for index in stride(from: 1_500, to: count, by: 331) { times[index] = times[index / 7] - 0.5 }  // far back
        for index in stride(from: 2_000, to: count, by: 97) { times[index] = times[index - 1] }  // equal stamps
        var rejections: [Int: FixRejection] = [:]
        for index in stride(from: 3, to: count, by: 17) { rejections[index] = .inaccurate }
        for index in stride(from: 5, to: count, by: 101) { rejections[index] = .outOfOrder }
        for index in stride(from: 7, to: count, by: 211) { rejections[index] = .future }
        return times.enumerated().compactMap { index, time in
            guard index != 777 else { return nil }
            let fix = Fix(latitude: 51.5 + Double(index) * 1e-5, longitude: -0.12, accuracy: 5,
                          timestamp: 1_767_225_600 + time)
            return StoredFix(runID: run, sequence: Int64(index), fix: fix, received: 1_767_225_600 + Double(index) + 0.25,
                             rejection: rejections[index])
        }
    }

    /// `fixes` stored in batches of `batch` (so rows are joined and split as live runs make them).
    static func store(_ fixes: [StoredFix], in store: any RunStore, batch: Int = 150) {
        for start in stride(from: 0, to: fixes.count, by: batch) {
            for fix in fixes[start..<min(start + batch, fixes.count)] { store.submit(.fix(fix, acknowledgement: nil)) }
            store.flush()
        }
    }

    /// Every page of `timeline`, `limit` at a time, put together.
    static func allPages(_ timeline: inout FixTimeline, limit: Int, from store: any RunStore) throws -> [StoredFix] {
        var read: [StoredFix] = []
        var pages = 0
        while !timeline.isFinished {
            let page = try timeline.next(limit, from: store)
            #expect(page.count <= limit)
            read += page
            pages += 1
            try #require(pages <= 10_000, "the timeline never finished")
        }
        #expect(try timeline.next(limit, from: store).isEmpty)
        return read
    }

    @Test(arguments: StoreKind.allCases)
    func pagesPutTogetherAreTheWholeRunInTimeOrder(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        defer { store.close() }
        let id = try store.allocateRunID()
        store.submit(.runner(name: "ada", keyHash: "h", created: 1))
        store.submit(.runStarted(id: id, runner: "ada", started: 1_767_225_600))
        Self.store(Self.disorderedRun(id, count: 3_000), in: store)
        let whole = try store.fixesInTimeOrder(ofRun: id)
        #expect(whole.count > 2_900 && whole.map(\.sequence) != whole.map(\.sequence).sorted(), "a run out of order")

        // Segments of 64 merged past 8: some 400 fixes each, most holding late fixes of other segments' times.
        for (limit, segmentFixes) in [(97, 64), (7, 512), (5_000, 64)] {
            var timeline = try FixTimeline(run: id, in: store, segmentFixes: segmentFixes, maximumSegments: 8)
            #expect(timeline.count == whole.count)
            #expect(timeline.segments.count <= 8)
            let paged = try Self.allPages(&timeline, limit: limit, from: store)
            #expect(paged == whole, "pages of \(limit)")
        }
        var accepted = try FixTimeline(run: id, selecting: .accepted, in: store, segmentFixes: 100)
        #expect(try Self.allPages(&accepted, limit: 250, from: store) == whole.filter(\.isAccepted))
    }

    @Test(arguments: StoreKind.allCases)
    func aPageBySequenceStartsAnywhereInARow(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        defer { store.close() }
        let id = try store.allocateRunID()
        let fixes = Self.disorderedRun(id, count: 1_000)
        Self.store(fixes, in: store, batch: 37)
        store.submit(.fix(Self.disorderedRun(id + 1, count: 10)[3], acknowledgement: nil))  // another run's
        store.flush()
        #expect(try store.fixes(ofRun: id) == fixes)
        for (first, limit) in [(Int64.min, 10), (0, 1_000), (1, 25), (13, 1), (770, 20), (776, 2), (998, 10), (1_000, 5)] {
            let expected = Array(fixes.drop { $0.sequence < first }.prefix(limit))
            #expect(try store.fixes(ofRun: id, from: first, limit: limit) == expected, "from \(first), \(limit)")
        }
        #expect(try store.fixes(ofRun: id, from: 10, limit: 0).isEmpty)
        #expect(try store.fixes(ofRun: id + 1000, from: 0, limit: 10).isEmpty)
    }

    @Test func anEmptyRunIsFinishedAtOnceAndAFixWithoutATimeIsLeftOut() throws {
        let store = MemoryRunStore()
        var empty = try FixTimeline(run: 1, in: store)
        #expect(empty.isFinished && empty.count == 0)
        #expect(try empty.next(10, from: store).isEmpty)
        var fixes = Self.disorderedRun(2, count: 30)
        fixes[10].fix.timestamp = .nan
        Self.store(fixes, in: store)
        var timeline = try FixTimeline(run: 2, in: store, segmentFixes: 4)
        let expected = StoredFix.inTimeOrder(fixes.filter { !$0.fix.timestamp.isNaN })
        #expect(try Self.allPages(&timeline, limit: 3, from: store) == expected)
    }

    /// However long the run, a timeline keeps at most `maximumSegments` (here of a 20,000-fix run, by default
    /// 256 × a few dozen bytes).
    @Test func aLongRunKeepsAFewSegments() throws {
        let store = MemoryRunStore()
        Self.store(Self.disorderedRun(3, count: 20_000), in: store, batch: 5_000)
        let timeline = try FixTimeline(run: 3, in: store, segmentFixes: 16)
        #expect(timeline.segments.count <= FixTimeline.maximumSegments && timeline.segments.count > 100)
        #expect(timeline.segments.reduce(0) { $0 + $1.stored } == 19_999)
    }
}
