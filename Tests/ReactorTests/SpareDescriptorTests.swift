import Glibc
import Reactor
import Testing

/// What a listener gives per-address limits and the out-of-descriptors path: the peer's host from `accept`,
/// and a spare descriptor to accept a newcomer on only to refuse it.
@Suite struct SpareDescriptorTests {
    @Test func anAcceptedSocketKnowsItsPeersHostWithoutThePort() throws {
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let (client, server) = try connectedPair(listener)
        defer { client.close() }
        #expect(server.peerHost?.description == "127.0.0.1")
        #expect(server.peerHost?.isIPv4 == true)
        #expect(client.peerHost == nil, "a socket this process connected has no accepted peer")
        let (other, otherServer) = try connectedPair(listener)
        defer { other.close() }
        #expect(otherServer.peerHost == server.peerHost, "two ports, one host")
    }

    @Test func anIPv4ClientOfADualStackListenerIsTheSameHostAsOnAnIPv4One() throws {
        guard let dual = try? ListeningSocket(host: "::", port: 0) else { return }  // no IPv6 here
        let plain = try ListeningSocket(host: "127.0.0.1", port: 0)
        let (client, mapped) = try connectedPair(dual)
        defer { client.close() }
        let (second, unmapped) = try connectedPair(plain)
        defer { second.close() }
        #expect(mapped.peerDescription.hasPrefix("[::ffff:127.0.0.1]"))
        #expect(mapped.peerHost == unmapped.peerHost)
        #expect(mapped.peerHost?.description == "127.0.0.1")
    }

    @Test func anIPv6HostPrintsAsIPv6() throws {
        guard let listener = try? ListeningSocket(host: "::1", port: 0) else { return }  // no IPv6 here
        let client = try StreamSocket.connect(resolving: "::1", port: listener.port, timeout: 5)
        defer { client.close() }
        #expect(wait(for: POLLIN, on: listener.fileDescriptor))
        guard case .processed(let server) = try listener.accept() else {
            Issue.record("no connection to accept")
            return
        }
        #expect(server.peerHost?.description == "::1")
        #expect(server.peerHost?.isIPv4 == false)
    }

    @Test func refusingOnTheSpareTellsTheNewcomerClosesItAndTakesTheSpareBack() throws {
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        #expect(listener.holdsSpare)
        #expect(try listener.acceptToRefuse { _ in } == .nothingWaiting)
        #expect(listener.holdsSpare)
        let client = try StreamSocket.connect(host: "127.0.0.1", port: listener.port)
        defer { client.close() }
        #expect(wait(for: POLLIN, on: listener.fileDescriptor))
        let outcome = try listener.acceptToRefuse { socket in
            _ = Array("err:busy full\n".utf8).withUnsafeBytes { try? socket.write($0) }
        }
        #expect(outcome == .refused)
        #expect(listener.holdsSpare)
        #expect(wait(for: POLLIN, on: client.fileDescriptor))
        var buffer = [UInt8](repeating: 0, count: 64)
        guard case .processed(let count) = try buffer.withUnsafeMutableBytes({ try client.read(into: $0) }) else {
            Issue.record("nothing to read")
            return
        }
        #expect(String(decoding: buffer[..<count], as: UTF8.self) == "err:busy full\n")
        let end = try buffer.withUnsafeMutableBytes { try client.read(into: $0) }
        #expect(end == .processed(0), "closed after the refusal")
    }

    @Test func aClosedListenerHoldsNoSpare() throws {
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        listener.close()
        #expect(!listener.holdsSpare)
        listener.restoreSpare()
        #expect(!listener.holdsSpare)
        #expect(try listener.acceptToRefuse { _ in } == .noSpare)
    }
}
