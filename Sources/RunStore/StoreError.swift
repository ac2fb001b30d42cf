/// The one error type of the storage layer, the same for every backend: what kind of failure (what a caller
/// decides on: retry, drop, tell the user), a message in words, and the backend's own code underneath (for logs
/// and for tests of one backend).
public struct StoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, in terms every backend maps its own codes to.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Another writer or connection holds what was needed (a lock, a serialization conflict, no free
        /// connection): waiting may help.
        case busy
        /// The database cannot be reached or opened now (I/O error, lost or refused connection, missing file).
        case unavailable
        /// No room: the disk, a quota or the server's resources.
        case full
        /// The database is read-only (file, medium, standby server).
        case readOnly
        /// The database ran out of memory.
        case outOfMemory
        /// A statement was interrupted or timed out.
        case interrupted
        /// The database or a stored value is damaged or not what this build writes.
        case corrupt
        /// The database was migrated by a newer build: refused rather than written to.
        case newerSchema
        /// The server refused the user (wrong user or password): waiting does not help.
        case refused
        /// A uniqueness or other constraint refused a write.
        case constraint
        /// A value is not of the type it should be.
        case mismatch
        /// The store was closed, or used in a way it cannot be (a programming error).
        case misuse
        /// A file to import is not what it says (bad GPX or TCX); the message names the line.
        case invalidInput
        /// Anything else.
        case other
    }

    /// The backend's own code under the error, kept for logs and for one backend's tests.
    public enum Underlying: Sendable, Hashable {
        /// Not from a database (input files, a closed store).
        case none
        /// An SQLite (extended) result code, e.g. 5 (`SQLITE_BUSY`), and SQLite's words for it.
        case sqlite(code: Int32, meaning: String)
        /// A PostgreSQL five-character SQLSTATE, e.g. `23505`, `08006`.
        case postgres(sqlState: String)
    }

    /// What kind of failure.
    public var kind: Kind
    /// What failed, in words, including the database's own message.
    public var message: String
    /// The backend's code.
    public var underlying: Underlying

    /// Creates an error.
    public init(_ kind: Kind, _ message: String, underlying: Underlying = .none) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
    }

    /// `message (SQLite error code: meaning)`, or `message (PostgreSQL SQLSTATE state)`; just the message for
    /// errors that come from no database.
    public var description: String {
        switch underlying {
        case .none: message
        case .sqlite(let code, let meaning): "\(message) (SQLite error \(code): \(meaning))"
        case .postgres(let state): "\(message) (PostgreSQL SQLSTATE \(state))"
        }
    }

    /// True for failures that may go away by themselves (disk full, I/O, locks, read-only media, a server
    /// away), so a writer should keep the writes and retry rather than drop them.
    public var isTransient: Bool {
        switch kind {
        case .busy, .unavailable, .full, .readOnly, .outOfMemory, .interrupted: true
        case .corrupt, .newerSchema, .refused, .constraint, .mismatch, .misuse, .invalidInput, .other: false
        }
    }

    /// The error for a store used after it was closed.
    public static let closed = StoreError(.misuse, "the run store is closed")

    /// The same error with some context in front of the message.
    package func adding(context: String) -> StoreError {
        StoreError(kind, "\(context): \(message)", underlying: underlying)
    }
}
