import Broadcaster
import MoonRunnerTestSupport
import Testing
import Wire

/// Every malformed line gets `err:CODE` on its own connection and changes nothing else.
@Suite(.mayBlock) struct BadInputTests {
    static let cases: [(String, [UInt8], ErrorCode)] = [
        ("unknown command", Array("fly:away".utf8), .unknownCommand),
        ("missing colon", Array("hello".utf8), .missingColon),
        ("missing field", Array("loc:51.5,-0.1,5".utf8), .badArgument),
        ("not a number", Array("loc:abc,-0.1,5,1700000000".utf8), .badNumber),
        ("NaN", Array("loc:nan,-0.1,5,1700000000".utf8), .badNumber),
        ("infinity", Array("loc:51.5,inf,5,1700000000".utf8), .badNumber),
        ("latitude out of range", Array("loc:91,-0.1,5,1700000000".utf8), .badCoordinate),
        ("longitude out of range", Array("loc:51.5,-180.5,5,1700000000".utf8), .badCoordinate),
        ("name too long", Array("iam:\(String(repeating: "a", count: 33))".utf8), .badName),
        ("name with bad characters", Array("iam:ann!".utf8), .badName),
        ("bad key", Array("iam:ann k*y".utf8), .badKey),
        ("line too long", Array(repeating: UInt8(ascii: "x"), count: 5000), .lineTooLong),
        ("invalid UTF-8", Array("msg:".utf8) + [0xFF, 0xFE, 0x41], .badUTF8),
        ("NUL byte", Array("msg:a".utf8) + [0, 0x41], .nulByte),
    ]

    @Test(arguments: 0..<cases.count)
    func badLineIsAnsweredAndTheRunGoesOn(_ index: Int) throws {
        let (label, bytes, code) = Self.cases[index]
        try withPureServer { server in
            let (runner, _) = try connectRunner("ann", to: server)
            let watcher = server.connect()
            try watcher.send("watch:ann")
            try watcher.expectNext("ok:watch")
            let run = straightRun(count: 4)
            try runner.send(run[0])
            try runner.send(run[1])
            try runner.write(bytes + [UInt8(ascii: "\n")])
            let error = try ErrorEvent(event: Event.parse(runner.expect("err:")))
            #expect(error.code == code, "\(label)")
            try runner.send(run[2])
            try runner.send(run[3])
            try runner.send("stop:")
            let end = try RunEndedEvent(event: Event.parse(watcher.expect("end:ann")))
            #expect(end.saved)
            let paces = watcher.received.filter { $0.hasPrefix("pace:ann") }
            #expect(paces.count == 4, "\(label): the run got every good fix")
            #expect(!watcher.received.contains { $0.hasPrefix("err:") }, "\(label): others hear nothing of it")
        }
    }

    @Test func locationBeforeIdentifyingIsRefused() throws {
        try withPureServer { server in
            let client = server.connect()
            try client.send(straightRun(count: 1)[0])
            #expect(try client.expectNext("err:").hasPrefix("err:not_identified"))
            try client.send("stop:")
            #expect(try client.expectNext("err:").hasPrefix("err:not_identified"))
            try client.send("ping:")
            try client.expectNext("ok:ping")
        }
    }

    @Test func aClaimedNameNeedsItsKey() throws {
        try withPureServer { server in
            let (_, key) = try connectRunner("ann", to: server)
            let impostor = server.connect()
            try impostor.send("iam:ann")
            #expect(try impostor.expectNext("err:").hasPrefix("err:wrong_key"))
            try impostor.send("iam:ann 0123456789abcdef0123456789abcdef")
            #expect(try impostor.expectNext("err:").hasPrefix("err:wrong_key"))
            try impostor.send(straightRun(count: 1)[0])
            #expect(try impostor.expectNext("err:").hasPrefix("err:not_identified"))
            let owner = server.connect()
            try owner.send("iam:ann \(key)")
            let ok = try OkEvent(event: Event.parse(owner.expectNext("ok:iam")))
            #expect(ok["name"] == "ann" && ok["key"] == nil)
        }
    }

    @Test func fiftyErrorsInASecondAreAllAnsweredThenAFloodIsCut() throws {
        try withServer({ $0.errorsPerSecond = 100 }) { server in
            let client = try TestClient(port: server.port)
            for _ in 0..<60 { try client.send("bogus") }
            try client.send("ping:")
            let lines = try client.lines(until: "ok:ping") { $0 == "ok:ping" }
            #expect(lines.filter { $0.hasPrefix("err:missing_colon") }.count == 60)
            let flood = Array(repeating: "bogus\n", count: 200).joined()
            try client.write(Array(flood.utf8))
            let rest = try client.awaitClose()
            #expect(rest.contains { $0.hasPrefix("err:flood") })
            // The server is fine for everyone else.
            let other = try TestClient(port: server.port)
            try other.send("ping:")
            try other.expectNext("ok:ping")
        }
    }

    @Test func blankLinesAndCRLFAreFine() throws {
        try withPureServer { server in
            let client = server.connect()
            try client.write(Array("\r\n\nping:\r\n".utf8))
            try client.expectNext("ok:ping")
        }
    }

    @Test func blankLinesAreIgnoredSilentlyAndNeverCountAsAFlood() throws {
        try withPureServer { server in
            let client = server.connect()
            // More blank lines than the flood limit allows errors, then a real command.
            try client.write(Array(String(repeating: "  \t \r\n\n", count: 300).utf8) + Array("ping:\n".utf8))
            #expect(try client.nextLine() == "ok:ping", "no reply to blank lines, and still connected")
        }
    }
}
