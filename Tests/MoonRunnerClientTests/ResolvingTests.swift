import Foundation
import MoonRunnerClient
import MoonRunnerTestSupport
import Reactor
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Host names and IPv6: a tracker on a Raspberry Pi reaching `race.example.org`, whatever its addresses.
/// Serialized: glibc's resolver may make one lookup wait for another's DNS timeout.
@Suite(.mayBlock, .serialized) struct ResolvingTests {
    @Test(arguments: ["::1", "[::1]"])
    func aClientReachesAServerOnIPv6Loopback(host: String) async throws {
        let listener = try IPv6Listener()
        defer { listener.close() }
        let client = MoonRunnerClient(configuration: ClientConfiguration(
            host: host, port: listener.port, reconnect: ReconnectPolicy(isEnabled: false)))
        defer { client.close() }
        let joining = Task { try await client.join(name: "ann") }
        let peer = try await offPool { try listener.accept() }
        defer { Glibc.close(peer) }
        #expect(try await offPool { try IPv6Listener.line(from: peer) } == "iam:ann")
        let ok = "ok:iam name=ann key=0123456789abcdef0123456789abcdef new=yes\n"
        #expect(ok.utf8.count == Glibc.write(peer, ok, ok.utf8.count))
        #expect(try await joining.value == "0123456789abcdef0123456789abcdef")
    }

    @Test func aHostNameIsResolved() async throws {
        // Host names are case-insensitive: the resolver knows `LOCALHOST`, a numeric-only parser does not.
        let fake = try FakeServer()
        defer { fake.close() }
        let client = MoonRunnerClient(configuration: ClientConfiguration(
            host: "LOCALHOST", port: fake.port, reconnect: ReconnectPolicy(isEnabled: false)))
        defer { client.close() }
        let joining = Task { try await client.join(name: "ann") }
        let peer = try await fake.accepted()
        #expect(try await peer.line() == "iam:ann")
        try peer.send(["ok:iam name=ann key=0123456789abcdef0123456789abcdef new=yes"])
        #expect(try await joining.value.count == 32)
    }

    @Test func aNameThatDoesNotResolveSaysWhich() async throws {
        let client = MoonRunnerClient(configuration: ClientConfiguration(
            host: "no-such-host.invalid", port: 4242, reconnect: ReconnectPolicy(isEnabled: false)))
        defer { client.close() }
        do throws(MoonRunnerClientError) {
            try await client.join(name: "ann")
            Issue.record("joined a host that does not exist")
        } catch {
            guard case .connectionFailed(let reason) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(reason.contains("no-such-host.invalid"), "\(reason)")
        }
    }

    @Test func namesAndNumbersResolveToTheirAddresses() throws {
        #expect(try AddressResolver.addresses(host: "127.0.0.1", port: 4242).map(\.description) == ["127.0.0.1:4242"])
        #expect(try AddressResolver.addresses(host: "[::1]", port: 80).map(\.description) == ["[::1]:80"])
        #expect(try AddressResolver.addresses(host: "fe80::1", port: 80).map(\.description) == ["[fe80::1]:80"])
        #expect(try AddressResolver.addresses(host: "localhost", port: 4242).map(\.description).contains("127.0.0.1:4242"))
    }

    @Test func everyAddressIsTriedInTurnEachWithItsShareOfTheTimeout() async throws {
        let server = try FakeServer()
        defer { server.close() }
        let refused = try FakeServer()
        let refusedPort = refused.port
        refused.close()
        // A refused address, then one that never answers (its share of the timeout runs out), then the server.
        let full = try FullListener()
        defer { full.close() }
        let addresses = try AddressResolver.addresses(host: "::1", port: refusedPort)
            + AddressResolver.addresses(host: "127.0.0.1", port: full.port)
            + AddressResolver.addresses(host: "127.0.0.1", port: server.port)
        #expect(addresses.count == 3)
        // Blocking connects: off the concurrency pool, which the other tests share.
        let socket = try await offPool { try StreamSocket.connect(toFirstOf: addresses, timeout: 3) }
        defer { socket.close() }
        let peer = try await server.accepted()
        peer.close()
        let unanswered = Array(addresses.prefix(2))
        let failure = try await offPool { () -> IOError? in
            do throws(IOError) {
                _ = try StreamSocket.connect(toFirstOf: unanswered, timeout: 0.5)
                return nil
            } catch {
                return error
            }
        }
        #expect(failure?.errno == ETIMEDOUT)
    }
}

/// A TCP listener on `::1` made with plain system calls (the Reactor's listener is IPv4 here).
final class IPv6Listener: Sendable {
    struct Failure: Error { let call: String; let code: Int32 }
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let descriptor = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        guard descriptor >= 0 else { throw Failure(call: "socket", code: errno) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        let length = socklen_t(MemoryLayout<sockaddr_in6>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
        }
        guard bound == 0, listen(descriptor, 8) == 0 else { throw Failure(call: "bind/listen", code: errno) }
        var actual = sockaddr_in6()
        var actualLength = length
        let named = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &actualLength) }
        }
        guard named == 0 else { throw Failure(call: "getsockname", code: errno) }
        port = UInt16(bigEndian: actual.sin6_port)
    }

    /// The next connection (waiting up to 10 s).
    func accept() throws -> Int32 {
        var ready = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        guard poll(&ready, 1, 30_000) == 1 else { throw Failure(call: "poll", code: ETIMEDOUT) }
        let peer = Glibc.accept(descriptor, nil, nil)
        guard peer >= 0 else { throw Failure(call: "accept", code: errno) }
        return peer
    }

    /// The first line a blocking peer sends.
    static func line(from peer: Int32) throws -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < 4096 {
            var ready = pollfd(fd: peer, events: Int16(POLLIN), revents: 0)
            guard poll(&ready, 1, 30_000) == 1, read(peer, &byte, 1) == 1 else { throw Failure(call: "read", code: errno) }
            if byte == 0x0A { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    func close() { _ = Glibc.close(descriptor) }
}
