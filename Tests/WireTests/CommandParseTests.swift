import Testing
@testable import Wire

/// Parses `line` both as text and as bytes and checks the two agree.
private func parseBoth(_ line: String) throws(WireError) -> Command {
    let fromText = try Command.parse(line)
    let fromBytes = try Command.parse(Array(line.utf8))
    #expect(fromText == fromBytes)
    return fromText
}

private func errorCode(_ bytes: [UInt8]) -> ErrorCode? {
    do {
        _ = try Command.parse(bytes)
        return nil
    } catch {
        return error.code
    }
}

private func fix(_ lat: Double, _ lon: Double, _ acc: Double, _ ts: Double, _ text: String) -> Command {
    .location(LocationCommand(latitude: lat, longitude: lon, accuracy: acc, timestamp: ts, timestampText: text))
}

@Suite struct CommandParseTests {
    static let valid: [(String, Command)] = [
        ("iam:ann", .identify(name: "ann", key: nil)),
        ("iam:Ann_B.c-9 3f2a9c0e5b7d41e8a6c2f09b1d4e7a53", .identify(name: "Ann_B.c-9", key: "3f2a9c0e5b7d41e8a6c2f09b1d4e7a53")),
        ("iam:  ann   KEY1  ", .identify(name: "ann", key: "KEY1")),
        (String(repeating: "n", count: 32).withPrefix("iam:"), .identify(name: String(repeating: "n", count: 32), key: nil)),
        ("iam:a " + String(repeating: "k", count: 64), .identify(name: "a", key: String(repeating: "k", count: 64))),
        ("loc:48.8566140,2.3522190,5,1732950000", fix(48.856614, 2.352219, 5, 1_732_950_000, "1732950000")),
        ("loc:-33.5,-70.25,12.75,1732950000.125", fix(-33.5, -70.25, 12.75, 1_732_950_000.125, "1732950000.125")),
        ("loc: 1.5 , 2 ,3 , 4 ", fix(1.5, 2, 3, 4, "4")),
        ("loc:0,0,5,1", fix(0, 0, 5, 1, "1")),
        ("loc:90,180,-1,0", fix(90, 180, -1, 0, "0")),
        ("loc:-90,-180,0,-5", fix(-90, -180, 0, -5, "-5")),
        ("loc:1,2,3,0001732950000.50", fix(1, 2, 3, 1_732_950_000.5, "0001732950000.50")),
        ("loc:1.23456789012345678,2,3,4", fix(1.23456789012345678, 2, 3, 4, "4")),
        ("loc:1,2,3,4\r", fix(1, 2, 3, 4, "4")),
        // Found by the fuzzer: a 40-digit accuracy, the longest a field may be, must still round-trip.
        ("loc: 48.8566 , 2.3522 , 5333333333333333333333333333333333333330, 1",
         fix(48.8566, 2.3522, 5333333333333333333333333333333333333330, 1, "1")),
        ("loc:1,2,-533333333333333333333333333333333333333,4", fix(1, 2, -533333333333333333333333333333333333333, 4, "4")),
        ("stop:", .stop(save: true)),
        ("stop:discard", .stop(save: false)),
        ("watch:ann", .watch(.runner("ann"))),
        ("watch:*", .watch(.everyone)),
        ("coach:bob", .coach(.runner("bob"))),
        ("coach:*", .coach(.everyone)),
        ("unwatch:ann", .unwatch(.runner("ann"))),
        ("unwatch:*", .unwatch(.everyone)),
        ("msg:Allez Ann, plus que 2 km !", .cheer("Allez Ann, plus que 2 km !")),
        ("msg:  héllo 🌙  ", .cheer("héllo 🌙")),
        ("msg:" + String(repeating: "é", count: 280), .cheer(String(repeating: "é", count: 280))),
        ("ping:", .ping),
        ("  ping:  \r", .ping),
        ("help:", .help),
        ("quit:", .quit),
        ("stats:", .stats),
        ("runs:ann", .listRuns(name: "ann", offset: 0, limit: 20)),
        ("runs:ann 40", .listRuns(name: "ann", offset: 40, limit: 20)),
        ("runs:ann 0 100", .listRuns(name: "ann", offset: 0, limit: 100)),
        ("runs:ann 5 1", .listRuns(name: "ann", offset: 5, limit: 1)),
        ("run:17", .showRun(id: 17)),
        ("run:9223372036854775807", .showRun(id: .max)),
        ("badges:ann", .showBadges(name: "ann")),
    ]

