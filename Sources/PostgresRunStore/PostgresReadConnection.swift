import Foundation
import Locking
import RunStore
import Synchronization

/// A read connection and the lock that serializes its use. A session that died under a read (the server
/// restarted) is replaced and the read tried once more; when the server cannot be reached, reads fail at
/// once for a second after each failed attempt (or until the writer commits again: ``serverIsBack()``), so
/// callers asking in a loop do not each wait for a connect.
final class PostgresReadConnection: Sendable {
    private let url: String
    /// The connection, nil once closed; its lock serializes the reads.
    private let connection: Locked<PostgresConnection?>
    /// The last failed reconnect; a lock of its own, so the writer thread can clear it while a read runs.
    private let lastFailure = Mutex<(at: UInt64, error: StoreError)?>(nil)

    /// How long a failed connect is answered from memory, in nanoseconds.
    private static let failFastWindow: UInt64 = 1_000_000_000

    /// Connects now, so a wrong URL or an unreachable server fails the store's opening.
    init(url: String) throws(StoreError) {
        self.url = url
        connection = Locked(try PostgresConnection(url: url))
    }

    /// Runs `body` with the connection, one caller at a time.
    func read<Result>(_ body: (PostgresConnection) throws(StoreError) -> Result) throws(StoreError) -> Result {
        try connection.withLock { connection throws(StoreError) in
            let connection = try connected(connection)
            do throws(StoreError) {
                return try body(connection)
            } catch {
                guard !connection.isConnected else { throw error }
                // The session is gone (restart, failover, idle timeout): once more on a new one.
                try reconnect(connection)
                return try body(connection)
            }
        }
    }

    /// Forgets the last failed reconnect: the writer just committed, so the next read tries at once.
    func serverIsBack() {
        lastFailure.withLock { $0 = nil }
    }

    /// Closes the connection; later reads fail.
    func close() {
        connection.withLock { $0 = nil }
    }

    /// The connection, up; `connection` is the locked one (nil once closed).
    private func connected(_ connection: PostgresConnection?) throws(StoreError) -> PostgresConnection {
        guard let connection else {
            throw StoreError.closed
        }
        if !connection.isConnected { try reconnect(connection) }
        return connection
    }

    /// A new session, or the recent failure again. Caller holds the connection's lock.
    private func reconnect(_ connection: PostgresConnection) throws(StoreError) {
        let now = DispatchTime.now().uptimeNanoseconds
        if let recent = lastFailure.withLock({ $0 }), now - recent.at < Self.failFastWindow { throw recent.error }
        do throws(StoreError) {
            try connection.reconnect()
            lastFailure.withLock { $0 = nil }
        } catch {
            lastFailure.withLock { $0 = (now, error) }
            throw error
        }
    }
}
