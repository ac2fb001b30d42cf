import Foundation
import RunCore
import MoonRunnerTestSupport
import Testing
@testable import RunStore

/// The behaviour both stores share, run against each.
@Suite(.mayBlock) struct StoreContractTests {
    @Test(arguments: StoreKind.allCases)
    func runnerAndHistoryRoundTrip(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        defer { store.close() }
        #expect(try store.runner(named: "ada") == nil)
        store.submit(.runner(name: "ada", keyHash: RunnerKey.hash("k1"), created: 1_700_000_000.5))
        // A second creation with the same name keeps the first key.
        store.submit(.runner(name: "ada", keyHash: RunnerKey.hash("k2"), created: 1_800_000_000))
        var history = BadgeHistory()
        history.records["moon"] = .init(earnedAt: 1_700_000_100, referenceSpeed: 3.1, silverAt: 1_700_000_200,
                                        goldAt: nil, bestSpeed: 3.4)
        history.records["mars"] = .init(earnedAt: 1_700_000_300, referenceSpeed: 2.9, bestSpeed: 2.9)
        store.submit(.history(runner: "ada", history))
        store.flush()
        let runner = try #require(try store.runner(named: "ada"))
        #expect(runner == RunnerRecord(name: "ada", keyHash: RunnerKey.hash("k1"), created: 1_700_000_000.5, history: history))
        // A later save merges: a history without Mars (another process's view) keeps Mars, and adds gold.
        var later = history
        later.records["mars"] = nil
        later.records["moon"]?.goldAt = 1_700_000_400
        store.submit(.history(runner: "ada", later))
        store.flush()
        var merged = history
        merged.records["moon"]?.goldAt = 1_700_000_400
        #expect(try store.runner(named: "ada")?.history == merged)
        #expect(try store.runner(named: "grace") == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func deviceTokensKeepTheirLabels(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        defer { store.close() }
        store.submit(.runner(name: "ada", keyHash: RunnerKey.hash("k1"), created: 1))
        let pixel = DeviceToken(hash: RunnerKey.hash("t1"), runner: "ada", created: 10, label: "Ada's \"Pixel\" 7 📱")
        let plain = DeviceToken(hash: RunnerKey.hash("t2"), runner: "ada", created: 20)
        store.submit(.device(pixel))
        store.submit(.device(plain))
        store.flush()
        #expect(try store.deviceTokens() == [pixel, plain])
        #expect(pixel.id == String(pixel.hash.prefix(8)) && pixel.id.count == 8)
        store.submit(.revokeDevice(runner: "ada", tokenHash: pixel.hash, at: 30))
        store.flush()
        #expect(try store.deviceTokens() == [plain])
    }

    @Test(arguments: StoreKind.allCases)
    func privacyAndShareTokensRoundTrip(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        defer { store.close() }
        store.submit(.runner(name: "ada", keyHash: "h", created: 1))
        store.submit(.runner(name: "bob", keyHash: "h", created: 1))
        store.flush()
        #expect(try store.runner(named: "ada")?.privacy == RunnerPrivacy(), "public, no zone, by default")
        store.submit(.privacy(runner: "ada", RunnerPrivacy(isPrivate: true, zone: 250.5)))
        let tokens = [ShareToken(hash: "t1", runner: "ada", created: 10, expires: 100),
                      ShareToken(hash: "t2", runner: "ada", created: 11, expires: 200),
                      ShareToken(hash: "t3", runner: "bob", created: 12, expires: 300)]
        for token in tokens { store.submit(.share(token)) }
        store.flush()
        #expect(try store.runner(named: "ada")?.privacy == RunnerPrivacy(isPrivate: true, zone: 250.5))
        #expect(try store.runner(named: "bob")?.privacy == RunnerPrivacy())
        #expect(try store.shareTokens() == tokens)
        store.submit(.revokeShare(runner: "ada", tokenHash: "t1", at: 20))
        store.submit(.revokeShare(runner: "bob", tokenHash: "t2", at: 20))  // not bob's: nothing
        store.flush()
        #expect(try store.shareTokens().map(\.hash) == ["t2", "t3"])
        store.submit(.revokeShare(runner: "ada", tokenHash: nil, at: 21))
        store.flush()
        #expect(try store.shareTokens().map(\.hash) == ["t3"])
    }