    @Test(arguments: valid)
    func parsesValidLines(line: String, expected: Command) throws {
        #expect(try parseBoth(line) == expected)
    }

    @Test(arguments: valid)
    func canonicalLineRoundTrips(line: String, expected: Command) throws {
        let parsed = try parseBoth(line)
        #expect(try Command.parse(parsed.line) == parsed)
        #expect(parsed.line.hasPrefix(parsed.word + ":"))
    }

    static let invalid: [(String, ErrorCode)] = [
        ("hello:", .unknownCommand),
        ("PING:", .unknownCommand),
        ("Loc:1,2,3,4", .unknownCommand),
        (":", .unknownCommand),
        ("ping", .missingColon),
        ("hello world", .missingColon),
        ("", .missingColon),
        ("   \t ", .missingColon),
        ("\r", .missingColon),
        ("ping:x", .badArgument),
        ("help:me", .badArgument),
        ("quit:now", .badArgument),
        ("stats:all", .badArgument),
        ("stop:save", .badArgument),
        ("loc:", .badArgument),
        ("loc:1,2,3", .badArgument),
        ("loc:1,2,3,4,5", .badArgument),
        ("loc:1,2,3,4,", .badArgument),
        ("loc:1,,3,4", .badNumber),
        ("loc:1,2,3, ", .badNumber),
        ("loc:nan,2,3,4", .badNumber),
        ("loc:1,inf,3,4", .badNumber),
        ("loc:1,2,-inf,4", .badNumber),
        ("loc:1,2,3,1e999", .badNumber),
        ("loc:1e1,2,3,4", .badNumber),
        ("loc:0x1p3,2,3,4", .badNumber),
        ("loc:+1,2,3,4", .badNumber),
        ("loc:.5,2,3,4", .badNumber),
        ("loc:5.,2,3,4", .badNumber),
        ("loc:1.2.3,2,3,4", .badNumber),
        ("loc:-,2,3,4", .badNumber),
        ("loc:1 2,2,3,4", .badNumber),
        ("loc:a,2,3,4", .badNumber),
        ("loc:1,2,3," + String(repeating: "1", count: 41), .badNumber),
        ("loc:90.0000001,0,5,1", .badCoordinate),
        ("loc:-91,0,5,1", .badCoordinate),
        ("loc:0,180.5,5,1", .badCoordinate),
        ("loc:0,-181,5,1", .badCoordinate),
        ("iam:", .badName),
        ("iam:" + String(repeating: "n", count: 33), .badName),
        ("iam:ann!", .badName),
        ("iam:änn", .badName),
        ("iam:a/b", .badName),
        ("iam:.", .badName),
        ("iam:..", .badName),
        ("watch:..", .badName),
        ("runs:.", .badName),
        ("iam:ann key-with-dash", .badKey),
        ("iam:ann " + String(repeating: "k", count: 65), .badKey),
        ("iam:ann k1 k2", .badArgument),
        ("watch:", .badName),
        ("watch:**", .badName),
        ("watch:a b", .badName),
        ("coach:bad name", .badName),
        ("coach:ann foo=1", .badArgument),
        ("coach:ann every=", .badArgument),
        ("coach:ann every=500 0123456789abcdef0123456789abcdef", .badArgument),
        ("coach:* often=5", .badArgument),
        ("watch:ann every=500", .badArgument),
        ("unwatch:", .badName),
        ("msg:", .badArgument),
        ("msg:   ", .badArgument),
        ("msg:tab\tinside", .badArgument),
        ("msg:bell\u{07}", .badArgument),
        ("msg:c1\u{85}control", .badArgument),
        ("msg:" + String(repeating: "x", count: 281), .badArgument),
        ("runs:", .badName),
        ("runs:ann x", .badNumber),
        ("runs:ann 1.5", .badNumber),
        ("runs:ann -1", .badArgument),
        ("runs:ann 0 0", .badArgument),
        ("runs:ann 0 101", .badArgument),
        ("runs:ann 0 20 9", .badArgument),
        ("runs:ann 99999999999999999999", .badNumber),
        ("run:", .badNumber),
        ("run:abc", .badNumber),
        ("run:0", .badArgument),
        ("run:-3", .badArgument),
        ("run:9223372036854775808", .badNumber),
        ("badges:", .badName),
        ("badges:a b", .badName),
        ("ping:" + String(repeating: " ", count: 4093), .lineTooLong),
    ]

