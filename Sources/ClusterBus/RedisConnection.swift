import Reactor

/// One connection to Redis, speaking RESP2 itself (``RESPEncoder``, ``RESPParser``) on the Reactor's
/// non-blocking ``StreamSocket``: no C client, so the binary needs no Redis library to build or run.
///
/// Calls block the calling thread, each wait for the socket bounded by the command timeout, so none may run
/// on a server's event loop: each owner says which thread uses it (the bus's publisher or reader thread, a
/// lease's lock). Commands can be pipelined: ``append(_:)`` queues them without I/O, the first ``reply()``
/// sends them all in one write. Once a call fails on the connection itself (I/O, end of file, a timeout,
/// bytes that are not RESP2) the connection is broken for good: every later call throws the same error, and
/// the owner drops it and connects anew. An error *reply* (`-ERR …`) is a value; the connection is fine.
package final class RedisConnection {
    private let socket: StreamSocket
    /// Where it is connected to.
    package let endpoint: RedisEndpoint
    /// Commands appended and not answered yet (``append(_:)`` then ``reply()``).
    private(set) package var pendingReplies = 0
    /// Commands encoded and not written yet.
    private var output: [UInt8] = []
    private var parser = RESPParser()
    /// How long one wait for the socket may last, in seconds.
    private var timeout: Double
    /// The failure that broke the connection, thrown again by every later call.
    private var failure: BusError?
    /// What reads land in before the parser takes them.
    private var readBuffer = [UInt8](repeating: 0, count: 64 << 10)

    /// Connects to `endpoint` (resolving its name; waiting at most `connectTimeout` seconds), turns TCP
    /// keepalive on, then authenticates and selects the database when the endpoint says so. Every later
    /// wait for Redis lasts at most `commandTimeout` seconds.
    package init(endpoint: RedisEndpoint, connectTimeout: Double, commandTimeout: Double) throws(BusError) {
        self.endpoint = endpoint
        timeout = commandTimeout
        guard let port = UInt16(exactly: endpoint.port) else {
            throw BusError(.badURL, "cannot connect to \(endpoint): no such port")
        }
        do {
            socket = try StreamSocket.connect(resolving: endpoint.host, port: port, timeout: connectTimeout)
            try socket.setKeepAlive()
        } catch {
            throw BusError(.connection, "cannot connect to \(endpoint): \(error)")
        }
        if let password = endpoint.password {
            try call(["AUTH", password].map { Array($0.utf8) }, context: "AUTH on \(endpoint)")
        }
        if endpoint.database != 0 {
            try call(["SELECT", String(endpoint.database)].map { Array($0.utf8) }, context: "SELECT on \(endpoint)")
        }
    }

    deinit { socket.close() }

    /// The socket, for ``StreamSocket/shutdown()`` from another thread: a call blocked on it fails at once.
    package var streamSocket: StreamSocket { socket }

    /// True once a call has failed on the connection itself: it can only be dropped.
    package var isBroken: Bool { failure != nil }

    /// Changes how long one wait for Redis may last (the reader sets it above its `XREAD BLOCK` time).
    package func setTimeout(_ seconds: Double) {
        timeout = seconds
    }

    /// Sends one command and waits for its reply. An error reply is returned (as ``RedisValue/error(_:)``),
    /// not thrown: the connection is fine. Throws when the connection fails.
    package func command(_ arguments: [[UInt8]]) throws(BusError) -> RedisValue {
        if let failure { throw failure }
        precondition(pendingReplies == 0, "a command while pipelined replies are pending")
        try append(arguments)
        return try reply()
    }

    /// ``command(_:)`` with text arguments.
    package func command(_ arguments: String...) throws(BusError) -> RedisValue {
        try command(arguments.map { Array($0.utf8) })
    }

    /// Sends one command and waits for its reply; an error reply is thrown too (``BusError/Kind/reply``).
    @discardableResult
    package func call(_ arguments: [[UInt8]], context: String? = nil) throws(BusError) -> RedisValue {
        let value = try command(arguments)
        if case .error(let message) = value {
            throw BusError(.reply, "\(context ?? "\(Self.name(arguments)) on \(endpoint)"): \(message)")
        }
        return value
    }

    /// Queues a command (no I/O): the first ``reply()`` sends everything queued, so a batch costs one round trip.
    package func append(_ arguments: [[UInt8]]) throws(BusError) {
        if let failure { throw failure }
        RESPEncoder.append(arguments, to: &output)
        pendingReplies += 1
    }

    /// Writes the commands appended so far without waiting for their replies: Redis starts on them while the
    /// caller encodes the next ones (a pipeline sent in pieces).
    package func flush() throws(BusError) {
        if let failure { throw failure }
        do throws(BusError) {
            try flushOutput()
        } catch {
            failure = error
            throw error
        }
    }

    /// The reply to the oldest appended command (sending what is queued first); error replies are returned,
    /// connection failures thrown.
    package func reply() throws(BusError) -> RedisValue {
        if let failure { throw failure }
        precondition(pendingReplies > 0, "reply() without an appended command")
        do throws(BusError) {
            try flushOutput()
            while true {
                if let value = try parser.nextReply() {
                    pendingReplies -= 1
                    return value
                }
                try readMore()
            }
        } catch {
            failure = error
            throw error
        }
    }

    /// Writes every queued command, waiting for room as long as the timeout allows each time.
    private func flushOutput() throws(BusError) {
        var written = 0
        defer {
            if written == output.count { output.removeAll(keepingCapacity: output.capacity <= 1 << 20) }
        }
        while written < output.count {
            let result: IOResult<Int>
            do {
                result = try output.withUnsafeBytes { bytes throws(IOError) in
                    try socket.write(UnsafeRawBufferPointer(rebasing: bytes[written...]))
                }
            } catch {
                throw BusError(.connection, "writing to \(endpoint): \(error)")
            }
            switch result {
            case .processed(let count): written += count
            case .wouldBlock: try waitFor(.writable, doing: "writing to")
            }
        }
    }

    /// Reads what has come (waiting for it as long as the timeout allows) into the parser.
    private func readMore() throws(BusError) {
        while true {
            let result: IOResult<Int>
            do {
                result = try readBuffer.withUnsafeMutableBytes { buffer throws(IOError) in try socket.read(into: buffer) }
            } catch {
                throw BusError(.connection, "reading a reply from \(endpoint): \(error)")
            }
            switch result {
            case .processed(0):
                let unfinished = parser.isInsideReply ? " in the middle of a reply (\(parser.bufferedBytes) bytes of it)" : ""
                throw BusError(.connection, "reading a reply from \(endpoint): the server closed the connection\(unfinished)")
            case .processed(let count):
                readBuffer.withUnsafeBytes { parser.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
                return
            case .wouldBlock:
                try waitFor(.readable, doing: "reading a reply from")
            }
        }
    }

    private func waitFor(_ interest: Interest, doing: String) throws(BusError) {
        let ready: Bool
        do {
            ready = try socket.awaitReadiness(interest, timeout: timeout)
        } catch {
            throw BusError(.connection, "\(doing) \(endpoint): \(error)")
        }
        guard ready else { throw BusError(.connection, "\(doing) \(endpoint): no answer within \(timeout) s") }
    }

    /// The command's name, for messages.
    private static func name(_ arguments: [[UInt8]]) -> String {
        arguments.first.map { String(decoding: $0, as: UTF8.self) } ?? "(empty command)"
    }
}