    @Test(arguments: StoreKind.allCases)
    func runFixAndAwardRoundTrip(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let (store, id) = try kind.makeWithAdasRun(in: directory)
        defer { store.close() }
        let fixes = (1...20).map { Sample.fix(run: id, sequence: Int64($0), rejection: $0 % 7 == 0 ? .jump : nil) }
        // Submitted out of order: reads come back by sequence.
        for fix in fixes.reversed() { store.submit(.fix(fix, acknowledgement: nil)) }
        let moon = Sample.badge("moon", distance: 384.4)
        let earned = Sample.award(runner: "ada", run: id, badge: moon, tier: .earned, at: 1_700_000_100)
        let best = Sample.award(runner: "ada", run: id, badge: moon, tier: .best, at: 1_700_000_100)
        store.submit(.award(earned))
        store.submit(.award(best))
        store.submit(.award(earned))  // a replay after a crash: stored once
        store.flush()

        #expect(try store.fixes(ofRun: id) == fixes)
        #expect(try store.fixes(ofRun: id + 1000).isEmpty)
        let live = try #require(try store.run(id: id))
        #expect(live.record == RunRecord(id: id, runner: "ada", started: 1_700_000_000))
        #expect(live.awards == [earned, best])
        #expect(try store.liveRuns().map(\.id) == [id])

        let splits = [Split(unit: .kilometre, number: 1, elapsed: 300, duration: 300, pace: 300)]
        let checkpoints = [CheckpointSplit(from: Sample.badge("earth", distance: 0), to: moon, duration: 100, pace: 260)]
        let finished = RunRecord(id: id, runner: "ada", started: 1_700_000_000, ended: 1_700_000_900, distance: 2543.5,
                                 elapsed: 900, movingTime: 850, status: .saved, rejections: [.jump: 2, .inaccurate: 1])
        store.submit(.runFinished(finished, splits: splits, checkpoints: checkpoints))
        store.flush()
        let stored = try #require(try store.run(id: id))
        #expect(stored.record == finished)
        #expect(stored.record.averagePace == 850 / 2543.5 * 1000)
        #expect(stored.splits == splits)
        #expect(stored.checkpoints == checkpoints)
        #expect(try store.liveRuns().isEmpty)
        #expect(try store.awards(of: "ada") == [earned, best])
        #expect(try store.awards(of: "grace").isEmpty)
        #expect(try store.run(id: id + 1) == nil)
    }

    @Test(arguments: StoreKind.allCases)
    func altitudesAndElevationRoundTrip(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let (store, id) = try kind.makeWithAdasRun(in: directory)
        defer { store.close() }
        // A climb with noise, some fixes without altitude, one rejected with one.
        let fixes = (1...200).map { index in
            var fix = Sample.fix(run: id, sequence: Int64(index), rejection: index == 30 ? .jump : nil)
            fix.fix.altitude = index % 10 == 0 ? nil : 100 + Double(index) * 0.3 + (index % 2 == 0 ? 0.3 : -0.3)
            return fix
        }
        for fix in fixes { store.submit(.fix(fix, acknowledgement: nil)) }
        store.flush()
        let read = try store.fixes(ofRun: id)
        #expect(read == fixes)
        #expect(read.map(\.fix.altitude) == fixes.map(\.fix.altitude))
        // Remeasured from storage: the same gain and loss as from the fixes sent.
        let sent = ElevationMeter.measure(fixes.filter(\.isAccepted).map(\.fix))
        let stored = ElevationMeter.measure(read.filter(\.isAccepted).map(\.fix))
        #expect(sent?.gain == stored?.gain && sent?.loss == stored?.loss && (sent?.gain ?? 0) > 20)

        let finished = RunRecord(id: id, runner: "ada", started: 1_700_000_000, ended: 1_700_000_060, distance: 180,
                                 elapsed: 60, movingTime: 60, status: .saved, elevationGain: 41.5, elevationLoss: 2.25)
        store.submit(.runFinished(finished, splits: [], checkpoints: []))
        let flat = try store.allocateRunID()
        store.submit(.runStarted(id: flat, runner: "ada", started: 1_700_000_100))
        let noAltitude = RunRecord(id: flat, runner: "ada", started: 1_700_000_100, ended: 1_700_000_200,
                                   distance: 300, elapsed: 100, movingTime: 100, status: .saved)
        store.submit(.runFinished(noAltitude, splits: [], checkpoints: []))
        store.flush()
        #expect(try store.run(id: id)?.record == finished)
        #expect(try store.run(id: flat)?.record == noAltitude)
        #expect(try store.runs(of: "ada", offset: 0, limit: 10).map(\.elevationGain) == [nil, 41.5])
    }

