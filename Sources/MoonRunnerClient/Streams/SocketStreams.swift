#if !canImport(Darwin)
import Foundation
import Locking

/// An `InputStream` over a TCP socket, for Linux, where Foundation cannot make socket streams.
///
/// Behaves like the streams Foundation's socket streams return on Apple platforms, with two documented
/// differences: events are delivered on the client I/O thread whatever run loop it is scheduled in (so
/// `schedule(in:forMode:)` and `remove(from:forMode:)` are accepted and ignored), and `read` never blocks —
/// with nothing buffered it returns 0 while `streamStatus` stays `.open` (end of stream is `.atEnd`).
final class SocketInputStream: InputStream {
    private let connection: SocketConnection
    private let status = StreamStatusBox()

    init(connection: SocketConnection) {
        self.connection = connection
        super.init(data: Data())
    }

    /// The delegate; the stream is its own delegate (ignoring events) when none is set, as in Foundation.
    override var delegate: (any StreamDelegate)? {
        get { status.delegate }
        set { status.delegate = newValue }
    }

    override func open() {
        guard status.begin() else { return }
        connection.open(input: true)
    }

    override func close() {
        guard status.end() else { return }
        connection.close(input: true)
    }

    override var streamStatus: Stream.Status {
        status.resolve(connection, isInput: true)
    }

    override var streamError: (any Error)? {
        connection.withState { state in
            if case .failed(let error) = state.phase { return error }
            return nil
        }
    }

    override var hasBytesAvailable: Bool {
        connection.withState { $0.buffered > 0 }
    }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength len: Int) -> Int {
        switch streamStatus {
        case .open, .atEnd:
            return connection.read(into: buffer, maxLength: len)
        case .error:
            return -1
        default:
            return connection.withState { $0.buffered } > 0 ? connection.read(into: buffer, maxLength: len) : -1
        }
    }

    /// No internal buffer is exposed (the inbox may be appended to at any time).
    override func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>,
                            length len: UnsafeMutablePointer<Int>) -> Bool {
        false
    }

    override func property(forKey key: Stream.PropertyKey) -> AnyObject? { nil }
    override func setProperty(_ property: AnyObject?, forKey key: Stream.PropertyKey) -> Bool { false }
    override func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}
    override func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}
}

/// An `OutputStream` over a TCP socket, for Linux (see `SocketInputStream` for the differences from Apple's
/// socket streams). `write` never blocks: it returns 0 when the socket's send buffer is full, and a
/// `hasSpaceAvailable` event follows once it drains.
final class SocketOutputStream: OutputStream {
    private let connection: SocketConnection
    private let status = StreamStatusBox()

    init(connection: SocketConnection) {
        self.connection = connection
        super.init(toMemory: ())
    }

    required init(toMemory: ()) {
        fatalError("SocketOutputStream is made by SocketStreams.make")
    }

    /// The delegate (events are ignored when none is set).
    override var delegate: (any StreamDelegate)? {
        get { status.delegate }
        set { status.delegate = newValue }
    }

    override func open() {
        guard status.begin() else { return }
        connection.open(input: false)
    }

    override func close() {
        guard status.end() else { return }
        connection.close(input: false)
    }

    override var streamStatus: Stream.Status {
        status.resolve(connection, isInput: false)
    }

    override var streamError: (any Error)? {
        connection.withState { state in
            if case .failed(let error) = state.phase { return error }
            return nil
        }
    }

    override var hasSpaceAvailable: Bool {
        connection.withState { state in
            if case .open = state.phase { return !state.waitingForSpace }
            return false
        }
    }

    override func write(_ buffer: UnsafePointer<UInt8>, maxLength len: Int) -> Int {
        switch streamStatus {
        case .open: return len == 0 ? 0 : connection.write(buffer, count: len)
        case .opening: return 0
        default: return -1
        }
    }

    override func property(forKey key: Stream.PropertyKey) -> AnyObject? { nil }
    override func setProperty(_ property: AnyObject?, forKey key: Stream.PropertyKey) -> Bool { false }
    override func schedule(in aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}
    override func remove(from aRunLoop: RunLoop, forMode mode: RunLoop.Mode) {}
}

/// Makes a connected pair of socket streams (unopened, like Foundation's socket streams).
enum SocketStreams {
    static func make(host: String, port: UInt16, connectTimeout: Double,
                     io: ClientIOThread) -> (InputStream, OutputStream) {
        let connection = SocketConnection(host: host, port: port, connectTimeout: connectTimeout, io: io)
        let input = SocketInputStream(connection: connection)
        let output = SocketOutputStream(connection: connection)
        connection.attach(input: input, output: output)
        return (input, output)
    }
}

/// A stream's own part of its status (opened, closed) and its delegate, behind a lock.
private final class StreamStatusBox: Sendable {
    /// What the lock guards.
    private struct Status {
        var opened = false
        var closed = false
        weak var delegate: (any StreamDelegate)?
    }

    private let status = Locked(Status())

    var delegate: (any StreamDelegate)? {
        get { status.withLock { $0.delegate } }
        set { status.withLock { $0.delegate = newValue } }
    }

    /// Marks the stream opened; false if it was opened before (open is once only, as in Foundation).
    func begin() -> Bool {
        status.withLock { status in
            guard !status.opened else { return false }
            status.opened = true
            return true
        }
    }

    /// Marks the stream closed; false if it already was (or never opened).
    func end() -> Bool {
        status.withLock { status in
            guard status.opened, !status.closed else { return false }
            status.closed = true
            return true
        }
    }

    /// Combines the stream's own status with its connection's.
    func resolve(_ connection: SocketConnection, isInput: Bool) -> Stream.Status {
        let (opened, closed) = status.withLock { ($0.opened, $0.closed) }
        if closed { return .closed }
        if !opened { return .notOpen }
        return connection.withState { state in
            switch state.phase {
            case .idle, .connecting: return .opening
            case .open: return .open
            case .failed: return .error
            case .ended: return isInput && state.buffered == 0 ? .atEnd : .open
            case .closed: return .closed
            }
        }
    }
}
#endif
