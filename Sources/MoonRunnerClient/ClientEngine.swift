import Foundation
import Wire

/// The protocol state machine behind a `MoonRunnerClient`: streams, framing, the request queue, unacked fixes,
/// subscriptions and reconnection.
///
/// **Confinement.** Every member is used on the client I/O thread only (`ClientIOThread`): the public client
/// reaches it with `io.execute`. That single-thread rule is what makes its unchecked `Sendable` sound, and it
/// also gives the delegate its ordering guarantee. Events leave through `owner.publish`, never under a lock.
final class ClientEngine: @unchecked Sendable {  // Every member is the client I/O thread's (see Confinement).
    let configuration: ClientConfiguration
    let io: ClientIOThread
    /// The client, for publishing events (weak: the client owns the engine).
    weak var owner: MoonRunnerClient?

    // MARK: Connection
    var phase = ConnectionState.idle
    /// Bumped for every new stream pair, so late events from an old pair are ignored.
    var generation = 0
    var input: InputStream?
    var output: OutputStream?
    var receiver: StreamReceiver?
    var framer: LineFramer
    var outbox: [UInt8] = []
    var outboxHead = 0
    var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    /// Failed attempts since the last connection that delivered a line.
    var attempt = 0
    var reconnectTimer: ScheduledTask?
    /// Fails the attempt when the streams are not open in `configuration.connectTimeout`.
    var connectTimer: ScheduledTask?
    var random = SystemRandomNumberGenerator()
    var lastFailure = "the server closed the connection"

    // MARK: Protocol state
    var name: String?
    var key: String?
    /// `ok:iam` arrived on the current connection: fixes may flow.
    var identified = false
    /// `join` calls waiting for the next `iam:` to be sent.
    var joinWaiters: [RequestCompletion] = []
    /// `watch:`/`coach:` commands in force, in the order given, re-sent after a reconnect.
    var subscriptions: [Command] = []
    var unacked = UnackedFixes()
    /// A `stop:` to send once the fixes before it are sent, and who waits for its `end:`.
    var stopRequest: (save: Bool, waiters: [RequestCompletion])?
    /// Sent commands waiting for their reply, in order.
    var pending: [PendingRequest] = []
    /// Read requests to send again on the next connection.
    var retries: [PendingRequest] = []

    init(configuration: ClientConfiguration, io: ClientIOThread) {
        self.configuration = configuration
        self.io = io
        framer = LineFramer(maximumLineLength: configuration.maximumLineLength)
    }

    /// True while a stream pair exists (commands written now are sent once it opens).
    var hasStreams: Bool { output != nil }

    // MARK: Lifecycle

    /// Starts connecting unless connected, connecting, waiting, failed or closed.
    func connectIfIdle() {
        if case .idle = phase { openStreams() }
    }

    /// Makes and opens a new stream pair, then queues what a fresh connection must say: `iam:` (if joined),
    /// the subscriptions, and repeatable reads that were in flight. Fixes follow the `ok:iam`.
    func openStreams() {
        reconnectTimer = nil
        generation += 1
        let (input, output) = PlatformStreams.make(configuration, io: io)
        let receiver = StreamReceiver(engine: self, generation: generation)
        input.delegate = receiver
        output.delegate = receiver
        PlatformStreams.schedule(input, output, on: io)
        self.input = input
        self.output = output
        self.receiver = receiver
        setPhase(.connecting)
        let attempt = generation
        let timeout = configuration.connectTimeout
        connectTimer = io.schedule(after: timeout) { [weak self] in
            guard let self, self.generation == attempt, case .connecting = self.phase else { return }
            self.connectionLost("connect: timed out after \(NumberFormat.plain(timeout)) s")
        }
        input.open()
        output.open()
        if let name {
            send(.identify(name: name, key: key), completions: joinWaiters)
            joinWaiters = []
        }
        for subscription in subscriptions { send(subscription) }
        let retries = self.retries
        self.retries = []
        for request in retries { send(request.command, completions: request.completions) }
    }

    /// Closes both streams (always both) and forgets the connection's transient state.
    func closeStreams() {
        connectTimer?.cancel()
        connectTimer = nil
        input?.close()
        output?.close()
        PlatformStreams.unschedule(input, output, from: io)
        input?.delegate = nil
        output?.delegate = nil
        input = nil
        output = nil
        receiver = nil
        framer = LineFramer(maximumLineLength: configuration.maximumLineLength)
        outbox.removeAll()
        outboxHead = 0
        identified = false
    }

