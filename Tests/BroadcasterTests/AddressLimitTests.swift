@testable import Broadcaster
import Foundation
import MoonRunnerTestSupport
import Reactor
import Testing
import Wire

/// The per-address connection cap (`--max-connections-per-address`, default 256): line protocol and HTTP
/// from one address counted together, the next refused at once, the address's open connections unharmed.
@Suite(.mayBlock) struct AddressLimitTests {
    /// Opens line and HTTP connections until `count` are open; every line one answers a ping.
    private static func fill(_ server: Server, line: Int, http: Int) throws -> ([TestClient], [HTTPTestClient]) {
        let lines = try (0..<line).map { _ in try TestClient(port: server.port) }
        let https = try (0..<http).map { _ in try HTTPTestClient(port: try #require(server.httpPort)) }
        for client in lines { try client.ask("ping:", expecting: "ok:ping") }
        for client in https { #expect(try client.get("/healthz").status == 200) }
        return (lines, https)
    }

    @Test func the257thConnectionFrom127001IsRefusedAtOnceWhileTheFirst256KeepWorking() throws {
        try withServer({ $0.capsLoopbackPerAddress = true }) { server in
            #expect(server.configuration.maximumConnectionsPerAddress == 256, "the default")
            let (lines, https) = try Self.fill(server, line: 200, http: 56)
            defer {
                lines.forEach { $0.close() }
                https.forEach { $0.close() }
            }
            var started = Date()
            let extra = try TestClient(port: server.port)
            let refusal = try extra.awaitClose()
            #expect(refusal.first?.hasPrefix("err:busy") == true, "\(refusal)")
            #expect(refusal.first?.contains("too many connections from your address") == true)
            #expect(Date().timeIntervalSince(started) < 3, "refused at once")

            started = Date()
            let extraHTTP = try HTTPTestClient(port: try #require(server.httpPort))
            let answer = try extraHTTP.get("/healthz")
            #expect(answer.status == 503)
            #expect(answer.text.contains("from your address"))
            #expect(answer.header("Retry-After") == "5")
            #expect(Date().timeIntervalSince(started) < 3)

            // The address's connections go on: line protocol and HTTP keep-alive alike.
            for client in [lines[0], lines[99], lines[199]] { try client.ask("ping:", expecting: "ok:ping") }
            #expect(try https[0].get("/healthz").status == 200)
            #expect(try https[55].get("/healthz").status == 200)

            // A place freed (an HTTP one: the count is shared) is the next newcomer's once the server saw it go.
            https[0].close()
            #expect(try Self.admitted(on: server, within: 20))
        }
    }

    @Test func noCapLetsOneAddressPastIt() throws {
        try withServer({ $0.maximumConnectionsPerAddress = nil; $0.maximumConnections = 3 }) { server in
            let (lines, _) = try Self.fill(server, line: 3, http: 0)
            defer { lines.forEach { $0.close() } }
            // Only the server-wide limit applies: its own reason, not the address's.
            let refusal = try TestClient(port: server.port).awaitClose()
            #expect(refusal.first?.hasPrefix("err:busy") == true, "\(refusal)")
            #expect(refusal.first?.contains("server full") == true, "\(refusal)")
        }
    }

    /// Behind a reverse proxy every client comes from loopback, and a load test runs there: not capped unless
    /// asked (`--cap-loopback`).
    @Test func loopbackIsNotCappedByDefault() throws {
        try withServer({ $0.maximumConnectionsPerAddress = 2 }) { server in
            let (lines, https) = try Self.fill(server, line: 3, http: 2)
            defer {
                lines.forEach { $0.close() }
                https.forEach { $0.close() }
            }
            #expect(lines.count == 3 && https.count == 2)
        }
    }

    /// With several loops the count is shared: a connection that moved to another loop keeps its place (it is
    /// not given back on the move), and gives it back when it closes there.
    @Test func withTwoLoopsAConnectionMovedToTheOtherLoopCountsOnceAndItsCloseThereFreesItsPlace() throws {
        try withServerGroup(loops: 2, { $0.maximumConnectionsPerAddress = 2; $0.capsLoopbackPerAddress = true }) { group in
            let name = group.runnerName(ownedBy: 1, prefix: "cap")
            let runner = try TestClient(port: group.port)
            try runner.send("iam:\(name)")
            try runner.expectNext("ok:iam")  // moved to loop 1 (if it was not there already)
            let other = try TestClient(port: group.port)
            try other.ask("ping:", expecting: "ok:ping")
            let counter = group.servers[0].connectionsPerAddress
            #expect(counter === group.servers[1].connectionsPerAddress, "one count for the loops")
            let host = try #require(HostAddress.loopback)
            #expect(counter.count(from: host) == 2)

            let refusal = try TestClient(port: group.port).awaitClose()
            #expect(refusal.first?.hasPrefix("err:busy") == true, "\(refusal)")
            #expect(refusal.first?.contains("too many connections from your address") == true, "\(refusal)")
            try runner.ask("ping:", expecting: "ok:ping")

            runner.close()
            let deadline = Date().addingTimeInterval(20)
            while counter.count(from: host) != 1 && Date() < deadline { usleep(10_000) }
            #expect(counter.count(from: host) == 1, "given back by the loop it was closed on")
            let newcomer = try TestClient(port: group.port)
            try newcomer.ask("ping:", expecting: "ok:ping")
            newcomer.close()
            other.close()
            while counter.count(from: host) != 0 && Date() < deadline { usleep(10_000) }
            #expect(counter.count(from: host) == 0, "nothing left counted: the table is empty again")
        }
    }

    /// Newcomers until one is served (each refused one closed), for `seconds` at most: how soon the server
    /// notices a close depends on the machine's load.
    private static func admitted(on server: Server, within seconds: Double) throws -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            let next = try TestClient(port: server.port)
            defer { next.close() }
            if let line = try? next.ask("ping:", expecting: "ok:ping"), line.hasPrefix("ok:ping") { return true }
            usleep(20_000)
        }
        return false
    }
}

extension HostAddress {
    /// 127.0.0.1, as an accepted socket gives it.
    static var loopback: HostAddress? {
        guard let listener = try? ListeningSocket(host: "127.0.0.1", port: 0),
              let client = try? StreamSocket.connect(host: "127.0.0.1", port: listener.port) else { return nil }
        defer { client.close() }
        for _ in 0..<100 {
            if case .processed(let socket)? = try? listener.accept() { return socket.peerHost }
            usleep(10_000)
        }
        return nil
    }
}
