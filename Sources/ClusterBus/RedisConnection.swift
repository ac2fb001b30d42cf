import CHiredis
#if canImport(Glibc)
import Glibc
#endif

/// One blocking connection to Redis. The object owns the `redisContext*` (freed with `redisFree` when it goes
/// away) and every reply (``OwnedReply``); every hiredis failure becomes a ``BusError``. Commands go as
/// binary-safe argument vectors (`redisCommandArgv`, `redisAppendCommandArgv`): Swift cannot call the
/// variadic `redisCommand`, and values are bytes anyway.
///
/// Not thread-safe: each owner says which thread uses it (the bus's publisher or reader thread, a lease's
/// lock). Every call may block on the network, so none may run on a server's event loop. Once hiredis
/// reports an I/O or protocol error the context is dead (hiredis says so in `err`): the owner drops the
/// object and connects anew.
package final class RedisConnection {
    private let context: UnsafeMutablePointer<redisContext>
    /// Where it is connected to.
    package let endpoint: RedisEndpoint
    /// Commands appended and not answered yet (``append(_:)`` then ``reply()``).
    private(set) package var pendingReplies = 0

    /// Connects to `endpoint` (waiting at most `connectTimeout` seconds), sets `commandTimeout` as the
    /// socket's read/write timeout, turns TCP keepalive on, then authenticates and selects the database when
    /// the endpoint says so.
    package init(endpoint: RedisEndpoint, connectTimeout: Double, commandTimeout: Double) throws(BusError) {
        self.endpoint = endpoint
        guard let context = redisConnectWithTimeout(endpoint.host, Int32(endpoint.port), Self.timeval(connectTimeout)) else {
            throw BusError(.connection, "cannot connect to \(endpoint): hiredis is out of memory")
        }
        // From here on the object is whole: a throw below deinitializes it, which frees the context.
        self.context = context
        guard context.pointee.err == 0 else { throw failure("cannot connect to \(endpoint)") }
        guard redisSetTimeout(context, Self.timeval(commandTimeout)) == REDIS_OK else {
            throw failure("cannot set the timeout on \(endpoint)")
        }
        guard redisEnableKeepAlive(context) == REDIS_OK else { throw failure("cannot enable keepalive on \(endpoint)") }
        if let password = endpoint.password {
            try call(["AUTH", password].map { Array($0.utf8) }, context: "AUTH on \(endpoint)")
        }
        if endpoint.database != 0 {
            try call(["SELECT", String(endpoint.database)].map { Array($0.utf8) }, context: "SELECT on \(endpoint)")
        }
    }

    deinit { redisFree(context) }

    /// The socket (for `shutdown` from another thread, which makes a blocked call fail at once; the
    /// descriptor itself stays owned by the context).
    package var fileDescriptor: Int32 { context.pointee.fd }

    /// True once hiredis has reported an error on this context: it can only be dropped.
    package var isBroken: Bool { context.pointee.err != 0 }

    /// Changes the socket's read/write timeout (the reader sets it above its `XREAD BLOCK` time).
    package func setTimeout(_ seconds: Double) throws(BusError) {
        guard redisSetTimeout(context, Self.timeval(seconds)) == REDIS_OK else {
            throw failure("cannot set the timeout on \(endpoint)")
        }
    }

    /// Sends one command and waits for its reply. An error reply is returned (as ``RedisValue/error(_:)``),
    /// not thrown: the connection is fine. Throws when the connection fails.
    package func command(_ arguments: [[UInt8]]) throws(BusError) -> RedisValue {
        precondition(pendingReplies == 0, "a command while pipelined replies are pending")
        let raw = Self.withoutSIGPIPE {
            Self.withArgv(arguments) { argc, argv, lengths in redisCommandArgv(context, argc, argv, lengths) }
        }
        guard let raw else { throw failure("\(Self.name(arguments)) on \(endpoint)") }
        return OwnedReply(raw).value
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

    /// Queues a command in hiredis's output buffer (no I/O): the first ``reply()`` sends everything queued,
    /// so a batch costs one round trip.
    package func append(_ arguments: [[UInt8]]) throws(BusError) {
        let status = Self.withArgv(arguments) { argc, argv, lengths in redisAppendCommandArgv(context, argc, argv, lengths) }
        guard status == REDIS_OK else { throw failure("\(Self.name(arguments)) on \(endpoint)") }
        pendingReplies += 1
    }

    /// The reply to the oldest appended command (sending the buffer first if needed); error replies are
    /// returned, connection failures thrown.
    package func reply() throws(BusError) -> RedisValue {
        precondition(pendingReplies > 0, "reply() without an appended command")
        var raw: UnsafeMutableRawPointer?
        let status = Self.withoutSIGPIPE { redisGetReply(context, &raw) }
        guard status == REDIS_OK, let raw else {
            throw failure("reading a reply from \(endpoint)")
        }
        pendingReplies -= 1
        return OwnedReply(raw).value
    }

    /// hiredis's error on this context as a ``BusError``.
    private func failure(_ doing: String) -> BusError {
        let code = context.pointee.err
        let text = withUnsafeBytes(of: context.pointee.errstr) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let kind: BusError.Kind = code == REDIS_ERR_PROTOCOL ? .unexpectedReply : .connection
        if code == 0 { return BusError(.connection, "\(doing): hiredis failed without saying why") }
        return BusError(kind, "\(doing): \(text.isEmpty ? "hiredis error \(code)" : text)")
    }

    /// Calls `body` with argc, argv and the lengths of `arguments`, all pointing into one contiguous copy.
    private static func withArgv<Result>(
        _ arguments: [[UInt8]],
        _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> Result
    ) -> Result {
        precondition(!arguments.isEmpty, "an empty command")
        let joined = Array(arguments.joined()) + [0]  // never empty: the base address is never nil
        let lengths = arguments.map(\.count)
        return joined.withUnsafeBufferPointer { bytes in
            let base = UnsafeRawPointer(bytes.baseAddress!).assumingMemoryBound(to: CChar.self)
            var pointers: [UnsafePointer<CChar>?] = []
            pointers.reserveCapacity(arguments.count)
            var offset = 0
            for count in lengths {
                pointers.append(base + offset)
                offset += count
            }
            return pointers.withUnsafeMutableBufferPointer { argv in
                lengths.withUnsafeBufferPointer { body(Int32(arguments.count), argv.baseAddress!, $0.baseAddress!) }
            }
        }
    }

    /// Runs `body` (which may write to the socket) with SIGPIPE blocked on this thread: hiredis writes with
    /// `write`, and a Redis that died makes that raise SIGPIPE, which would end the process; blocked, the
    /// write fails with EPIPE, hiredis reports it, and a SIGPIPE left pending is taken off before the old mask
    /// comes back. The bus's own threads block SIGPIPE for good (``blockSIGPIPEOnThisThread()``): then this
    /// costs one call.
    static func withoutSIGPIPE<Result>(_ body: () -> Result) -> Result {
        var pipe = sigset_t(), old = sigset_t()
        sigemptyset(&pipe)
        sigaddset(&pipe, SIGPIPE)
        guard pthread_sigmask(SIG_BLOCK, &pipe, &old) == 0 else { return body() }
        let result = body()
        guard sigismember(&old, SIGPIPE) != 1 else { return result }
        var pending = sigset_t()
        if sigpending(&pending) == 0, sigismember(&pending, SIGPIPE) == 1 {
            var now = timespec()
            _ = sigtimedwait(&pipe, nil, &now)
        }
        pthread_sigmask(SIG_SETMASK, &old, nil)
        return result
    }

    /// Blocks SIGPIPE on the calling thread for good (the bus's publisher and reader threads).
    static func blockSIGPIPEOnThisThread() {
        var pipe = sigset_t()
        sigemptyset(&pipe)
        sigaddset(&pipe, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipe, nil)
    }

    /// The command's name, for messages.
    private static func name(_ arguments: [[UInt8]]) -> String {
        arguments.first.map { String(decoding: $0, as: UTF8.self) } ?? "(empty command)"
    }

    private static func timeval(_ seconds: Double) -> Glibc.timeval {
        let whole = max(0, seconds).rounded(.down)
        return Glibc.timeval(tv_sec: Int(whole), tv_usec: Int((max(0, seconds) - whole) * 1_000_000))
    }
}
