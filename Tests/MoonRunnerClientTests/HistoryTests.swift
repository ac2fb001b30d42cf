import Broadcaster
import Foundation
import MoonRunnerClient
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// History answers as typed values, and every server `err:` as a typed error.
@Suite(.mayBlock) struct HistoryTests {
    /// Runs `count` fixes at 10 m/s as `name` and stops; returns the end.
    static func run(_ client: MoonRunnerClient, as name: String, count: Int,
                    from start: Double? = nil) async throws -> RunEndedEvent {
        try await client.join(name: name)
        // Stamped from after the join: on a loaded machine the join may take seconds, and a first fix more
        // than 10 s old would be taken for a cached position.
        let first = start ?? (Date().timeIntervalSince1970 - 1).rounded(.down)
        for fix in straightFixes(count: count, from: first, speed: 10) { try client.send(fix) }
        return try await client.stop()
    }

    @Test func runsRunAndBadgesAnswerWithTypedValues() async throws {
        try await withServer { server in
            let client = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            defer { client.close() }
            let log = EventRecorder(client)
            let end = try await Self.run(client, as: "eve", count: 170)

            let page = try await client.runs(of: "eve")
            #expect(page.items.map(\.runID) == [end.runID] && !page.hasMore)
            #expect(page.items.first?.distance == end.distance)

            let details = try await client.run(id: end.runID)
            #expect(details.summary.runID == end.runID && details.summary.status == "saved")
            #expect(details.splits.map(\.unit).sorted() == ["km", "mi"])
            #expect(details.badges.map(\.badgeID).contains("moon"))
            #expect(details.checkpoints.first?.from == "earth")

            let board = try await client.badges(of: "eve")
            #expect(board.map(\.badgeID) == Badges.all.map(\.id))
            #expect(board.first { $0.badgeID == "moon" }?.earned != nil)
            #expect(board.first { $0.badgeID == "mars" }?.earned == nil)

            // The delegate and event streams see the same answers.
            try await log.first("history") { if case .history(.badges(board)) = $0 { true } else { false } }
        }
    }

    @Test func pagesOfRunsReportWhetherMoreRemain() async throws {
        let store = MemoryRunStore()
        try await withServer(store: store) { server in
            let client = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            defer { client.close() }
            var ends: [RunEndedEvent] = []
            // Each run later than the one before (fresh timestamps at each start, whatever the test's pace).
            for _ in 0..<3 { ends.append(try await Self.run(client, as: "fay", count: 5)) }
            store.flush()
            let first = try await client.runs(of: "fay", offset: 0, limit: 2)
            let second = try await client.runs(of: "fay", offset: 2, limit: 2)
            #expect(first.hasMore && !second.hasMore)
            #expect(Set((first.items + second.items).map(\.runID)) == Set(ends.map(\.runID)))
        }
    }

    @Test func repliesReachTheirRequestsInTheOrderOfTheCommands() async throws {
        try await withServer { server in
            let client = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            defer { client.close() }
            _ = try await Self.run(client, as: "gus", count: 20)
            // History is read off the server's loop, yet its answer comes before the watch's ok: (protocol.md §1).
            async let page = client.runs(of: "gus")
            try client.watch("someone")
            async let board = client.badges(of: "gus")
            let (runs, badges) = try await (page, board)
            #expect(runs.items.count == 1 && badges.count == Badges.all.count)
            try await client.ping()
        }
    }

    @Test func aRunAskedForThenACheerToNobodyEachGetTheirOwnAnswer() async throws {
        try await withServer { server in
            let runner = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            let fan = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            defer { runner.close(); fan.close() }
            let end = try await Self.run(runner, as: "hal", count: 170)
            let log = EventRecorder(fan)
            async let details = fan.run(id: end.runID)
            let cheer = Task { try await fan.cheer("anyone?") }
            #expect(try await details.badges.count >= 3)
            let result = await cheer.result
            #expect(throws: MoonRunnerClientError.self) { try result.get() }
            if case .failure(let error as MoonRunnerClientError) = result { #expect(error.code == .notFound) }
            // The run's lines were its answer, not live events.
            try await fan.ping()
            #expect(!log.events.contains { $0.kind == "badge" || $0.kind == "split" })
        }
    }

    @Test func serverErrorsAreTypedErrors() async throws {
        try await withServer { server in
            let owner = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            let thief = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            defer { owner.close(); thief.close() }
            try await owner.join(name: "gus")

            await #expect(throws: MoonRunnerClientError.self) { try await thief.join(name: "gus") }
            do throws(MoonRunnerClientError) {
                try await thief.join(name: "gus", key: "0123456789abcdef")
            } catch {
                #expect(error.code == .wrongKey)
            }
            for (call, code): (@Sendable () async throws -> Void, ErrorCode) in [
                ({ _ = try await thief.runs(of: "nobody") }, .notFound),
                ({ _ = try await thief.badges(of: "nobody") }, .notFound),
                ({ _ = try await thief.run(id: 999_999) }, .notFound),
                ({ _ = try await thief.cheer("anyone there?") }, .notFound),
                ({ _ = try await owner.stop() }, .noRun),
            ] {
                do {
                    try await call()
                    Issue.record("expected \(code)")
                } catch {
                    let error = try #require(error as? MoonRunnerClientError)
                    #expect(error.code == code)
                    if case .server(_, let reason) = error { #expect(!reason.isEmpty) }
                }
            }
            // The client refuses what would not be a valid command before sending it.
            #expect(throws: MoonRunnerClientError.invalidArgument("a name is 1-32 of A-Z a-z 0-9 _ . -")) {
                try thief.watch("no spaces")
            }
            #expect(throws: MoonRunnerClientError.notJoined) {
                try MoonRunnerClient(port: server.port).send(Fix(latitude: 1, longitude: 2, accuracy: 5, timestamp: 3))
            }
            #expect(throws: MoonRunnerClientError.self) {
                try owner.send(Fix(latitude: 91, longitude: 2, accuracy: 5, timestamp: 3))
            }
            // Errors keep the connection usable.
            try await thief.ping()
        }
    }
}

extension MoonRunnerClient {
    /// A client on 127.0.0.1.
    convenience init(port: UInt16) {
        self.init(host: "127.0.0.1", port: port)
    }
}
