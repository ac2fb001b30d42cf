import MoonRunnerClient
import Testing

// This file imports the client library and nothing else (no Wire, no RunCore): every type a client app
// names must come with `import MoonRunnerClient`.

/// A client app's view of the types, written from the `///` docs alone.
@Suite struct ImportAloneTests {
    @Test func theTypesAClientNamesComeWithTheClientLibrary() throws {
        let fix = Fix(latitude: 48.8566, longitude: 2.3522, accuracy: 5, timestamp: 1_732_950_000)
        #expect(fix.latitude == 48.8566)
        let target: WatchTarget = .everyone
        #expect(target == WatchTarget(parsing: "*"))
        let code: ErrorCode = .notFound
        #expect(MoonRunnerClientError.server(code: code, reason: "no runner").code == .notFound)
        let end = try RunEndedEvent(line: "end:ann run=17 dist=5012.35 time=1622.4 moving=1604.5 pace=320.1 saved=yes reason=stop filtered=0")
        #expect(end.reason == .stop && end.saved)
        let pace: PaceEvent? = nil
        #expect(pace == nil)
    }

    @Test func tiersUnitsAndStatusesAreEnums() throws {
        let badge = try BadgeEvent(line: "badge:ann id=moon name=\"The Moon\" tier=silver dist=1609.34 time=512.0 speed=3.143 lat=48.8652000 lon=2.3390000 ts=1732950512.000")
        #expect(badge.badgeTier == .silver)
        let tiers: [BadgeTier?] = ["earned", "silver", "gold", "best"].map {
            var copy = badge
            copy.tier = $0
            return copy.badgeTier
        }
        #expect(tiers == BadgeTier.allCases.map { $0 })
        let split = try SplitEvent(line: "split:ann unit=mi n=1 time=512.0 pace=318.1 at=512.0")
        #expect(split.splitUnit == .mile)
        let summary = try RunSummary(line: "summary:ann run=17 status=ended_by_timeout date=2024-11-30T08:00:00Z dist=1000.00 time=300.0 moving=300.0 pace=300.0 filtered=0")
        #expect(summary.runStatus == .endedByTimeout)
        var unknown = summary
        unknown.status = "archived"
        #expect(unknown.runStatus == nil && unknown.status == "archived")
    }

    @Test func historyRecordsHaveRecordNames() throws {
        let item = try RunListItem(line: "item:ann run=17 date=2024-11-30T08:00:00Z dist=5012.35 time=1622.4 pace=323.7")
        let page = RunPage(items: [item], hasMore: false)
        #expect(page.items.first?.runID == 17)
        let entry: BadgeBoardEntry = try BadgeBoardEntry(line: "board:ann id=moon name=\"The Moon\" dist=1609.34 earned=2024-11-30T08:00:00Z silver=no gold=no best=318.1 left=0.00 silver_pace=302.9 gold_pace=289.2")
        let answer = HistoryAnswer.badges([entry])
        #expect(answer == .badges([entry]))
        let checkpoint: RunCheckpoint = try RunCheckpoint(line: "checkpoint:ann from=earth to=atmosphere time=241.0 pace=299.5")
        #expect(checkpoint.to == "atmosphere")
    }

    @Test func anOkPrintsAsItsLine() {
        let ok = OkEvent(what: "msg", ["count": "1"])
        #expect("\(ok)" == "ok:msg count=1")
        #expect(String(describing: ClientEvent.ok(ok)) == "ok(ok:msg count=1)")
    }
}
