import Foundation
import MoonRunnerClient
import MoonRunnerTestSupport
import Testing
import Wire

/// The stream and framing layer against a fake server that chooses how the bytes arrive.
@Suite(.mayBlock, .serialized) struct FramingTests {
    /// Lines of every live kind, with the awkward bits: quotes, escapes, `\r\n`.
    static let lines = [
        "run:ann id=17 ts=1732950000",
        "pace:ann dist=12.41 time=5.0 moving=5.0 pace=402.9 cur=- lat=48.8567250 lon=2.3522300 ts=1732950005 next=atmosphere left=792.26",
        "split:ann unit=km n=1 time=321.6 pace=321.6 at=321.6",
        "badge:ann id=moon name=\"The Moon\" tier=silver dist=1609.34 time=512.0 speed=3.143 lat=48.8652000 lon=2.3390000 ts=1732950512.000",
        "msg:ann from=anon text=\"quote \\\" and backslash \\\\ inside\"",
        "end:ann run=17 dist=5012.35 time=1622.4 moving=1604.5 pace=320.1 saved=yes reason=stop filtered=12 inaccurate=9 jump=3",
    ]

    /// Connects a client to a fresh fake server; returns both ends.
    static func connect() async throws -> (MoonRunnerClient, EventRecorder, FakePeer, FakeServer) {
        let fake = try FakeServer()
        let client = MoonRunnerClient(host: "127.0.0.1", port: fake.port)
        let log = EventRecorder(client)
        try client.watch(.everyone)
        let peer = try await fake.accepted()
        #expect(try await peer.line() == "watch:*")
        return (client, log, peer, fake)
    }

    static func liveEvents(_ log: EventRecorder) -> [ClientEvent] {
        log.events.filter { $0.kind != "state" }
    }

    @Test func bytesArrivingOneAtATimeMakeTheSameEvents() async throws {
        let (client, log, peer, fake) = try await Self.connect()
        defer { client.close(); fake.close() }
        let bytes = Array(Self.lines.map { $0 + "\r\n" }.joined().utf8)
        for byte in bytes { try peer.write([byte]) }
        try await log.first("end:") { $0.kind == "end" }
        let expected = try Self.lines.map { try ServerEvent(line: $0) }.map { ClientEvent(expecting: $0) }
        #expect(Self.liveEvents(log) == expected)
    }

    @Test func manyLinesInOneReadArriveInOrder() async throws {
        let (client, log, peer, fake) = try await Self.connect()
        defer { client.close(); fake.close() }
        let paces = (0..<500).map { (index: Int) -> PaceEvent in
            let value = Double(index)
            return PaceEvent(runner: "ann", distance: value, elapsed: value, moving: value, pace: 300, current: nil,
                             latitude: 48.8, longitude: 2.35, timestamp: String(1_732_950_000 + index),
                             nextBadge: "atmosphere", left: 804.67 - value)
        }
        // One write, blank lines and an unknown kind mixed in (clients ignore both).
        let lines: [String] = paces.map { $0.line }
        try peer.send(lines + ["", "   ", "future:ann x=1", "end:ann run=1 dist=499.00 time=499.0 moving=499.0 pace=300.0 saved=yes reason=stop filtered=0"])
        try await log.first("end:") { $0.kind == "end" }
        let received = Self.liveEvents(log).compactMap { event -> PaceEvent? in
            if case .pace(let pace) = event { return pace }
            return nil
        }
        let expected = try lines.map { try PaceEvent(line: $0) }  // at wire precision
        #expect(received.count == 500)
        #expect(received.elementsEqual(expected))
        #expect(Self.liveEvents(log).count == 501)
    }

    @Test func aLineLongerThanAReadIsReassembledAndAnOverlongOneSkipped() async throws {
        let (client, log, peer, fake) = try await Self.connect()
        defer { client.close(); fake.close() }
        // ~12 KB (over the protocol's 4 KB, under the client's 16 KB default), then ~40 KB (over it).
        let counters = (0..<800).map { "counter\($0)=\($0)" }.joined(separator: " ")
        let long = "stats:server " + counters
        let overlong = "stats:server " + (0..<3000).map { "c\($0)=\($0)" }.joined(separator: " ")
        let bytes = Array((long + "\n" + overlong + "\nok:ping\n").utf8)
        for start in stride(from: 0, to: bytes.count, by: 1000) {
            try peer.write(Array(bytes[start..<min(start + 1000, bytes.count)]))
        }
        try await log.first("ok:ping") { $0.kind == "ok" }
        let stats = Self.liveEvents(log).compactMap { event -> StatsEvent? in
            if case .other(.stats(let stats)) = event { return stats }
            return nil
        }
        #expect(stats.count == 1)
        #expect(stats.first?.counters.count == 800)
        #expect(stats.first?.counters.last == StatsEvent.Counter(name: "counter799", value: 799))
    }

    @Test func theServerClosingIsSeenAndWithoutReconnectTheClientFails() async throws {
        let fake = try FakeServer()
        var configuration = ClientConfiguration(port: fake.port)
        configuration.reconnect.isEnabled = false
        let client = MoonRunnerClient(configuration: configuration)
        let log = EventRecorder(client)
        let pong = Task { try await client.ping() }
        let peer = try await fake.accepted()
        #expect(try await peer.line() == "ping:")
        peer.close()
        await #expect(throws: MoonRunnerClientError.connectionFailed("the server closed the connection")) { try await pong.value }
        try await log.first("failed state") { $0 == .state(.failed(.connectionFailed("the server closed the connection"))) }
        fake.close()
    }
}

extension ClientEvent {
    /// The client event a test expects for a live server line.
    init(expecting event: ServerEvent) {
        self = ClientEvent(live: event) ?? .other(event)
    }
}
