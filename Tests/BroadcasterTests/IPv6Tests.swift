import Broadcaster
import Foundation
import MoonRunnerTestSupport
import Reactor
import Testing
import Wire

/// `serve --host ::1` and `--host ::` (dual-stack): the server listens on IPv6, and on `::` IPv4 clients too.
@Suite(.mayBlock) struct IPv6Tests {
    func ping(_ socket: StreamSocket) throws -> String {
        _ = try Array("ping:\n".utf8).withUnsafeBytes { try socket.write($0) }
        var buffer = [UInt8](repeating: 0, count: 64)
        var descriptor = pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0)
        _ = poll(&descriptor, 1, 5000)
        guard case .processed(let count) = try buffer.withUnsafeMutableBytes({ try socket.read(into: $0) }) else { return "" }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    @Test(arguments: ["::1", "[::1]"])
    func theServerListensOnIPv6Loopback(host: String) throws {
        try withServer({ $0.host = host; $0.httpPort = nil }) { server in
            let socket = try StreamSocket.connect(resolving: "::1", port: server.port, timeout: 5)
            defer { socket.close() }
            #expect(try ping(socket) == "ok:ping\n")
        }
    }

    @Test func onTheUnspecifiedAddressIPv4AndIPv6ClientsBothConnect() throws {
        try withServer({ $0.host = "::"; $0.httpPort = nil }) { server in
            let v4 = try TestClient(port: server.port)
            try v4.send("ping:")
            #expect(try v4.nextLine() == "ok:ping")
            let v6 = try StreamSocket.connect(resolving: "::1", port: server.port, timeout: 5)
            defer { v6.close() }
            #expect(try ping(v6) == "ok:ping\n")
        }
    }

    @Test func aNameIsRefusedWithAClearError() {
        #expect {
            try ListeningSocket(host: "race.example.org", port: 0)
        } throws: { error in
            "\(error)".contains("numeric IPv4 or IPv6 address")
        }
    }
}
