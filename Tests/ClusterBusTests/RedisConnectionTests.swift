@testable import ClusterBus
import Foundation
import MoonRunnerTestSupport
import Reactor
import Testing

/// The connection against a server that misbehaves as real networks and broken servers do: it dies mid-reply,
/// dribbles a reply a byte at a time, sends a length no reply has, or says nothing. Each ends in a clear
/// ``BusError``, the connection marked broken, and never a crash or a hang.
struct RedisConnectionTests {
    /// A connection to a fake server, and the server's side of it.
    private func connected(timeout: Double = 5) throws -> (RedisConnection, FakePeer, FakeServer) {
        let server = try FakeServer()
        let connection = try RedisConnection(endpoint: RedisEndpoint(host: "127.0.0.1", port: Int(server.port)),
                                             connectTimeout: 5, commandTimeout: timeout)
        return (connection, try server.accept(), server)
    }

    @Test func aServerThatDiesMidReplyBreaksTheConnectionWithAClearError() throws {
        let (connection, peer, server) = try connected()
        defer { server.close() }
        try peer.write(Array("*2\r\n$3\r\nfoo\r\n$3\r\nb".utf8))
        peer.close()
        do {
            _ = try connection.command("XRANGE", "s", "-", "+")
            Issue.record("a reply cut short was taken")
        } catch {
            #expect(error.kind == .connection)
            #expect(error.message.contains("closed the connection in the middle of a reply"), "\(error.message)")
        }
        #expect(connection.isBroken)
        // Later calls fail the same way at once, without touching the socket.
        #expect(throws: BusError.self) { try connection.command("PING") }
    }

    @Test func aReplyWrittenAByteAtATimeArrivesWhole() throws {
        let (connection, peer, server) = try connected()
        defer { server.close() }
        let reply = Array("*2\r\n$5\r\nhello\r\n*2\r\n:7\r\n$-1\r\n".utf8)
        let writer = Thread {
            // The command first, then the reply a byte a write (TCP_NODELAY on the client's side does not
            // matter here: each write is its own segment unless the client is slower than the writer).
            _ = try? peer.nextLines(5)
            for byte in reply { try? peer.write([byte]) }
        }
        writer.start()
        #expect(try connection.command("LRANGE", "k") == .array([.string(Array("hello".utf8)), .array([.integer(7), .null])]))
        #expect(!connection.isBroken)
    }

    @Test func aLengthNoReplyHasIsRefusedWithoutAllocatingIt() throws {
        let (connection, peer, server) = try connected()
        defer { server.close() }
        try peer.write(Array("$999999999999\r\n".utf8))
        do {
            _ = try connection.command("GET", "k")
            Issue.record("a bulk of a terabyte was taken")
        } catch {
            #expect(error.kind == .unexpectedReply)
            #expect(error.message.contains("bulk of 999999999999 bytes"), "\(error.message)")
        }
        #expect(connection.isBroken)
    }

    @Test func aServerThatSaysNothingTimesOut() throws {
        let (connection, peer, server) = try connected(timeout: 0.2)
        defer { server.close() }
        defer { peer.close() }  // open until the end: a closed peer would be an end of file, not silence
        do {
            _ = try connection.command("PING")
            Issue.record("no reply was taken for one")
        } catch {
            #expect(error.kind == .connection)
            #expect(error.message.contains("no answer within 0.2 s"), "\(error.message)")
        }
    }

    @Test func shuttingTheSocketDownWakesABlockedCall() throws {
        let (connection, peer, server) = try connected(timeout: 60)
        defer { server.close() }
        let socket = connection.streamSocket
        let started = Date()
        let stopper = Thread {
            // Once the command is here, the call below waits for its reply for up to 60 s: this ends the
            // wait (the bus's close() does the same).
            _ = try? peer.nextLines(3)
            socket.shutdown()
        }
        stopper.start()
        #expect(throws: BusError.self) { try connection.command("PING") }
        #expect(Date().timeIntervalSince(started) < 30)
    }

    @Test func pipelinedCommandsGoInOneWriteAndRepliesComeBackInOrder() throws {
        let (connection, peer, server) = try connected()
        defer { server.close() }
        for index in 0..<3 { try connection.append(["INCR", "k\(index)"].map { Array($0.utf8) }) }
        #expect(connection.pendingReplies == 3)
        try peer.write(Array(":1\r\n:2\r\n-ERR no\r\n".utf8))
        #expect(try connection.reply() == .integer(1))
        #expect(try peer.nextLines(15).map { $0.replacingOccurrences(of: "\r", with: "") }.filter { $0.hasPrefix("k") }
                == ["k0", "k1", "k2"])
        #expect(try connection.reply() == .integer(2))
        #expect(try connection.reply() == .error("ERR no"))
        #expect(connection.pendingReplies == 0)
        #expect(!connection.isBroken)
    }
}