    /// The connection dropped (or never came up): settle the in-flight requests, then reconnect or give up.
    func connectionLost(_ reason: String) {
        guard hasStreams else { return }
        lastFailure = reason
        closeStreams()
        for request in pending {
            switch request.command {
            case .identify: joinWaiters.append(contentsOf: request.completions)
            case .stop(let save):
                // A stop whose run already ended (no waiters left) must not stop the next run.
                guard !request.completions.isEmpty else { continue }
                stopRequest = (save, (stopRequest?.waiters ?? []) + request.completions)
            case .watch, .coach, .unwatch: break  // re-sent from `subscriptions`
            default:
                if request.isRepeatable { retries.append(request) } else { request.complete(.failure(.connectionLost)) }
            }
        }
        pending = []
        let policy = configuration.reconnect
        attempt += 1
        if !policy.isEnabled || (policy.maximumAttempts.map { attempt > $0 } ?? false) {
            giveUp(.connectionFailed(reason))
            return
        }
        let delay = policy.delay(attempt: attempt, using: &random)
        setPhase(.waitingToReconnect(attempt: attempt, delay: delay, reason: Self.plainReason(reason)))
        let generation = self.generation
        reconnectTimer = io.schedule(after: delay) { [weak self] in
            guard let self, self.generation == generation, case .waitingToReconnect = self.phase else { return }
            self.openStreams()
        }
    }

    /// `connect: Connection refused (errno 111)` as `connection refused`.
    static func plainReason(_ reason: String) -> String {
        var text = Substring(reason)
        if let colon = text.firstIndex(of: ":"), !text[..<colon].contains(" ") {
            text = text[text.index(after: colon)...]
        }
        if let errno = text.range(of: " (errno") { text = text[..<errno.lowerBound] }
        return text.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// Fails everything that waits and enters a final state.
    func giveUp(_ error: MoonRunnerClientError, closing: Bool = false) {
        reconnectTimer?.cancel()
        reconnectTimer = nil
        closeStreams()
        let waiting = pending + retries
        let waiters = joinWaiters + (stopRequest?.waiters ?? [])
        pending = []
        retries = []
        joinWaiters = []
        stopRequest = nil
        // The state first, so a caller woken by the error already sees why.
        setPhase(closing ? .closed : .failed(error))
        for request in waiting { request.complete(.failure(error)) }
        for waiter in waiters { waiter(.failure(error)) }
    }

    /// `close()`: closes both streams for good.
    func close() {
        guard phase != .closed else { return }
        giveUp(.closed, closing: true)
    }

    func setPhase(_ phase: ConnectionState) {
        guard self.phase != phase else { return }
        self.phase = phase
        publish(.state(phase))
    }

    func publish(_ event: ClientEvent) {
        owner?.publish(event)
    }

    // MARK: Stream events

    /// A stream event from the pair of `generation`.
    func handle(_ event: Stream.Event, from stream: Stream, generation: Int) {
        guard generation == self.generation, hasStreams else { return }
        switch event {
        case .openCompleted:
            if stream === output {
                connectTimer?.cancel()
                connectTimer = nil
                setPhase(.connected)
            }
        case .hasBytesAvailable:
            readAvailable()
        case .hasSpaceAvailable:
            flush()
        case .errorOccurred:
            connectionLost(stream.streamError.map { "\($0)" } ?? "stream error")
        case .endEncountered:
            readAvailable()
            connectionLost("the server closed the connection")
        default:
            break
        }
    }

    /// Reads everything buffered and handles each complete line.
    private func readAvailable() {
        guard let input else { return }
        var gotBytes = false
        while input.hasBytesAvailable {
            let count = readBuffer.withUnsafeMutableBufferPointer { input.read($0.baseAddress!, maxLength: $0.count) }
            guard count > 0 else { break }
            gotBytes = true
            readBuffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            handleFramedLines()
            // A handler may have closed the client or lost the connection.
            guard self.input === input else { return }
        }
        if gotBytes { attempt = 0 }
    }

    private func handleFramedLines() {
        while let framed = framer.nextLine() {
            guard case .line(let bytes) = framed else { continue }  // over-long lines are skipped
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            // Unknown kinds and malformed lines are ignored, as protocol.md asks of clients.
            guard let event = try? ServerEvent(event: Event.parse(bytes)) else { continue }
            handleLine(event)
        }
    }

    // MARK: Writing

    /// Sends a command that expects a reply, queueing its completions.
    func send(_ command: Command, completions: [RequestCompletion] = []) {
        pending.append(PendingRequest(command, completions: completions))
        write(command)
    }

    /// Appends a command to the outbox and writes what the socket takes.
    func write(_ command: Command) {
        command.append(to: &outbox)
        flush()
    }

    /// Writes queued bytes while the stream has room.
    func flush() {
        guard let output else { return }
        while outboxHead < outbox.count, output.hasSpaceAvailable {
            let written = outbox.withUnsafeBufferPointer { bytes in
                output.write(bytes.baseAddress! + outboxHead, maxLength: bytes.count - outboxHead)
            }
            guard written > 0 else { break }
            outboxHead += written
        }
        if outboxHead == outbox.count {
            outbox.removeAll(keepingCapacity: true)
            outboxHead = 0
        } else if outboxHead > 64 * 1024 {
            outbox.removeSubrange(0..<outboxHead)
            outboxHead = 0
        }
    }
}

/// Receives the stream events of one connection attempt and hands them to the engine on the I/O thread.
final class StreamReceiver: NSObject, StreamDelegate, Sendable {
    private weak let engine: ClientEngine?
    private let generation: Int

    init(engine: ClientEngine, generation: Int) {
        self.engine = engine
        self.generation = generation
    }

    func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
        engine?.handle(eventCode, from: aStream, generation: generation)
    }
}
