@testable import Broadcaster
@testable import LiveCore
import Dispatch
import Foundation
import MoonRunnerTestSupport
import Testing
import Wire

/// Cheers need no identity, so they are limited per sender and per runner, dropped (and counted) for a reader
/// that is behind, and never the reason a runner is disconnected; and all pending output has one budget.
@Suite(.mayBlock) struct CheerFloodTests {
    static let longText = String(repeating: "Allez ! ", count: 34)

    /// Sends `count` cheers at once; their answers (`ok:msg` or `err:`), in order.
    static func cheer(_ count: Int, from fan: some LineClient) throws -> [String] {
        for _ in 0..<count { try fan.send("msg:go") }
        var answers: [String] = []
        while answers.count < count {
            let line = try fan.nextLine()
            if line.hasPrefix("ok:msg") || line.hasPrefix("err:") { answers.append(line) }
        }
        return answers
    }

    /// Reads a fan's replies until its 20,000 cheers are all answered `ok:msg`.
    static func awaitReplies(of fan: some LineClient) throws {
        var answered = 0
        while answered < 20_000 {
            let line = try fan.nextLine(timeout: 60)
            #expect(!line.hasPrefix("err:"), "\(line)")
            if line.hasPrefix("ok:msg") { answered += 1 }
        }
    }

    @Test func bucketsAllowABurstThenTheRateAndForgetFullBucketsFirst() {
        var buckets = TokenBuckets(rate: 2, burst: 4, capacity: 3)
        var taken = 0
        for _ in 0..<6 where buckets.take("a", now: 100) { taken += 1 }
        #expect(taken == 4)
        #expect(!buckets.take("a", now: 100.4) && buckets.take("a", now: 100.5), "two a second come back")
        #expect(buckets.wait(for: "a", now: 100.5) == 0.5)
        buckets.take("b", now: 100)
        buckets.take("c", now: 200)  // a and b are full again by now: forgotten first
        buckets.take("d", now: 200)
        #expect(buckets.count <= 3)
        #expect(buckets.hasToken("a", now: 200))
    }

    @Test func limitsPerConnectionAddressAndRunner() {
        var configuration = ServerConfiguration()
        configuration.cheersPerSecond = 1
        configuration.cheersPerSecondPerAddress = 2
        configuration.cheersPerSecondPerRunner = 3
        let limits = CheerLimits(configuration)
        let one = ConnectionID(1), two = ConnectionID(2), three = ConnectionID(3)
        func admitted(_ connection: ConnectionID, _ tries: Int) -> Int {
            var count = 0
            for _ in 0..<tries where limits.admitSender(connection, address: "a", now: 0) == nil { count += 1 }
            return count
        }
        #expect(admitted(one, 7) == 5)
        #expect(limits.admitSender(one, address: "a", now: 0)?.hasPrefix("at most 1 cheer a second from a connection") == true)
        // The address has 10 at once: the second connection gets the 5 left, the third none.
        #expect(admitted(two, 7) == 5)
        #expect(limits.admitSender(three, address: "a", now: 0)?.contains("from one address") == true)
        #expect(limits.admitSender(three, address: "b", now: 0) == nil)
        var cheered = 0
        for _ in 0..<20 where limits.admit(to: "ann", from: "a", now: 0) { cheered += 1 }
        #expect(cheered == 15)
        // One address used up its share of ann: not everyone's, nor its share of bob.
        #expect(limits.admit(to: "ann", from: "b", now: 0))
        #expect(limits.admit(to: "bob", from: "a", now: 0))
        #expect(limits.runnerRefusal("ann", from: "a", now: 0).hasPrefix("ann gets at most 3 cheers a second from one address"))
    }

