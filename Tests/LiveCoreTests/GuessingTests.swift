@testable import LiveCore
import Foundation
import MoonRunnerTestSupport
import Testing
import Wire

/// Guessing keys and tokens is slowed and then refused per source address and target, but never at the expense
/// of the right answer: at a race a whole venue's Wi-Fi is one address, and one guesser there must not lock out
/// every phone behind it.
@Suite struct GuessingTests {
    static let wrongKey = "0123456789abcdef0123456789abcdef"

    @Test func wrongGuessesAreAnsweredThenSlowedThenRefusedPerAddressAndTarget() {
        let limiter = WrongTokenLimiter(perMinute: 4)
        let verdicts = (0..<22).map { _ in limiter.wrong(from: "10.0.0.1", target: "ann", now: 1000) }
        #expect(Array(verdicts[..<4]) == Array(repeating: .answer, count: 4))
        #expect(verdicts[4] == .slow(0.25) && verdicts[7] == .slow(1))
        #expect(verdicts[19] == .slow(4), "each one over the limit waits longer")
        #expect(verdicts[20] == .refuse && verdicts[21] == .refuse)
        #expect(limiter.wrong(from: "10.0.0.1", target: "ann", now: 1060) == .answer, "a new minute starts afresh")
        // Another address guessing the same runner is slowed by the target's count, never refused by it.
        let target = WrongTokenLimiter(perMinute: 4)
        for index in 0..<30 { _ = target.wrong(from: "10.0.1.\(index)", target: "bob", now: 0) }
        #expect(target.wrong(from: "10.0.2.1", target: "bob", now: 0) == .slow(5))
        #expect(target.wrong(from: "10.0.2.1", target: "cid", now: 0) == .answer)
    }

    @Test func theOwnersKeyWorksRightAfterTwentyWrongOnesFromTheSameAddress() throws {
        try withPureServer { server in
            let (runner, key) = try connectRunner("ann", to: server)
            runner.close()
            // 20 wrong keys from 127.0.0.1 over four connections (a connection is closed at its 20th).
            for _ in 0..<4 {
                let guesser = server.connect()
                for _ in 0..<5 { _ = try guesser.ask("iam:ann \(Self.wrongKey)", expecting: "err:wrong_key") }
            }
            let owner = server.connect()
            let ok = try OkEvent(line: owner.ask("iam:ann \(key)", expecting: "ok:iam", timeout: 2))
            #expect(ok["name"] == "ann")
        }
    }

    @Test func aRefusedAddressStillGetsInWithTheRightKeyTokenAndShareLink() throws {
        try withPureServer({ $0.deviceFailuresPerMinute = 1 }) { server in
            let (runner, key) = try connectRunner("ann", to: server)
            let token = try #require(try OkEvent(line: runner.ask("device:", expecting: "ok:device"))["token"])
            let share = try #require(try OkEvent(line: runner.ask("share:", expecting: "ok:share"))["token"])
            _ = try runner.ask("private:on", expecting: "ok:private")
            // Past five times the limit: wrong ones are refused at once, on every door.
            let app = server.web()
            var statuses: [Int] = []
            for _ in 0..<6 { statuses.append(try app.get("/osmand?id=\(Self.wrongKey)&lat=1&lon=1").status) }
            let app2 = server.web()
            statuses.append(try app2.get("/osmand?id=\(Self.wrongKey)&lat=1&lon=1").status)
            #expect(statuses.last == 429, "\(statuses)")
            let guesser = server.connect()
            _ = try guesser.ask("iam:ann \(Self.wrongKey)", expecting: "err:wrong_key")
            #expect(try guesser.awaitClose().isEmpty, "a refused guesser is closed")
            // The right ones from the same address are all taken.
            let phone = server.web()
            let now = Int(Date().timeIntervalSince1970)
            #expect(try phone.get("/osmand?id=\(token)&timestamp=\(now)&lat=51.5&lon=-0.12&accuracy=5").status == 200)
            let page = server.web()
            #expect(try page.get("/api/runners/ann?token=\(share)").status == 200)
            #expect(try page.post("/runners/ann/devices", body: "key=\(key)", type: "application/x-www-form-urlencoded")
                        .status == 201)
            let friend = server.connect()
            _ = try friend.ask("watch:ann \(share)", expecting: "ok:watch")
            runner.close()
            let owner = server.connect()
            _ = try owner.ask("iam:ann \(key)", expecting: "ok:iam")
        }
    }
}
