import Foundation
import Testing
@testable import Wire

private func eventError(_ line: String) -> ErrorCode? {
    do {
        _ = try Event.parse(line)
        return nil
    } catch {
        return error.code
    }
}

@Suite struct EventGrammarTests {
    @Test func parsesFieldsQuotedValuesAndPositionalText() throws {
        let event = try Event.parse(#"err:bad_name "a name is 1-32 of A-Z" extra=1 note="x \"y\" \\ z\nw""#)
        #expect(event.kind == "err")
        #expect(event.subject == "bad_name")
        #expect(event.fields == [
            .text("a name is 1-32 of A-Z"),
            Event.Field("extra", "1"),
            Event.Field("note", "x \"y\" \\ z\nw"),
        ])
        #expect(event["extra"] == "1")
        #expect(event["missing"] == nil)
        #expect(event.text == "a name is 1-32 of A-Z")
    }

    @Test func toleratesEmptySubjectExtraSpacesAndCRLF() throws {
        let event = try Event.parse("ok:  a=1   b=2 \r\n")
        #expect(event.subject == "")
        #expect(event.fields == [Event.Field("a", "1"), Event.Field("b", "2")])
        #expect(event.line == "ok: a=1 b=2")
        #expect(try Event.parse(Array("ping:x\r".utf8)) == Event(kind: "ping", subject: "x"))
    }

    static let quoting: [(String, String)] = [
        ("plain", "v=plain"),
        ("", #"v="""#),
        ("two words", #"v="two words""#),
        ("say \"hi\"", #"v="say \"hi\"""#),
        (#"back\slash"#, #"v="back\\slash""#),
        ("line\nbreak\r\ttab", #"v="line\nbreak\r\ttab""#),
        ("a=b", "v=a=b"),
        ("-", "v=-"),
        ("héllo🌙", "v=héllo🌙"),
        (" lead", #"v=" lead""#),
    ]

    @Test(arguments: quoting)
    func quotesOnlyWhenNeededAndRoundTrips(value: String, expectedField: String) throws {
        let event = Event(kind: "t", subject: "s", fields: [Event.Field("v", value)])
        #expect(event.line == "t:s " + expectedField)
        #expect(try Event.parse(event.line) == event)
        let positional = Event(kind: "t", subject: "", fields: [.text(value)])
        #expect(try Event.parse(positional.line) == positional)
    }

    @Test func replacesUnwritableControlsAndGuardsTheSubject() throws {
        let event = Event(kind: "t", subject: "a b\"c", fields: [Event.Field("v", "bell\u{07}")])
        #expect(event.line == "t:a_b_c v=\"bell\u{FFFD}\"")
        #expect(try Event.parse(event.line).fields[0].value == "bell\u{FFFD}")
    }

    @Test func appendAddsNewline() {
        var bytes: [UInt8] = []
        Event(kind: "ok", subject: "ping").append(to: &bytes)
        #expect(bytes == Array("ok:ping\n".utf8))
    }

    static let malformed: [(String, ErrorCode)] = [
        ("", .missingColon),
        ("pace", .missingColon),
        ("Pace:ann", .badArgument),
        ("1x:ann", .badArgument),
        (":ann", .badArgument),
        ("ok:a\"b", .badArgument),
        ("ok:x key", .badArgument),
        ("ok:x key=", .badArgument),
        ("ok:x =v", .badArgument),
        ("ok:x Key=v", .badArgument),
        ("ok:x k=a\"b", .badArgument),
        ("ok:x k=a\\b", .badArgument),
        ("ok:x k=\"open", .badArgument),
        ("ok:x k=\"bad\\q\"", .badArgument),
        ("ok:x k=\"a\"b", .badArgument),
        ("ok:x \"tab\there\"", .badArgument),
        ("ok:x k=\"ends\\", .badArgument),
    ]

    @Test(arguments: malformed)
    func refusesMalformedEvents(line: String, code: ErrorCode) {
        #expect(eventError(line) == code)
    }

    @Test func refusesBadBytes() {
        #expect(throws: WireError(.nulByte, "NUL byte at offset 3")) { try Event.parse([0x6F, 0x6B, 0x3A, 0x00]) }
        do {
            _ = try Event.parse(Array("ok:".utf8) + [0xFE])
            Issue.record("parsed")
        } catch {
            #expect(error.code == .badUTF8)
        }
    }
}

@Suite struct TypedEventTests {
    static let pace = PaceEvent(runner: "ann", distance: 1234.57, elapsed: 600.5, moving: 590, pace: 477.9, current: nil,
                                latitude: 48.856614, longitude: -2.3522199, timestamp: "1732950600.25",
                                nextBadge: "moon", left: 374.77)

    static let samples: [ServerEvent] = [
        .runStarted(RunStartedEvent(runner: "ann", runID: 17, timestamp: "1732950000")),
        .pace(pace),
        .pace(PaceEvent(runner: "b.o-b_2", distance: 0, elapsed: 0, moving: 0, pace: nil, current: nil, latitude: -90,
                        longitude: 180, timestamp: "0", nextBadge: nil, left: 0)),
        .badge(BadgeEvent(runner: "ann", badgeID: "mars", badgeName: "Mars", tier: "gold", distance: 3218.69,
                          elapsed: 1000.5, speed: 3.217, latitude: 1.5, longitude: 2.25, timestamp: 1_732_951_000.125)),
        .badge(BadgeEvent(runner: "ann", badgeID: "atmosphere", badgeName: "Earth's Atmosphere", tier: "earned",
                          distance: 804.67, elapsed: 259, speed: 3.107, latitude: 0, longitude: 0, timestamp: 0)),
        .split(SplitEvent(runner: "ann", unit: "mi", number: 3, duration: 512.5, pace: 318.4, elapsed: 1530)),
        .ended(RunEndedEvent(runner: "ann", runID: 17, distance: 5012.35, elapsed: 1622.4, moving: 1604.5, pace: 320.1,
                             saved: true, reason: .stop, filtered: ["jump": 3, "inaccurate": 9, "stale": 0])),
        .ended(RunEndedEvent(runner: "bob", runID: 1, distance: 0, elapsed: 0, moving: 0, pace: nil, saved: false,
                             reason: .discard)),
        .cheer(CheerEvent(runner: "ann", from: "guest-7", text: "Allez \"Ann\" !\\o/")),
        .cheer(CheerEvent(runner: "ann", from: "bob", text: "Bravo")),
        .ack(AckEvent(runner: "ann", timestamp: "1732950004.5")),
        .ok(OkEvent(what: "iam", ["name": "ann", "key": "3f2a", "new": "yes", "run": "-"])),
        .ok(OkEvent(what: "ping")),
        .error(ErrorEvent(code: .badCoordinate, reason: "latitude must be within -90...90")),
        .error(ErrorEvent(code: .busy, reason: "")),
        .runListItem(RunListItemEvent(runner: "ann", runID: 12, date: "2024-11-28T06:35:12Z", distance: 3230.1,
                                      elapsed: 1097, pace: 335.8)),
        .runSummary(RunSummaryEvent(runner: "ann", runID: 12, status: "saved", date: "2024-11-28T06:35:12Z",
                                    distance: 3230.1, elapsed: 1097, moving: 1090.5, pace: nil, filtered: 4)),
        .checkpoint(CheckpointEvent(runner: "ann", from: "earth", to: "atmosphere", duration: 259, pace: 321.9)),
        .board(BoardEvent(runner: "ann", badgeID: "mars", badgeName: "Mars", distance: 3218.69,
                          earned: "2024-11-28T06:35:12Z", silver: nil, gold: nil, best: 318.2, left: 0,
                          silverPace: 303, goldPace: 289.3)),
        .board(BoardEvent(runner: "ann", badgeID: "sun", badgeName: "The Sun", distance: 50000, earned: nil, silver: nil,
                          gold: nil, best: nil, left: 45000.5, silverPace: nil, goldPace: nil)),
        .done(DoneEvent(what: "runs", count: 20, more: true)),
        .help(HelpEvent(command: "ping", text: "ping: - answered by ok:ping")),
        .stats(StatsEvent([("connections", 3), ("fixes", 5400), ("negative_test", -1)])),
        .stats(StatsEvent(counters: [])),
        .note(NoteEvent(runner: "ann", reason: "stale", text: "first fix is 28 h old: send the current time")),
        .pace(PaceEvent(runner: "ann", distance: 10_000, elapsed: 3100, moving: 3000, pace: 300, current: 300,
                        latitude: 48.856614, longitude: 2.352219, timestamp: "1732953100", nextBadge: "callisto",
                        left: 1265.41, forecast: PaceForecast(eta: 1_732_962_998, finish: 12998.1, nextETA: 1_732_953_484))),
        .pace(PaceEvent(runner: "ann", distance: 10, elapsed: 3, moving: 3, pace: nil, current: nil, latitude: 0,
                        longitude: 0, timestamp: "3", nextBadge: "atmosphere", left: 794.67,
                        forecast: PaceForecast(eta: nil, finish: nil, nextETA: nil))),
        .alert(AlertEvent(runner: "ann", alert: "checkpoint", distance: 2000, elapsed: 598.9, pace: 297.5)),
        .alert(AlertEvent(runner: "ann", alert: "checkpoint", distance: 7000, elapsed: 2100, pace: nil)),
        .alert(AlertEvent(runner: "ann", alert: "off_pace", distance: 12_000, elapsed: 3720, pace: 330, target: 298.6,
                          off: 10.5)),
        .alert(AlertEvent(runner: "ann", alert: "off_pace", distance: 12_000, elapsed: 3720, pace: 330, target: 298.6,
                          off: 10.5, battery: 41)),
        .alert(AlertEvent(runner: "ann", alert: "sos", distance: 4210.5, elapsed: 1500, pace: nil, latitude: 48.856614,
                          longitude: 2.352219, timestamp: "1732951500", battery: 57)),
        .alert(AlertEvent(runner: "ann", alert: "sos", distance: 0, elapsed: 0, pace: nil, latitude: nil, longitude: nil,
                          timestamp: "1732950000.25")),
        .alert(AlertEvent(runner: "ann", alert: "battery", distance: 100, elapsed: 30, pace: nil, battery: 80)),
        .alert(AlertEvent(runner: "ann", alert: "battery_low", distance: 9000, elapsed: 2900, pace: nil, battery: 14)),
        .leader(LeaderEvent(runner: "bob", standing: Standing(position: 1, distance: 12_040.5, elapsed: 3400, gap: 0,
                                                             gapTime: 0))),
        .rank(RankEvent(runner: "ann", previous: nil, standing: Standing(position: 3, distance: 0, elapsed: 0,
                                                                        gap: 120.25, gapTime: nil))),
        .rank(RankEvent(runner: "ann", previous: 3, standing: Standing(position: 2, distance: 5, elapsed: 2,
                                                                      gap: 115.25, gapTime: 40.5))),
        .device(DeviceEvent(runner: "ann", id: "1f0c9a2b", label: "Ann's \"Pixel\" 7", created: 1_732_940_000,
                            app: "Traccar Client", seen: 1_732_950_000, battery: 81, encrypted: false)),
        .device(DeviceEvent(runner: "ann", id: "9b2e61c0", label: nil, created: 1_732_940_100, app: "OwnTracks", seen: nil,
                            battery: nil, encrypted: true)),
        .dropped(DroppedEvent(what: "msg", count: 12)),
        .point(PointEvent(runner: "ann", name: "Aid 2 \"Tiergarten\"", along: 10_012.5, timestamp: 1_732_953_100,
                          elapsed: 3100.5)),
        .pace({
            var pace = PaceEvent(runner: "ann", distance: 10_051.2, elapsed: 3100, moving: 3000, pace: 298.5, current: 300,
                                 latitude: 52.5, longitude: 13.4, timestamp: "1732953100", nextBadge: "callisto", left: 1214.3,
                                 forecast: PaceForecast(eta: 1_732_962_998, finish: 12_998.1, nextETA: 1_732_953_484))
            pace.course = PaceCourse(along: 10_012.5, togo: 32_182.5, nextPoint: "Aid 3", nextPointETA: 1_732_954_600,
                                     pointETAs: [1_732_954_600, 1_732_956_100, nil])
            return pace
        }()),
        .pace({
            var pace = PaceEvent(runner: "ann", distance: 42_300, elapsed: 12_900, moving: 12_800, pace: 302.6, current: nil,
                                 latitude: nil, longitude: nil, timestamp: "1732962900", nextBadge: nil, left: 0)
            pace.course = PaceCourse(along: 42_195, togo: 0)
            return pace
        }()),
        .alert(AlertEvent(runner: "ann", alert: "off_course", distance: 21_400, elapsed: 6400, pace: 310, off: 84)),
        .alert(AlertEvent(runner: "ann", alert: "back_on_course", distance: 21_900, elapsed: 6560, pace: 305)),
    ]

    @Test(arguments: samples)
    func roundTripsThroughLines(sample: ServerEvent) throws {
        let line = sample.line
        let parsed = try ServerEvent(line: line)
        #expect(parsed == sample, "\(line)")
        #expect(parsed.line == line)
        #expect(line.hasPrefix(sample.kind + ":"))
        var bytes: [UInt8] = []
        sample.append(to: &bytes)
        #expect(bytes == Array((line + "\n").utf8))
        #expect(try ServerEvent(event: sample.event) == sample)
    }

    @Test func everyKindHasASample() {
        #expect(Set(Self.samples.map(\.kind)) == Set(ServerEvent.kinds))
        #expect(Set(ServerEvent.kinds).count == ServerEvent.kinds.count)
    }

    @Test func formatsTheDocumentedLines() {
        #expect(Self.pace.line == "pace:ann dist=1234.57 time=600.5 moving=590.0 pace=477.9 cur=- lat=48.8566140 "
            + "lon=-2.3522199 ts=1732950600.25 next=moon left=374.77")
        #expect(Self.samples[6].line == "end:ann run=17 dist=5012.35 time=1622.4 moving=1604.5 pace=320.1 saved=yes "
            + "reason=stop filtered=12 inaccurate=9 jump=3")
        #expect(ErrorEvent(code: .notFound, reason: "no run 5").line == #"err:not_found "no run 5""#)
        #expect(Self.samples[8].line == #"msg:ann from=guest-7 text="Allez \"Ann\" !\\o/""#)
        #expect(DoneEvent(what: "badges", count: 33).line == "done:badges count=33 more=no")
        #expect(StatsEvent([("a", 1), ("b", 2)]).line == "stats:server a=1 b=2")
    }

    @Test func aDeviceLineQuotesItsTextsAndSaysWhatToDoWhenEncrypted() throws {
        let listed = DeviceEvent(runner: "ann", id: "1f0c9a2b", label: "Ann's Pixel", created: 1_732_940_000.4,
                                 app: "OsmAnd protocol", seen: 1_732_950_000.6, battery: 80.5, encrypted: false)
        #expect(listed.line == #"device:ann id=1f0c9a2b label="Ann's Pixel" created=1732940000 app="OsmAnd protocol" "#
            + "seen=1732950001 batt=81 encrypted=no")
        let encrypted = DeviceEvent(runner: "ann", id: "9b2e61c0", label: nil, created: 5, app: "OwnTracks", seen: nil,
                                    battery: nil, encrypted: true)
        #expect(encrypted.line.hasPrefix("device:ann id=9b2e61c0 label=- created=5 app=OwnTracks seen=- batt=- encrypted=yes note=\""))
        #expect(encrypted.note == DeviceEvent.encryptedNote && listed.note == nil)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(encrypted.json.utf8)) as? [String: Any])
        #expect(json["encrypted"] as? Bool == true && json["label"] is NSNull && json["seen"] is NSNull)
        #expect(json["note"] as? String == DeviceEvent.encryptedNote && json["runner"] as? String == "ann")
        let listedJSON = try #require(try JSONSerialization.jsonObject(with: Data(listed.json.utf8)) as? [String: Any])
        #expect(listedJSON["batt"] as? Int == 81 && listedJSON["created"] as? Int == 1_732_940_000)
        #expect(listedJSON["label"] as? String == "Ann's Pixel" && listedJSON["encrypted"] as? Bool == false)
    }

    @Test func paceFastPathMatchesGenericFormatter() {
        var generator = SystemRandomNumberGenerator()
        for index in 0..<2000 {
            func random(_ range: ClosedRange<Double>) -> Double { Double.random(in: range, using: &generator) }
            // Texts that need quoting (a space, an empty one) anywhere in the line take the generic path whole.
            let event = PaceEvent(
                runner: index % 11 == 0 ? "r \(index)" : "r\(index)", distance: random(0...100_000),
                elapsed: random(0...50_000),
                moving: random(0...50_000), pace: index % 3 == 0 ? nil : random(0...3000),
                current: index % 5 == 0 ? nil : random(-1...3000), latitude: random(-90...90),
                longitude: random(-180...180), timestamp: index % 7 == 0 ? "weird ts" : "1732950\(index).5",
                nextBadge: index % 4 == 0 ? nil : index % 13 == 0 ? "" : "badge_\(index)", left: random(-0.004...1e7))
            var fast = Array("before\n".utf8)
            event.append(to: &fast)
            var generic = Array("before\n".utf8)
            event.event.append(to: &generic)
            #expect(fast == generic)
        }
    }

    @Test func typedDecodingNamesWhatIsMissing() {
        #expect(throws: WireError(.badArgument, "pace: missing dist=")) {
            try PaceEvent(line: "pace:ann time=1")
        }
        #expect(throws: WireError(.badNumber, "pace: dist= is not a decimal number")) {
            try PaceEvent(line: "pace:ann dist=1e5")
        }
        #expect(throws: WireError(.badArgument, "expected a pace: event, got run:")) {
            try PaceEvent(line: "run:ann id=1 ts=1")
        }
        #expect(throws: WireError(.badArgument, "badge: tier= must be one of earned|silver|gold|best")) {
            try BadgeEvent(line: "badge:a id=x name=X tier=bronze dist=1 time=1 speed=1 lat=1 lon=1 ts=1")
        }
        #expect(throws: WireError(.badArgument, "end: saved= must be yes or no")) {
            try RunEndedEvent(line: "end:a run=1 dist=0 time=0 moving=0 pace=- saved=maybe reason=stop filtered=0")
        }
        #expect(throws: WireError(.badArgument, "err: unknown code nope")) { try ErrorEvent(line: "err:nope \"x\"") }
        #expect(throws: WireError(.unknownCommand, "unknown event kind weather")) { try ServerEvent(line: "weather:x") }
    }

    @Test func ignoresUnknownFields() throws {
        let event = try AckEvent(line: "ack:ann ts=5 future=1 \"note\"")
        #expect(event == AckEvent(runner: "ann", timestamp: "5"))
    }

    @Test func elevationIsTrailingAndOptionalOnEndAndSummary() throws {
        let end = RunEndedEvent(runner: "cy", runID: 19, distance: 8012.4, elapsed: 2710, moving: 2650.5, pace: 330.8,
                                saved: true, reason: .stop, filtered: ["jump": 1], elevationGain: 84.61,
                                elevationLoss: 79.24)
        #expect(end.line == "end:cy run=19 dist=8012.40 time=2710.0 moving=2650.5 pace=330.8 saved=yes reason=stop "
            + "filtered=1 jump=1 gain=84.6 loss=79.2")
        let read = try RunEndedEvent(line: end.line)
        #expect(read.elevationGain == 84.6 && read.elevationLoss == 79.2 && read.filtered == ["jump": 1])
        // Without altitudes the fields are left out, and a line without them reads as nil.
        var flat = end
        flat.elevationGain = nil
        flat.elevationLoss = nil
        #expect(!flat.line.contains("gain") && !flat.line.contains("loss"))
        #expect(try RunEndedEvent(line: flat.line).elevationGain == nil)
        #expect(throws: WireError.self) {
            try RunEndedEvent(line: "end:a run=1 dist=0 time=0 moving=0 pace=- saved=no reason=stop filtered=0 gain=high")
        }
        let summary = RunSummaryEvent(runner: "ann", runID: 17, status: "saved", date: "2024-11-30T07:00:00Z",
                                      distance: 5012.35, elapsed: 1622.4, moving: 1604.5, pace: 320.1, filtered: 12,
                                      elevationGain: 12, elevationLoss: 0.04)
        #expect(summary.line.hasSuffix(" filtered=12 gain=12.0 loss=0.0"))
        #expect(try RunSummaryEvent(line: summary.line).elevationGain == 12)
        #expect(summary.json.hasSuffix(#""filtered":12,"gain":12.0,"loss":0.0}"#))
        #expect(try RunSummaryEvent(line: "summary:ann run=17 status=saved date=2024-11-30T07:00:00Z dist=1.00 "
            + "time=1.0 moving=1.0 pace=- filtered=0").elevationLoss == nil)
    }

    @Test func endedEventCountsFilterReasons() throws {
        let event = try RunEndedEvent(line: "end:a run=1 dist=0 time=0 moving=0 pace=- saved=no reason=timeout filtered=5 "
            + "duplicate=2 out_of_order=3")
        #expect(event.filtered == ["duplicate": 2, "out_of_order": 3])
        #expect(event.filteredCount == 5)
        #expect(event.reason == .timeout)
        #expect(Set(RunEndedEvent.filterReasons).count == 7)
    }

    @Test func errorEventCarriesAWireError() {
        let error = WireError(.storage, "disk full")
        #expect(ErrorEvent(error).error == error)
        #expect(ErrorEvent(error).line == #"err:storage "disk full""#)
    }

    @Test func standardHelpCoversEveryCommand() {
        #expect(HelpEvent.standard.map(\.command) == Command.words)
    }

    @Test func errorCodesAreUniqueAndClassified() {
        #expect(Set(ErrorCode.allCases.map(\.rawValue)).count == ErrorCode.allCases.count)
        #expect(ErrorCode.busy.closesConnection && !ErrorCode.busy.isParseError)
        #expect(ErrorCode.badNumber.isParseError && !ErrorCode.badNumber.closesConnection)
    }
}
