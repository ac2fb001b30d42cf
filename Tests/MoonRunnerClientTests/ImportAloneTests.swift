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

/// A phone's alerts, typed, with the client library alone.
@Suite struct PhoneAlertTypesTests {
    @Test func alertKindsAndPhoneAlertsAreTyped() throws {
        let sos = try AlertEvent(line: "alert:ann kind=sos dist=0.00 time=0.0 pace=- lat=- lon=- ts=1732950000.5")
        #expect(sos.alertKind == .sos)
        #expect(sos.phoneAlert == .sos(runner: "ann", latitude: nil, longitude: nil, time: 1_732_950_000.5))
        let low = try AlertEvent(line: "alert:ann kind=battery_low dist=9000.00 time=2900.0 pace=- batt=14")
        #expect(low.alertKind == .batteryLow && low.phoneAlert == .batteryLow(runner: "ann", level: 14))
        let offPace = try AlertEvent(line: "alert:ann kind=off_pace dist=12000.00 time=3720.0 pace=330.0 target=298.6 off=10.5 batt=40")
        #expect(offPace.alertKind == .offPace && offPace.phoneAlert == nil && offPace.battery == 40)
        #expect(AlertEvent.Kind.allCases.map(\.rawValue) == AlertEvent.kinds)
        #expect(PhoneAlert.mapLink(latitude: 51.5, longitude: -0.12)
                == "https://www.openstreetmap.org/?mlat=51.50000&mlon=-0.12000#map=17/51.50000/-0.12000")
    }
}