    @Test(arguments: StoreKind.allCases)
    func rejectedFixesWithNaNAreKept(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        defer { store.close() }
        let bad = StoredFix(runID: 1, sequence: 1, fix: Fix(latitude: .nan, longitude: .infinity, accuracy: .nan, timestamp: 5),
                            received: 6, rejection: .invalid)
        store.submit(.fix(bad, acknowledgement: "5"))
        store.flush()
        let read = try #require(try store.fixes(ofRun: 1).first)
        #expect(read.fix.latitude.isNaN && read.fix.longitude == .infinity && read.fix.accuracy.isNaN)
        #expect(read.rejection == .invalid && read.received == 6)
    }

    @Test(arguments: StoreKind.allCases)
    func receiptsCarryTheLastAcknowledgementPerRun(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        var configuration = StoreConfiguration()
        configuration.maximumBatchDelay = 5  // everything below lands in one batch; flush cuts the wait short
        let store = try kind.make(in: directory, configuration: configuration)
        defer { store.close() }
        let log = ReceiptLog()
        store.setCommitHandler { log.append($0) }
        for sequence in 1...5 {
            store.submit(.fix(Sample.fix(run: 1, sequence: Int64(sequence)), acknowledgement: "a\(sequence)"))
            store.submit(.fix(Sample.fix(run: 2, sequence: Int64(sequence)),
                              acknowledgement: sequence == 5 ? nil : "b\(sequence)"))
        }
        store.flush()
        let receipts = log.all
        #expect(receipts.count == 1)
        #expect(receipts.first?.acknowledgements == [1: "a5", 2: "b4"])
        #expect(receipts.first?.failure == nil)
        #expect(receipts.first?.affectedRuns.isEmpty == true)
    }

    @Test(arguments: StoreKind.allCases)
    func largeSubmissionsAreSplitIntoBatches(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        var configuration = StoreConfiguration()
        configuration.maximumBatchSize = 100
        let store = try kind.make(in: directory, configuration: configuration)
        defer { store.close() }
        let log = ReceiptLog()
        store.setCommitHandler { log.append($0) }
        for sequence in 1...1000 {
            store.submit(.fix(Sample.fix(run: 9, sequence: Int64(sequence)), acknowledgement: "\(sequence)"))
        }
        store.flush()
        #expect(try store.fixes(ofRun: 9).count == 1000)
        let receipts = log.all
        #expect(receipts.count >= 10)
        #expect(receipts.last?.acknowledgements[9] == "1000")
        // Acks only move forward.
        let acknowledged = receipts.compactMap { $0.acknowledgements[9].flatMap { Int($0) } }
        #expect(acknowledged == acknowledged.sorted())
    }

    @Test(arguments: StoreKind.allCases)
    func runsNewestFirstWithOffsetAndLimit(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        defer { store.close() }
        var ids: [Int64] = []
        for index in 0..<7 {
            let id = try store.allocateRunID()
            ids.append(id)
            store.submit(.runStarted(id: id, runner: "ada", started: 1_700_000_000 + Double(index % 4) * 3600))
        }
        store.submit(.runStarted(id: try store.allocateRunID(), runner: "grace", started: 1_800_000_000))
        store.flush()
        let expected = ids.sorted { a, b in
            let (ia, ib) = (Int(a - ids[0]) % 4, Int(b - ids[0]) % 4)
            return ia != ib ? ia > ib : a > b
        }
        #expect(try store.runs(of: "ada", offset: 0, limit: 100).map(\.id) == expected)
        #expect(try store.runs(of: "ada", offset: 2, limit: 3).map(\.id) == Array(expected[2..<5]))
        #expect(try store.runs(of: "ada", offset: 6, limit: 3).map(\.id) == [expected[6]])
        #expect(try store.runs(of: "ada", offset: 7, limit: 3).isEmpty)
        #expect(try store.runs(of: "ada", offset: 0, limit: 0).isEmpty)
        #expect(try store.runs(of: "nobody", offset: 0, limit: 10).isEmpty)
        #expect(try store.liveRuns().count == 8)
    }

