import Foundation
import Locking
import Reactor
import Wire

/// One line connection of `moonrunner-bench replays`, read on a thread of its own so the server never holds
/// output for it (an unread replay would be conflated, or closed as too slow, and measure nothing), and
/// written from the caller's thread.
///
/// The socket is read on the reader thread and written on the caller's (the kernel allows one of each at
/// once); what the reader found is behind a lock.
final class ReplayBenchClient: Sendable {
    private let socket: StreamSocket
    private let keeping: @Sendable (String) -> Bool
    private let inbox = Locked(Inbox())

    /// What the reader thread found.
    private struct Inbox {
        var lineCount = 0
        var kept: [String] = []
        var isReading = true
        var readerDone = false
    }

    /// Connects (blocking) and starts reading; lines for which `keeping` is true are kept for ``wait(for:timeout:)``.
    init(host: String, port: UInt16, keeping: @escaping @Sendable (String) -> Bool) throws(LoadSetupError) {
        do {
            socket = try StreamSocket.connect(host: host, port: port)
            try socket.setBlocking(true)
        } catch {
            throw LoadSetupError(description: "cannot connect to \(host):\(port): \(error)")
        }
        self.keeping = keeping
        let thread = Thread { [self] in readUntilClosed() }
        thread.name = "replay-bench-reader"
        thread.start()
    }

    /// Lines received so far.
    var linesReceived: Int { inbox.withLock { $0.lineCount } }

    /// Writes all of `text` (blocking while the server reads slower than it comes).
    func send(_ text: [UInt8]) throws(LoadSetupError) {
        var written = 0
        while written < text.count {
            let result: IOResult<Int>
            do {
                result = try socket.write(text, from: written)
            } catch {
                throw LoadSetupError(description: "write: \(error)")
            }
            if case .processed(let count) = result { written += count }
        }
    }

    /// The first kept line starting with `prefix` (kept lines before it are dropped), or nil after `timeout`
    /// seconds or once the server hung up.
    func wait(for prefix: String, timeout: Double) -> String? {
        let isThere = { (inbox: Inbox) in !inbox.isReading || inbox.kept.contains { $0.hasPrefix(prefix) } }
        return inbox.withLock(when: isThere, before: Date(timeIntervalSinceNow: timeout)) { inbox, _ in
            guard let index = inbox.kept.firstIndex(where: { $0.hasPrefix(prefix) }) else { return nil }
            let line = inbox.kept[index]
            inbox.kept.removeFirst(index + 1)
            return line
        }
    }

    /// Stops reading and closes: `shutdown` wakes the blocked read, which ends the thread before the
    /// descriptor is closed (never closed under a read, where its number could be reused meanwhile).
    func close() {
        socket.shutdown()
        inbox.withLock(when: { $0.readerDone }) { _ in }
        socket.close()
    }

    private func readUntilClosed() {
        var framer = LineFramer(maximumLineLength: 64 * 1024)
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        reading: while true {
            let result: IOResult<Int>
            do {
                result = try buffer.withUnsafeMutableBytes { raw throws(IOError) in try socket.read(into: raw) }
            } catch {
                break
            }
            guard case .processed(let count) = result else { continue }
            if count == 0 { break }
            buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            var lines = 0
            var keep: [String] = []
            while let framed = framer.nextLine() {
                guard case .line(let line) = framed else { break reading }
                lines += 1
                let text = String(decoding: line, as: UTF8.self)
                if keeping(text) { keep.append(text) }
            }
            inbox.withLock { inbox in
                inbox.lineCount += lines
                inbox.kept += keep
            }
            if !keep.isEmpty { inbox.broadcast() }
        }
        inbox.withLock { inbox in
            inbox.isReading = false
            inbox.readerDone = true
        }
        inbox.broadcast()
    }
}
