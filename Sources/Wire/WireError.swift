/// Why a line was refused, or why the server answers a command with `err:`.
///
/// The raw value is the code as it appears on the wire (`err:CODE "reason"`).
public enum ErrorCode: String, Sendable, Hashable, CaseIterable {
    // MARK: Parse errors (detected by `Command.parse` / `Event.parse`)

    /// The word before `:` is not a command (words are lowercase).
    case unknownCommand = "unknown_command"
    /// The line has no `:` after the command word.
    case missingColon = "missing_colon"
    /// A number is missing, malformed, not finite or out of its integer range.
    case badNumber = "bad_number"
    /// A latitude beyond ±90 or a longitude beyond ±180.
    case badCoordinate = "bad_coordinate"
    /// A runner name that is empty, longer than 32 bytes, has characters outside `A-Z a-z 0-9 _ . -`, or is `.`
    /// or `..`.
    case badName = "bad_name"
    /// A key that is empty, longer than 64 characters or not alphanumeric.
    case badKey = "bad_key"
    /// Arguments where none are expected, a wrong number of fields, or a value out of its range.
    case badArgument = "bad_argument"
    /// A line longer than the maximum (4096 bytes without its line ending).
    case lineTooLong = "line_too_long"
    /// A line that is not valid UTF-8.
    case badUTF8 = "bad_utf8"
    /// A line containing a NUL byte.
    case nulByte = "nul_byte"

    // MARK: Server errors (sent by the Broadcaster)

    /// `loc:` or `stop:` before a successful `iam:`.
    case notIdentified = "not_identified"
    /// The name is claimed and the key is missing or wrong.
    case wrongKey = "wrong_key"
    /// A second `iam:` on a connection that is already identified.
    case alreadyIdentified = "already_identified"
    /// Another connection proved this runner's key; this one is told and closed.
    case replaced
    /// `stop:` without a live run.
    case noRun = "no_run"
    /// An unknown runner or run, or nobody to cheer.
    case notFound = "not_found"
    /// The server is full; the connection is closed.
    case busy
    /// Too many bad lines; the connection is closed.
    case flood
    /// No valid command in time after connecting; the connection is closed.
    case idle
    /// The store failed; the command had no effect.
    case storage
    /// The server is shutting down; the connection is told and closed.
    case shuttingDown = "shutting_down"
    /// In a cluster: `iam:NAME KEY` while the runner's run is live on another node that is alive (it renews
    /// the run's lease); the reason names the node.
    case liveElsewhere = "live_elsewhere"
    /// The share token a follower used was revoked or expired: its subscription to the runner is gone.
    case revoked

    /// True for the codes the parser produces, false for the ones only the server decides.
    public var isParseError: Bool {
        switch self {
        case .unknownCommand, .missingColon, .badNumber, .badCoordinate, .badName, .badKey, .badArgument,
             .lineTooLong, .badUTF8, .nulByte:
            return true
        default:
            return false
        }
    }

    /// True when the server closes the connection right after sending this error.
    public var closesConnection: Bool {
        switch self {
        case .busy, .flood, .idle, .shuttingDown, .replaced: return true
        default: return false
        }
    }
}

/// The one error type of the Wire layer: a code for machines and a reason for people.
public struct WireError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, as sent in `err:CODE`.
    public var code: ErrorCode
    /// A short human explanation (sent quoted after the code).
    public var reason: String

    /// Creates an error.
    public init(_ code: ErrorCode, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// Creates an error (labelled form).
    public init(code: ErrorCode, reason: String) {
        self.init(code, reason)
    }

    /// `code: reason`, for logs.
    public var description: String { "\(code.rawValue): \(reason)" }
}