    /// A discarded run stays in storage but not in history: the list and its pages skip it, and its id is
    /// answered as unknown, by every store alike (so `runs:`, the JSON API and the exports all agree).
    @Test(arguments: StoreKind.allCases)
    func aDiscardedRunIsNotInHistory(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        defer { store.close() }
        store.submit(.runner(name: "ada", keyHash: "h", created: 1))
        var ids: [RunStatus: Int64] = [:]
        // Oldest first; the discarded one is the newest, so a page that counted it would come up short.
        for (index, status) in [RunStatus.saved, .timedOut, .live, .discarded].enumerated() {
            let id = try store.allocateRunID()
            ids[status] = id
            let record = RunRecord(id: id, runner: "ada", started: 1_700_000_000 + Double(index) * 3600,
                                   ended: status == .live ? nil : 1_700_000_100 + Double(index) * 3600,
                                   distance: 1000, status: status)
            store.submit(status == .live ? .runStarted(id: id, runner: "ada", started: record.started)
                                         : .runFinished(record, splits: [], checkpoints: []))
            store.submit(.fix(Sample.fix(run: id, sequence: 1), acknowledgement: nil))
        }
        store.flush()
        let discarded = try #require(ids[.discarded])
        #expect(try store.runs(of: "ada", offset: 0, limit: 10).map(\.id) == [ids[.live], ids[.timedOut], ids[.saved]])
        #expect(try store.runs(of: "ada", offset: 0, limit: 1).map(\.id) == [ids[.live]])
        #expect(try store.runs(of: "ada", offset: 2, limit: 10).map(\.id) == [ids[.saved]])
        #expect(try store.run(id: discarded) == nil)
        #expect(try store.run(id: try #require(ids[.timedOut]))?.record.status == .timedOut)
        // Whose a run is, with the runner's privacy; nobody's for a discarded run, as for one never made.
        #expect(try store.owner(ofRun: discarded) == nil && store.owner(ofRun: discarded + 100) == nil)
        #expect(try store.owner(ofRun: try #require(ids[.live])) == RunOwner(runner: "ada", privacy: RunnerPrivacy()))
        store.submit(.privacy(runner: "ada", RunnerPrivacy(isPrivate: true, zone: 200)))
        store.flush()
        #expect(try store.owner(ofRun: try #require(ids[.saved]))
            == RunOwner(runner: "ada", privacy: RunnerPrivacy(isPrivate: true, zone: 200)))
        // Kept in storage all the same: its fixes are still there (the sqlite3 shell shows the row).
        #expect(try store.fixes(ofRun: discarded).count == 1)
    }

    @Test(arguments: StoreKind.allCases)
    func runIDsAreUniqueAcrossThreads(kind: StoreKind) async throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        defer { store.close() }
        let ids = await withTaskGroup(of: [Int64].self) { group in
            for _ in 0..<4 { group.addTask { (0..<500).map { _ in try! store.allocateRunID() } } }
            return await group.reduce(into: []) { $0 += $1 }
        }
        #expect(Set(ids).count == 2000)
    }

    @Test(arguments: StoreKind.allCases)
    func submitsAfterCloseAreIgnored(kind: StoreKind) throws {
        let directory = TemporaryDirectory()
        let store = try kind.make(in: directory)
        store.submit(.runStarted(id: 1, runner: "ada", started: 1))
        store.close()
        store.submit(.runStarted(id: 2, runner: "ada", started: 2))
        store.flush()  // returns at once after close
        store.close()  // idempotent
    }
}

extension StoreKind {
    /// A store of this kind holding the runner ada and one run of hers started, with that run's id.
    func makeWithAdasRun(in directory: TemporaryDirectory) throws -> (store: any RunStore, run: Int64) {
        let store = try make(in: directory)
        let id = try store.allocateRunID()
        store.submit(.runner(name: "ada", keyHash: "h", created: 1))
        store.submit(.runStarted(id: id, runner: "ada", started: 1_700_000_000))
        return (store, id)
    }
}