    @Test(arguments: invalid)
    func refusesInvalidLines(line: String, code: ErrorCode) {
        #expect(errorCode(Array(line.utf8)) == code)
        do {
            _ = try Command.parse(line)
            Issue.record("\(line) parsed")
        } catch {
            #expect(error.code == code)
            #expect(!error.reason.isEmpty)
            #expect(error.code.isParseError)
        }
    }

    @Test func byteLevelErrors() {
        #expect(errorCode(Array("ping:".utf8) + [0]) == .nulByte)
        #expect(errorCode([0]) == .nulByte)
        #expect(errorCode(Array("loc:1,2".utf8) + [0] + Array(",3,4".utf8)) == .nulByte)
        #expect(errorCode(Array("msg:".utf8) + [0xFF]) == .badUTF8)
        #expect(errorCode(Array("msg:".utf8) + [0xC3]) == .badUTF8)              // truncated sequence
        #expect(errorCode(Array("msg:".utf8) + [0xC0, 0xAF]) == .badUTF8)        // overlong '/'
        #expect(errorCode(Array("msg:".utf8) + [0xE0, 0x80, 0xAF]) == .badUTF8)  // overlong
        #expect(errorCode(Array("msg:".utf8) + [0xED, 0xA0, 0x80]) == .badUTF8)  // surrogate
        #expect(errorCode(Array("msg:".utf8) + [0xF4, 0x90, 0x80, 0x80]) == .badUTF8)  // > U+10FFFF
        #expect(errorCode(Array("msg:ok".utf8) + [0xE2, 0x82, 0xAC]) == nil)     // "€" is fine
        #expect(errorCode(Array("ping:".utf8) + [0x0D, 0x0A]) == nil)           // CRLF tolerated
        // Exactly at the limit is fine; one more byte is not (the \r does not count).
        let atLimit = "ping:" + String(repeating: " ", count: 4091)
        #expect(errorCode(Array(atLimit.utf8) + [0x0D]) == nil)
        #expect(errorCode(Array((atLimit + " ").utf8)) == .lineTooLong)
    }

    @Test func parsesFromNonContiguousCollectionsAndSlices() throws {
        let bytes = Array("xxloc:1,2,3,4".utf8)
        #expect(try Command.parse(bytes[2...]) == fix(1, 2, 3, 4, "4"))
        #expect(try Command.parse(Array("ping:".utf8).lazy.map { $0 }) == .ping)
    }

    @Test func locationKeepsTimestampTextAndExactValues() throws {
        guard case .location(let fix) = try Command.parse("loc:48.8566140,-2.3522190,4.5,1732950000.000") else {
            Issue.record("not a location")
            return
        }
        #expect(fix.latitude == 48.856614)
        #expect(fix.longitude == -2.352219)
        #expect(fix.accuracy == 4.5)
        #expect(fix.timestamp == 1_732_950_000)
        #expect(fix.timestampText == "1732950000.000")
    }

