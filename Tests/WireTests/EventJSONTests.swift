import Foundation
import Testing
@testable import Wire

/// The JSON form and the line come from one field list: for every event, parsing the line with Wire and
/// the JSON with Foundation gives the same keys and the same values.
@Suite struct EventJSONTests {
    /// Keys whose values look like numbers but are texts echoed as sent (the runner's own timestamps).
    static let textKeys: [String: Set<String>] = ["run": ["ts"], "pace": ["ts"], "ack": ["ts"], "alert": ["ts"]]

    /// Events beyond protocol.md's examples: odd texts, every null, every flag.
    static let extraEvents: [ServerEvent] = [
        .cheer(CheerEvent(runner: "ann", from: "bob", text: "quote \" backslash \\ newline \n tab \t bell \u{7} é 🌙")),
        .cheer(CheerEvent(runner: "ann", from: "anon", text: "yes")),
        .cheer(CheerEvent(runner: "ann", from: "anon", text: "12.5")),
        .pace(PaceEvent(runner: "ann", distance: 1234.5, elapsed: 61, moving: 60, pace: nil, current: 301.25,
                        latitude: -33.8688197, longitude: 151.2092955, timestamp: "1732950005.25", nextBadge: nil,
                        left: 0)),
        .ended(RunEndedEvent(runner: "ann", runID: 3, distance: 0, elapsed: 0, moving: 0, pace: nil, saved: false,
                             reason: .timeout, filtered: ["jump": 2, "stale": 1])),
        .board(BoardEvent(runner: "ann", badgeID: "moon", badgeName: "The Moon", distance: 1609.344, earned: nil,
                          silver: nil, gold: nil, best: nil, left: 1609.344, silverPace: nil, goldPace: nil)),
        .error(ErrorEvent(code: .badArgument, reason: "a \"quoted\" reason")),
        .done(DoneEvent(what: "runs", count: 0, more: true)),
        .stats(StatsEvent([("connections", 0), ("fixes_accepted", 9_000_000_000)])),
    ]

    static let lines: [String] = ProtocolDocTests.eventLines + extraEvents.map(\.line)

    @Test func everyKindIsCovered() throws {
        let kinds = Set(try Self.lines.map { try Event.parse($0).kind })
        #expect(kinds == Set(ServerEvent.kinds))
    }