    @Test func aReaderThatIsBehindGoesWithoutCheersAndIsToldHowMany() {
        var buffer = OutputBuffer()
        let mark = 64
        for index in 0..<10 { buffer.append(Array("badge:ann n=\(index)\n".utf8), as: .event(about: "ann"), highWaterMark: mark) }
        _ = buffer.drain(limit: 1 << 20, highWaterMark: mark) { vectors in 10 }  // the socket took 10 bytes
        #expect(buffer.isCongested)
        let cheer = SharedLine.copying(Array("msg:ann from=anon text=hi\n".utf8))
        let first = buffer.append(cheer, as: .cheer(for: "ann"), highWaterMark: mark)
        let second = buffer.append(cheer, as: .cheer(for: "ann"), highWaterMark: mark)
        let end = buffer.append(Array("end:ann run=1\n".utf8), as: .event(about: "ann"), highWaterMark: mark)
        #expect(first && second, "dropped")
        #expect(!end, "an end is never")
        #expect(buffer.takeDroppedCheers(highWaterMark: mark) == 0, "not told while still behind")
        var written: [UInt8] = []
        _ = buffer.drain(limit: 1 << 20, highWaterMark: mark) { vectors in
            for vector in vectors { written += UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len) }
            return vectors.reduce(0) { $0 + $1.iov_len }
        }
        #expect(String(decoding: written, as: UTF8.self).hasSuffix("end:ann run=1\n"))
        #expect(buffer.takeDroppedCheers(highWaterMark: mark) == 2)
        #expect(buffer.takeDroppedCheers(highWaterMark: mark) == 0)
    }

    @Test func aSenderPastItsLimitIsToldBusyOverTheLineAndTheWeb() throws {
        try withPureServer { server in
            let (ann, _) = try connectRunner("ann", to: server)
            for line in straightRun(count: 3) { try ann.send(line) }
            _ = try ann.expect("run:ann")
            let fan = server.connect()
            _ = try fan.ask("watch:ann", expecting: "ok:watch")
            let answers = try Self.cheer(7, from: fan)
            #expect(answers.filter { $0 == "ok:msg count=1" }.count == 5, "\(answers)")
            #expect(answers.last?.hasPrefix("err:busy \"at most 1 cheer a second from a connection") == true)
            let page = server.web()
            var statuses: [Int] = []
            for _ in 0..<50 {
                statuses.append(try page.post("/runners/ann/cheers", body: "text=go", type: "application/x-www-form-urlencoded").status)
                if statuses.last == 429 { break }
            }
            #expect(statuses.last == 429 && statuses.dropLast().allSatisfy { $0 == 202 }, "\(statuses)")
        }
    }

    /// A private runner is a name nobody has to whoever may not see it: the per-runner share must not tell them
    /// apart (only runners one may see, with a run going, have a share to use up).
    @Test func cheersLimitAPrivateRunnerExactlyAsANameNobodyHas() throws {
        try withPureServer({
            $0.cheersPerSecond = 1e6
            $0.cheersPerSecondPerAddress = 1e6
            $0.cheersPerSecondPerRunner = 1
        }) { server in
            for name in ["ann", "bob"] {
                let (runner, _) = try connectRunner(name, to: server)
                for line in straightRun(count: 3) { try runner.send(line) }
                _ = try runner.expect("run:\(name)")
                if name == "ann" {
                    try runner.send("private:on")
                    _ = try runner.expect("ok:private")
                }
            }
            func busyAnswers(watching name: String) throws -> Int {
                let fan = server.connect()
                _ = try fan.ask("watch:\(name)", expecting: "ok:watch")
                return try Self.cheer(30, from: fan).filter { $0.hasPrefix("err:busy") }.count
            }
            #expect(try busyAnswers(watching: "ann") == busyAnswers(watching: "zed"))
            #expect(try busyAnswers(watching: "bob") == 25, "a public runner's share is used up")
        }
    }

    /// The finding: two connections aimed 40,000 cheers at a runner reading slowly, and within 2 s the runner was
    /// closed with 4 MiB pending. Now the runner goes without most of them, is told how many, and runs on.
    @Test func aSlowReadingRunnerUnder40000CheersStaysConnectedAndItsRunContinues() throws {
        try withServer({
            $0.cheersPerSecond = 1e6
            $0.cheersPerSecondPerAddress = 1e6
            $0.cheersPerSecondPerRunner = 1e6
        }) { server in
            let ann = try TestClient(port: server.port)
            try ann.socket.setReceiveBufferSize(64 * 1024)
            _ = try ann.ask("iam:ann", expecting: "ok:iam")
            let run = straightRun(count: 40)
            for line in run[..<20] { try ann.send(line) }
            _ = try ann.expect("ack:ann")
            // Two fans flood; the runner reads nothing meanwhile.
            let flood = Array(repeating: "msg:\(Self.longText)", count: 20_000).joined(separator: "\n") + "\n"
            let fans = try (0..<2).map { _ in try TestClient(port: server.port) }
            for fan in fans { _ = try fan.ask("watch:ann", expecting: "ok:watch") }
            for fan in fans { try fan.write(Array(flood.utf8)) }
            for fan in fans { try Self.awaitReplies(of: fan) }
            // Now it reads: still connected, told what it went without, and its run goes on.
            let seen = try ann.lines(until: "dropped:msg", timeout: 30) { $0.hasPrefix("dropped:msg") }
            let dropped = try DroppedEvent(line: try #require(seen.last)).count
            #expect(dropped > 0, "cheers are what a reader this slow goes without")
            for line in run[20...] { try ann.send(line) }
            let last = String(run.last!.split(separator: ",").last!)
            _ = try ann.expect("ack:ann ts=\(last)", timeout: 30)
        }
    }

    /// The finding: 200 event streams that never read plus one cheer sender took RSS from 43 MB to 966 MB. Now
    /// each stream goes without cheers once behind, and past the output budget the furthest behind are closed.
    @Test func nonReadingEventStreamsUnderACheerFloodStayWithinTheOutputBudget() throws {
        let budget = 2 * 1024 * 1024
        try withServer({
            $0.outputBudget = budget
            $0.cheersPerSecond = 1e6
            $0.cheersPerSecondPerAddress = 1e6
            $0.cheersPerSecondPerRunner = 1e6
        }) { server in
            let http = try #require(server.httpPort)
            let (ann, _) = try connectRunner("ann", to: server)
            for line in straightRun(count: 3) { try ann.send(line) }
            _ = try ann.expect("run:ann")
            var streams: [HTTPTestClient] = []
            for _ in 0..<200 {
                let stream = try HTTPTestClient(port: http)
                try stream.socket.setReceiveBufferSize(4096)
                #expect(try stream.openStream("watch=ann").status == 200)
                streams.append(stream)
            }
            let fan = try TestClient(port: server.port)
            _ = try fan.ask("watch:ann", expecting: "ok:watch")
            let flood = Array(repeating: "msg:\(Self.longText)", count: 20_000).joined(separator: "\n") + "\n"
            try fan.write(Array(flood.utf8))
            try Self.awaitReplies(of: fan)
            // Within a tick or two of the budget check, what waits for all readers fits the budget.
            let pending = try MemoryBudgetTests.heldBytes(of: server, awaiting: budget)
            #expect(pending <= budget, "\(pending) bytes pending")
            // The runner was spared: it is still connected and acked.
            try ann.send(straightRun(count: 1, from: Date().timeIntervalSince1970)[0])
            _ = try ann.expect("ack:ann", timeout: 10)
        }
    }
}
