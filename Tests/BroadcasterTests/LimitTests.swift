import Broadcaster
import MoonRunnerTestSupport
import Foundation
import Testing
import Wire

/// Connection limits, slow spectators and the resume window.
@Suite(.mayBlock) struct LimitTests {
    @Test func pastTheConnectionLimitNewcomersAreToldBusyAndClosed() throws {
        try withServer({ $0.maximumConnections = 3 }) { server in
            let first = try (0..<3).map { _ in try TestClient(port: server.port) }
            for client in first {
                try client.send("ping:")
                try client.expectNext("ok:ping")
            }
            let extra = try TestClient(port: server.port)
            let lines = try extra.awaitClose()
            #expect(lines.first?.hasPrefix("err:busy") == true)
            first[0].close()
            // A place freed up: the next one is served once the server has noticed the close. How soon it
            // notices depends on the machine's load (a full suite on 2 loops), so newcomers keep trying, each
            // told `err:busy` until then, for a bounded time rather than a fixed number of tries.
            var answers: [String] = []
            let deadline = Date().addingTimeInterval(20)
            while answers.last?.hasPrefix("ok:ping") != true && Date() < deadline {
                let next = try TestClient(port: server.port)
                defer { next.close() }
                do {
                    try next.send("ping:")
                    answers.append(try next.nextLine())
                } catch {
                    answers.append("\(error)")
                }
            }
            #expect(answers.last?.hasPrefix("ok:ping") == true, "\(answers)")
        }
    }

    @Test func aSilentUnidentifiedConnectionIsClosedAfterTheTimeout() throws {
        try withPureServer({ $0.idleTimeout = 0.5 }) { server in
            let silent = server.connect()
            let talker = server.connect()
            try talker.send("watch:*")
            try talker.expectNext("ok:watch")
            let lines = try silent.awaitClose(timeout: 5)
            #expect(lines.contains { $0.hasPrefix("err:idle") })
            try talker.send("ping:")
            try talker.expectNext("ok:ping")
        }
    }

    @Test func theLineRateCapSlowsAConnectionWithoutLosingLines() throws {
        try withServer({ $0.linesPerSecond = 200; $0.lineBurst = 20 }) { server in
            let client = try TestClient(port: server.port)
            let started = Date()
            try client.write(Array(String(repeating: "ping:\n", count: 100).utf8))
            let answers = try client.lines(until: "100 answers", timeout: 10) { _ in
                client.received.filter { $0 == "ok:ping" }.count == 100
            }
            #expect(answers.allSatisfy { $0 == "ok:ping" })
            // 80 lines past the burst at 200 lines/s take at least 0.4 s: the cap held them back, none were lost.
            #expect(Date().timeIntervalSince(started) >= 0.35)
        }
    }

    @Test func aStalledSpectatorIsConflatedThenCutWhileOthersKeepUp() throws {
        try withServer({ $0.outputHighWaterMark = 4096; $0.outputHardLimit = 1024 * 1024 }) { server in
            let stalled = try TestClient(port: server.port)
            try stalled.send("watch:ann")
            try stalled.expectNext("ok:watch")
            let keen = try TestClient(port: server.port)
            try keen.send("watch:ann")
            try keen.expectNext("ok:watch")
            let (ann, _) = try connectRunner("ann", to: server)
            // The stalled spectator never reads again: the kernel takes ~4 MB on loopback, then the server queues.
            let fixes = straightRun(count: 50_000, speed: 2)
            for chunk in stride(from: 0, to: fixes.count, by: 5000) {
                try ann.write(Array(fixes[chunk..<min(chunk + 5000, fixes.count)].map { $0 + "\n" }.joined().utf8))
                // The keen spectator sees each chunk's last fix promptly.
                let last = fixes[min(chunk + 5000, fixes.count) - 1].split(separator: ",").last!
                try keen.lines(until: "pace \(last)") { $0.hasPrefix("pace:ann") && $0.contains("ts=\(last) ") }
                try ann.lines(until: "own pace \(last)") { $0.hasPrefix("pace:ann") && $0.contains("ts=\(last) ") }
            }
            let keenPaces = keen.received.filter { $0.hasPrefix("pace:ann") }
            #expect(keenPaces.count == fixes.count, "the reading spectator lost nothing")
            let statsClient = try TestClient(port: server.port)
            try statsClient.send("stats:")
            let stats = try StatsEvent(event: Event.parse(statsClient.expectNext("stats:")))
            #expect((stats["events_conflated"] ?? 0) > 0)
        }
    }

    @Test func aSpectatorBeyondTheHardLimitIsClosed() throws {
        try withServer({ $0.outputHighWaterMark = 1024; $0.outputHardLimit = 64 * 1024 }) { server in
            let stalled = try TestClient(port: server.port)
            try stalled.socket.setReceiveBufferSize(4096)
            try stalled.send("watch:*")
            try stalled.expectNext("ok:watch")
            // Replies are never dropped, so a spectator who asks and never reads outgrows the hard limit.
            try stalled.write(Array(String(repeating: "help:\n", count: 2000).utf8))
            _ = try? stalled.awaitClose(timeout: 10)  // closed (or reset: its unread help: lines were dropped)
            let statsClient = try TestClient(port: server.port)
            try statsClient.send("stats:")
            let stats = try StatsEvent(event: Event.parse(statsClient.expectNext("stats:")))
            #expect(stats["slow_closed"] == 1)
            #expect(stats["spectators"] == 0)
        }
    }
}
