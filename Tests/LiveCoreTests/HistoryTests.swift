@testable import LiveCore
import Foundation
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// `runs:`, `run:` and `badges:` over the wire, answered as event lines ended by `done:`.
@Suite struct HistoryTests {
    /// Runs `count` fixes at 3 m/s for `runner` and stops; returns the run id.
    func run(_ client: some LineClient, _ runner: String, fixes count: Int, speed: Double = 3) throws -> Int64 {
        for line in straightRun(count: count, speed: speed) { try client.send(line) }
        try client.send("stop:")
        return try RunEndedEvent(event: Event.parse(client.expect("end:\(runner)", timeout: 20))).runID
    }

    func answer(_ client: some LineClient, to command: String) throws -> [ServerEvent] {
        try client.send(command)
        return try client.lines(until: "done:", timeout: 10) { $0.hasPrefix("done:") || $0.hasPrefix("err:") }
            .map { try ServerEvent(line: $0) }
    }

    @Test func runsAreListedNewestFirstInPages() throws {
        try withPureServer { server in
            let (ann, _) = try connectRunner("ann", to: server)
            var ids: [Int64] = []
            for count in [5, 8, 11] { ids.append(try run(ann, "ann", fixes: count)) }
            let asker = server.connect()
            let firstPage = try answer(asker, to: "runs:ann 0 2")
            let items = firstPage.compactMap { if case .runListItem(let item) = $0 { item } else { nil } }
            #expect(items.map(\.runID) == [ids[2], ids[1]])
            guard case .done(let done) = firstPage.last else { Issue.record("no done"); return }
            #expect(done.what == "runs" && done.count == 2 && done.more)
            let secondPage = try answer(asker, to: "runs:ann 2 2")
            #expect(secondPage.compactMap { if case .runListItem(let item) = $0 { item.runID } else { nil } } == [ids[0]])
            guard case .done(let last) = secondPage.last else { Issue.record("no done"); return }
            #expect(!last.more)
            let unknown = try answer(asker, to: "runs:nobody")
            guard case .error(let error) = unknown.last else { Issue.record("no error"); return }
            #expect(error.code == .notFound)
        }
    }

    @Test func aLiveRunIsListedWithItsMeasurementsSoFar() throws {
        try withPureServer { server in
            let (ann, _) = try connectRunner("ann", to: server)
            for line in straightRun(count: 60, speed: 3) { try ann.send(line) }
            try ann.send("ping:")
            _ = try ann.expect("ok:ping", timeout: 20)  // replies keep order: every fix has been measured
            let asker = server.connect()
            let items = try answer(asker, to: "runs:ann").compactMap { if case .runListItem(let item) = $0 { item } else { nil } }
            let item = try #require(items.first)
            let summary = try answer(asker, to: "run:\(item.runID)").compactMap {
                if case .runSummary(let summary) = $0 { summary } else { nil }
            }.first
            #expect(summary?.status == "live")
            #expect(item.distance > 100 && item.elapsed > 30)
            #expect(abs(item.distance - (summary?.distance ?? 0)) < 30)
        }
    }

    @Test func oneRunHasItsSummarySplitsCheckpointsAndBadges() throws {
        try withPureServer { server in
            let (ann, _) = try connectRunner("ann", to: server)
            // 1.1 km at 3.7 m/s: one km split, Earth and the Atmosphere badges.
            let id = try run(ann, "ann", fixes: 300, speed: 3.7)
            let asker = server.connect()
            let lines = try answer(asker, to: "run:\(id)")
            guard case .runSummary(let summary) = lines.first else { Issue.record("no summary: \(lines)"); return }
            #expect(summary.runID == id && summary.status == "saved" && summary.distance > 1000)
            let splits = lines.compactMap { if case .split(let split) = $0 { split } else { nil } }
            #expect(splits.contains { $0.unit == "km" && $0.number == 1 })
            let badges = lines.compactMap { if case .badge(let badge) = $0 { badge.badgeID } else { nil } }
            #expect(badges.contains("atmosphere"))
            #expect(lines.contains { if case .checkpoint = $0 { true } else { false } })
            guard case .done(let done) = lines.last else { Issue.record("no done"); return }
            #expect(done.what == "run" && done.count == lines.count - 1)
            let missing = try answer(asker, to: "run:999999")
            guard case .error(let error) = missing.last else { Issue.record("no error"); return }
            #expect(error.code == .notFound)
        }
    }