    @Test(arguments: lines) func jsonAndLineAgreeFieldByField(_ line: String) throws {
        let event = try ServerEvent(line: line)
        let parsedLine = try Event.parse(line)
        let json = event.json
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any], "\(json)")
        let subjectKey = event.runner == nil ? "subject" : "runner"
        #expect(object["kind"] as? String == parsedLine.kind)
        #expect(object[subjectKey] as? String == parsedLine.subject)
        var expectedKeys: Set<String> = ["kind", subjectKey]
        for field in parsedLine.fields {
            // A field named like the object's own keys (an alert's `kind=`) is under the event's kind word.
            let key = field.key == "kind" || field.key == subjectKey ? parsedLine.kind : field.key ?? "text"
            guard expectedKeys.insert(key).inserted else { continue }
            let value = try #require(object[key], "\(key) missing from \(json)")
            if let text = value as? String {
                #expect(text == field.value, "\(key)")
                // A number the line shows must be a JSON number, unless it is an echoed text.
                let isText = parsedLine.kind == "ok" || parsedLine.kind == "msg" || Self.textKeys[parsedLine.kind]?.contains(key) == true
                    || ["id", "name", "date", "earned", "silver", "gold", "from", "to"].contains(key)
                #expect(isText || NumberFormat.parseDecimal(field.value) == nil, "\(key)=\(field.value) became a string")
                #expect(field.value != "-" || isText, "\(key)=- became a string")
            } else {
                // Numbers, nulls and booleans keep the line's very characters (decimals included).
                let literal: String
                switch (value, field.value) {
                case (let array as [Any], _):
                    // A list (`a,b,-`) is an array of the same numbers, null for `-`.
                    literal = "[" + field.value.split(separator: ",").map { $0 == "-" ? "null" : String($0) }.joined(separator: ",") + "]"
                    #expect(array.count == field.value.split(separator: ",").count, "\(key)")
                case (is NSNull, "-"), (is NSNull, "no"): literal = "null"
                case (_, "yes"): literal = "true"
                case (_, "no"): literal = "false"
                default:
                    literal = field.value
                    #expect((value as? NSNumber)?.doubleValue == NumberFormat.parseDecimal(field.value), "\(key)")
                }
                #expect(json.contains("\"\(key)\":\(literal)"), "\(key): \(json) lacks \(literal)")
            }
        }
        #expect(Set(object.keys) == expectedKeys)
    }

    @Test func aPaceEventReadsAsTheDocumentSays() {
        let pace = PaceEvent(runner: "ann", distance: 12.4, elapsed: 5, moving: 5, pace: 402.9, current: nil,
                             latitude: 48.856725, longitude: 2.35223, timestamp: "1732950005", nextBadge: "atmosphere",
                             left: 792.26)
        #expect(pace.json == #"{"kind":"pace","runner":"ann","dist":12.40,"time":5.0,"moving":5.0,"pace":402.9,"#
            + #""cur":null,"lat":48.8567250,"lon":2.3522300,"ts":"1732950005","next":"atmosphere","left":792.26}"#)
        #expect(ErrorEvent(code: .notFound, reason: "no runner x").json
            == #"{"kind":"err","subject":"not_found","text":"no runner x"}"#)
        #expect(DoneEvent(what: "runs", count: 2, more: true).json == #"{"kind":"done","subject":"runs","count":2,"more":true}"#)
    }

    @Test func anAlertSaysWhichAlertItIs() throws {
        let lines = ["alert:ann kind=off_pace dist=12000.00 time=3720.0 pace=330.0 target=298.6 off=10.5",
                     "alert:ann kind=back_on_pace dist=12900.00 time=4010.0 pace=305.0 target=298.6 off=2.1",
                     "alert:ann kind=checkpoint dist=1000.00 time=301.4 pace=301.4"]
        var alerts: [String] = []
        for line in lines {
            let json = try ServerEvent(line: line).json
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
            #expect(object["kind"] as? String == "alert", "the event's kind, as the stream's event: says")
            alerts.append(try #require(object["alert"] as? String, "\(json)"))
        }
        #expect(alerts == ["off_pace", "back_on_pace", "checkpoint"])
        #expect(try ServerEvent(line: lines[0]).json == #"{"kind":"alert","runner":"ann","alert":"off_pace","dist":12000.00,"#
            + #""time":3720.0,"pace":330.0,"target":298.6,"off":10.5}"#)
    }

    @Test func aPhonesAlertsCarryWhereWhenAndTheBattery() throws {
        let sos = "alert:ann kind=sos dist=4210.50 time=1500.0 pace=- lat=48.8566140 lon=2.3522190 ts=1732951500 batt=57"
        #expect(try ServerEvent(line: sos).json == #"{"kind":"alert","runner":"ann","alert":"sos","dist":4210.50,"#
            + #""time":1500.0,"pace":null,"lat":48.8566140,"lon":2.3522190,"ts":"1732951500","batt":57}"#)
        let withheld = "alert:ann kind=sos dist=0.00 time=0.0 pace=- lat=- lon=- ts=1732950000"
        #expect(try ServerEvent(line: withheld).json.contains(#""lat":null,"lon":null,"ts":"1732950000"}"#))
        let low = try AlertEvent(line: "alert:ann kind=battery_low dist=9000.00 time=2900.0 pace=- batt=14")
        #expect(low.battery == 14 && low.latitude == nil && low.timestamp == nil)
        #expect(throws: WireError.self) { try AlertEvent(line: "alert:ann kind=sos dist=0.00 time=0.0 pace=- batt=14") }
    }

    @Test func controlCharactersAreEscaped() {
        let json = CheerEvent(runner: "ann", from: "x", text: "a\u{1}b\u{7F}c\r").json
        #expect(json == #"{"kind":"msg","runner":"ann","from":"x","text":"a\u0001b\u007fc\r"}"#)
    }

    @Test func onlyJSONNumbersAreWrittenBare() {
        for text in ["0", "-1", "12.40", "0.5", "-0.25"] { #expect(JSONSyntax.isNumber(text), "\(text)") }
        for text in ["", "-", "007", "1.", ".5", "+1", "1e5", "0x1", "1.2.3", "--1"] { #expect(!JSONSyntax.isNumber(text), "\(text)") }
        let odd = Event(kind: "x", subject: "s", fields: [Event.Field(key: "n", value: "007", shape: .number),
                                                          Event.Field(key: "f", value: "maybe", shape: .flag)])
        #expect(odd.json() == #"{"kind":"x","runner":"s","n":"007","f":"maybe"}"#)
    }

    @Test func theShapeIsNotPartOfEquality() throws {
        let typed = PaceEvent(runner: "ann", distance: 1, elapsed: 1, moving: 1, pace: nil, current: nil, latitude: 0,
                              longitude: 0, timestamp: "1", nextBadge: nil, left: 0).event
        #expect(try Event.parse(typed.line) == typed)
    }
}

@Suite struct PaceJSONFastPathTests {
    @Test func theFastPathWritesTheGenericBytes() {
        var generator = SystemRandomNumberGenerator()
        let names = ["ann", "Bob_2", "x.y-z", "é", "quote\"d", "back\\slash", "-"]
        for index in 0..<2000 {
            var pace = PaceEvent(
                runner: names[index % names.count], distance: Double.random(in: 0...100_000, using: &generator),
                elapsed: Double.random(in: 0...50_000, using: &generator), moving: Double.random(in: 0...50_000, using: &generator),
                pace: index % 5 == 0 ? nil : Double.random(in: 100...2000, using: &generator),
                current: index % 3 == 0 ? nil : Double.random(in: 100...2000, using: &generator),
                latitude: Double.random(in: -90...90, using: &generator), longitude: Double.random(in: -180...180, using: &generator),
                timestamp: index % 11 == 0 ? "17329\"5" : String(1_732_950_000 + index),
                nextBadge: index % 4 == 0 ? nil : names[(index / 3) % names.count], left: Double.random(in: 0...5000, using: &generator))
            // On a course every few: `along`, `togo` and the next point are in the JSON too (the pages need them).
            if index % 7 == 0 {
                pace.forecast = PaceForecast(eta: 1_732_960_000, finish: 9_000, nextETA: nil)
                pace.course = PaceCourse(along: Double(index), togo: 5_000, nextPoint: index % 2 == 0 ? "Aid 3" : nil,
                                         nextPointETA: index % 2 == 0 ? 1_732_955_000 : nil,
                                         pointETAs: index % 2 == 0 ? [1_732_955_000, nil, 1_732_956_000] : [])
            }
            var fast: [UInt8] = []
            pace.appendJSON(to: &fast)
            var generic: [UInt8] = []
            pace.event.appendJSON(to: &generic, subjectKey: "runner")
            #expect(fast == generic, "\(pace.line)")
            var viaServerEvent: [UInt8] = []
            ServerEvent.pace(pace).appendJSON(to: &viaServerEvent)
            #expect(viaServerEvent == generic)
            if pace.course != nil { #expect(String(decoding: fast, as: UTF8.self).contains(#","togo":5000.00"#), "\(pace.line)") }
            if pace.course?.pointETAs.isEmpty == false {
                #expect(String(decoding: fast, as: UTF8.self).contains(#""point_etas":[1732955000,null,1732956000]"#))
            }
        }
    }
}