    @Test func formatsCanonicalLines() {
        #expect(Command.identify(name: "ann", key: nil).line == "iam:ann")
        #expect(Command.identify(name: "ann", key: "k").line == "iam:ann k")
        #expect(Command.location(LocationCommand(latitude: 0.00001, longitude: -1e-7, accuracy: 5, timestamp: 1_732_950_000)).line
            == "loc:0.00001,-0.0000001,5.0,1732950000.0")
        #expect(Command.stop(save: false).line == "stop:discard")
        #expect(Command.watch(.everyone).line == "watch:*")
        #expect(Command.listRuns(name: "ann", offset: 0, limit: 20).line == "runs:ann 0 20")
        #expect(Command.showRun(id: 5).line == "run:5")
        var bytes: [UInt8] = []
        Command.ping.append(to: &bytes)
        #expect(bytes == Array("ping:\n".utf8))
    }

    @Test func everyWordParses() throws {
        #expect(Set(Command.words).count == Command.words.count)
        let samples: [Command] = [
            .identify(name: "a", key: nil), .location(LocationCommand(latitude: 1, longitude: 2, accuracy: 3, timestamp: 4)),
            .stop(save: true), .watch(.everyone), .coach(.everyone), .unwatch(.everyone), .cheer("hi"), .ping, .help,
            .quit, .stats, .listRuns(name: "a", offset: 0, limit: 20), .showRun(id: 1), .showBadges(name: "a"),
            .addDevice(label: nil), .removeDevice(token: "abc123"), .goal(GoalCommand(distance: 42_195, targetTime: 12_600)),
            .leaders(goal: nil), .setPrivate(true), .privacyZone(200), .share(seconds: nil), .unshare(token: nil),
            .replay(runID: 17, speed: 10), .course(name: "berlin"),
        ]
        #expect(try Command.parse("course:off") == .course(name: nil))
        #expect(try Command.parse("course:berlin-2027") == .course(name: "berlin-2027"))
        for bad in ["course:", "course:two words", "course:bad/name"] {
            #expect(throws: WireError.self, "\(bad)") { try Command.parse(bad) }
        }
        #expect(try Command.parse("replay:17") == .replay(runID: 17, speed: 1))
        #expect(try Command.parse("replay:off") == .replay(runID: nil, speed: 1))
        for bad in ["replay:", "replay:17 0.5", "replay:17 101", "replay:0", "replay:17 2 3", "replay:x"] {
            #expect(throws: WireError.self, "\(bad)") { try Command.parse(bad) }
        }
        for (line, command) in [("watch:ann 0123456789abcdef0123456789abcdef",
                                 Command.watch(.runner("ann"), token: "0123456789abcdef0123456789abcdef")),
                                ("coach:ann 0123456789abcdef0123456789ABCDEF every=500",
                                 .coach(.runner("ann"), token: "0123456789abcdef0123456789ABCDEF", every: 500)),
                                ("private:off", .setPrivate(false)), ("privacy:0", .privacyZone(0)),
                                ("share:3600", .share(seconds: 3600)), ("unshare:abc123", .unshare(token: "abc123"))] {
            #expect(try Command.parse(line) == command, "\(line)")
            #expect(try Command.parse(command.line) == command)
        }
        for bad in ["watch:* 0123456789abcdef0123456789abcdef", "watch:ann bad-token", "watch:ann abc123", "private:", "private:yes", "privacy:1001", "privacy:-1",
                    "share:59", "share:604801", "unshare:", "unshare:no-dashes"] {
            #expect(throws: WireError.self, "\(bad)") { try Command.parse(bad) }
        }
        #expect(try Command.parse("coach:ann every=1000") == .coach(.runner("ann"), every: 1000))
        #expect(try Command.parse("coach:* every=250.5") == .coach(.everyone, every: 250.5))
        #expect(try Command.parse("goal:off") == .goal(nil))
        #expect(try Command.parse("goal:42195 12600 3") == .goal(GoalCommand(distance: 42_195, targetTime: 12_600,
                                                                              marginPercent: 3)))
        #expect(try Command.parse("leaders:42195") == .leaders(goal: 42_195))
        #expect(try Command.parse("leaders:course=berlin") == .courseLeaders("berlin"))
        #expect(throws: WireError(.badName, "leaders: course= needs a course name")) { try Command.parse("leaders:course=") }
        for bad in ["coach:ann every=99", "coach:ann every=x", "coach:ann often=5", "goal:", "goal:99", "goal:1000 59",
                    "goal:1000 600 51", "goal:1000 600 5 1", "goal:x", "leaders:5", "leaders:x"] {
            #expect(throws: WireError.self, "\(bad)") { try Command.parse(bad) }
        }
        for sample: Command in [.coach(.runner("ann"), every: 1000), .goal(nil), .leaders(goal: 10_000),
                                .goal(GoalCommand(distance: 5000, targetTime: 1500, marginPercent: 2.5))] {
            #expect(try Command.parse(sample.line) == sample)
        }
        #expect(samples.map(\.word) == Command.words)
        #expect(try Command.parse("undevice:*") == .removeDevice(token: nil))
        #expect(throws: WireError.self) { try Command.parse("undevice:") }
        #expect(throws: WireError.self) { try Command.parse("undevice:no-dashes") }
        for sample in samples {
            #expect(try Command.parse(sample.line) == sample)
        }
    }

    @Test func deviceTakesALabelOrListAndUndeviceAnID() throws {
        #expect(try Command.parse("device:") == .addDevice(label: nil))
        #expect(try Command.parse("device:  Ann's Pixel 7 ") == .addDevice(label: "Ann's Pixel 7"))
        #expect(try Command.parse("device:Téléphone de Zoé 📱") == .addDevice(label: "Téléphone de Zoé 📱"))
        #expect(try Command.parse("device:list") == .listDevices)
        #expect(try Command.parse("device:List") == .addDevice(label: "List"), "only the word list is reserved")
        #expect(try Command.parse("device:lists") == .addDevice(label: "lists"))
        let forty = String(repeating: "é", count: 40)
        #expect(try Command.parse("device:" + forty) == .addDevice(label: forty))
        for bad in ["device:" + forty + "x", "device:a\u{7}b", "device:a\u{85}b"] {
            #expect(throws: WireError.self, "\(bad)") { try Command.parse(bad) }
        }
        for command: Command in [.addDevice(label: nil), .addDevice(label: "Ann's \"Pixel\""), .listDevices] {
            #expect(try Command.parse(command.line) == command, "\(command.line)")
            #expect(command.word == "device")
        }
        #expect(Command.listDevices.line == "device:list")
        #expect(try Command.parse("undevice:1f0c9a2b") == .removeDevice(token: "1f0c9a2b"))
        #expect(try Command.checkedDeviceLabel("Ann's Pixel") == "Ann's Pixel")
        #expect(throws: WireError.self) { try Command.checkedDeviceLabel("") }
    }

    /// A name is a URL path segment as it is (`/runners/NAME`): `.` and `..` cannot be one, dots elsewhere can.
    @Test func aNameIsNeverADotSegment() throws {
        for name in [".", ".."] {
            #expect(!Command.isValidName(name))
            #expect(throws: WireError(.badName, "a name cannot be . or .. (no page could show it)")) {
                try Command.parse("iam:\(name)")
            }
        }
        for name in ["...", ".ann", "ann.", "a..b", "-", "_"] {
            #expect(Command.isValidName(name), "\(name)")
            #expect(try Command.parse("iam:\(name)") == .identify(name: name, key: nil))
        }
    }

    /// An option `coach:` (or `watch:`) does not take is named as one, not taken for part of a name.
    @Test func anUnknownOptionIsABadArgumentNamingIt() {
        #expect(throws: WireError(.badArgument, "coach: unknown option foo= (coach:NAME [TOKEN] [every=METRES])")) {
            try Command.parse("coach:ann foo=1")
        }
        #expect(throws: WireError(.badArgument, "coach: every= goes last, with a number (coach:NAME [TOKEN] [every=METRES])")) {
            try Command.parse("coach:ann every=500 0123456789abcdef0123456789abcdef")
        }
        #expect(throws: WireError(.badArgument, "watch: unknown option every= (watch:NAME [TOKEN])")) {
            try Command.parse("watch:ann every=500")
        }
    }

    /// A number out of its range is told the range, however far out it is (and bad_number only when it is no
    /// whole number, or past 64 bits, §7).
    @Test func anOutOfRangeNumberIsToldItsRange() {
        let expected: [(String, WireError)] = [
            ("runs:ann 2147483648 1", WireError(.badArgument, "runs: OFFSET must be between 0 and 2147483647")),
            ("runs:ann -1", WireError(.badArgument, "runs: OFFSET must be between 0 and 2147483647")),
            ("runs:ann 99999999999999999999", WireError(.badNumber, "runs: OFFSET must be between 0 and 2147483647")),
            ("runs:ann 0 101", WireError(.badArgument, "runs: LIMIT must be between 1 and 100")),
            ("runs:ann x", WireError(.badNumber, "runs: OFFSET is a whole number")),
            ("run:0", WireError(.badArgument, "a run id must be between 1 and 9223372036854775807")),
            ("run:9223372036854775808", WireError(.badNumber, "a run id must be between 1 and 9223372036854775807")),
            ("replay:-3 2", WireError(.badArgument, "a run id must be between 1 and 9223372036854775807")),
        ]
        for (line, error) in expected {
            #expect(throws: error, "\(line)") { try Command.parse(line) }
        }
    }

    @Test func validatesNamesAndKeys() {
        #expect(Command.isValidName("Ann_B.c-9"))
        #expect(!Command.isValidName(""))
        #expect(!Command.isValidName("a b"))
        #expect(!Command.isValidName(String(repeating: "a", count: 33)))
        #expect(Command.isValidKey("3f2a9c0e5b7d41e8a6c2f09b1d4e7a53"))
        #expect(!Command.isValidKey("3f-2"))
        #expect(!Command.isValidKey(""))
    }
}

private extension String {
    func withPrefix(_ prefix: String) -> String { prefix + self }
}