    /// `stop:discard` throws a run away: on the line and on the web, no list, answer, export or replay shows
    /// it, and its badges and distance are not on the board; the saved run before it stays.
    @Test func aDiscardedRunIsNotInHistoryAnywhere() throws {
        try withPureServer { server in
            let (ann, _) = try connectRunner("ann", to: server)
            let saved = try run(ann, "ann", fixes: 30)
            // 1.1 km: the Atmosphere, which only the discarded run reaches.
            for line in straightRun(count: 300, speed: 3.7) { try ann.send(line) }
            try ann.send("stop:discard")
            let end = try RunEndedEvent(event: Event.parse(ann.expect("end:ann", timeout: 20)))
            #expect(!end.saved && end.reason == .discard)
            let discarded = end.runID

            let asker = server.connect()
            let listed = try answer(asker, to: "runs:ann")
            #expect(listed.compactMap { if case .runListItem(let item) = $0 { item.runID } else { nil } } == [saved])
            guard case .done(let done) = listed.last else { Issue.record("no done: \(listed)"); return }
            #expect(done.count == 1 && !done.more)
            for command in ["run:\(discarded)", "replay:\(discarded) 100"] {
                guard case .error(let error) = try answer(asker, to: command).last else {
                    Issue.record("\(command) answered"); continue
                }
                #expect(error.code == .notFound, "\(command)")
            }
            let board = try answer(asker, to: "badges:ann").compactMap { if case .board(let line) = $0 { line } else { nil } }
            #expect(board.first { $0.badgeID == "atmosphere" }?.earned == nil)

            let web = server.web()
            let runs = try JSONSerialization.jsonObject(with: Data(web.get("/api/runners/ann/runs").body)) as? [String: Any]
            #expect((runs?["runs"] as? [[String: Any]])?.compactMap { $0["run"] as? Int } == [Int(saved)])
            let runner = try JSONSerialization.jsonObject(with: Data(web.get("/api/runners/ann").body)) as? [String: Any]
            #expect(runner?["last_run"] as? Int == Int(saved))
            for path in ["/api/runs/\(discarded)", "/runs/\(discarded).gpx", "/runs/\(discarded).svg"] {
                #expect(try web.get(path).status == 404, "\(path)")
            }
            #expect(try web.get("/runs/\(saved).gpx").status == 200)
        }
    }

    @Test func theBadgeBoardHasAll33Badges() throws {
        try withPureServer { server in
            let (ann, _) = try connectRunner("ann", to: server)
            _ = try run(ann, "ann", fixes: 300, speed: 3.7)
            let asker = server.connect()
            let lines = try answer(asker, to: "badges:ann")
            let board = lines.compactMap { if case .board(let line) = $0 { line } else { nil } }
            #expect(board.map(\.badgeID) == Badges.all.map(\.id))
            let atmosphere = try #require(board.first { $0.badgeID == "atmosphere" })
            #expect(atmosphere.earned != nil && atmosphere.left == 0)
            #expect(atmosphere.silverPace != nil && atmosphere.goldPace! < atmosphere.silverPace!)
            let mars = try #require(board.first { $0.badgeID == "mars" })
            #expect(mars.earned == nil && mars.left > 2000 && mars.left < 2300)
        }
    }

    @Test func aBetterSecondRunEarnsSilverAndTheBoardShowsIt() throws {
        try withPureServer { server in
            let (ann, _) = try connectRunner("ann", to: server)
            _ = try run(ann, "ann", fixes: 300, speed: 3.0)
            let second = try run(ann, "ann", fixes: 260, speed: 3.5)
            let asker = server.connect()
            let lines = try answer(asker, to: "run:\(second)")
            let tiers = lines.compactMap { if case .badge(let badge) = $0, badge.badgeID == "atmosphere" { badge.tier } else { nil } }
            #expect(tiers == ["silver", "gold", "best"])
            let board = try answer(asker, to: "badges:ann").compactMap { if case .board(let line) = $0 { line } else { nil } }
            let atmosphere = try #require(board.first { $0.badgeID == "atmosphere" })
            #expect(atmosphere.silver != nil && atmosphere.gold != nil)
        }
    }
}

/// Badge history lives in the database: a restart does not make yesterday's checkpoints disappear.
@Suite struct HistoryAcrossRestartTests {
    @Test func silverAfterARestartNeedsToBeatTheStoredReference() throws {
        let database = temporaryFolder().appendingPathComponent("history.sqlite").path
        var key = ""
        do {
            let store = try SQLiteRunStore(path: database)
            defer { store.close() }
            try withPureServer(store: store) { server in
                let (ann, claimed) = try connectRunner("ann", to: server)
                key = claimed
                for line in straightRun(count: 300, speed: 3.0) { try ann.send(line) }
                try ann.send("stop:")
                try ann.expect("end:ann", timeout: 20)
            }
        }
        let store = try SQLiteRunStore(path: database)
        defer { store.close() }
        try withPureServer(store: store) { server in
            let ann = server.connect()
            try ann.send("iam:ann \(key)")
            try ann.expectNext("ok:iam")
            // Slower than the first run: nothing but the run itself.
            for line in straightRun(count: 300, speed: 2.9) { try ann.send(line) }
            try ann.send("stop:")
            try ann.expect("end:ann", timeout: 20)
            #expect(!ann.received.contains { $0.hasPrefix("badge:ann id=atmosphere") }, "no award for a slower run")
            // 5 % faster than the stored reference: silver, and a best.
            let start = Double(Int(Date().timeIntervalSince1970)) + 400
            for line in straightRun(count: 280, from: start, speed: 3.2) { try ann.send(line) }
            try ann.send("stop:")
            let lines = try ann.lines(until: "end", timeout: 20) { $0.hasPrefix("end:ann") }
            let tiers = lines.compactMap { line -> String? in
                guard line.hasPrefix("badge:ann id=atmosphere"), let badge = try? BadgeEvent(event: Event.parse(line)) else { return nil }
                return badge.tier
            }
            #expect(tiers == ["silver", "best"])
        }
    }
}
