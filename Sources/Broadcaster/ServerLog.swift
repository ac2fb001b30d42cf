import LiveCore
import Foundation

/// One line per happening, to stderr, with a UTC timestamp. Safe from any thread (each line is one write).
public struct ServerLog: Sendable {
    /// False silences the log (tests and benchmarks that start many servers).
    public var isEnabled: Bool

    /// A log that writes when enabled.
    public init(isEnabled: Bool = true) {
        self.isEnabled = isEnabled
    }

    /// Writes `message` as one line.
    public func write(_ message: String) {
        guard isEnabled else { return }
        let stamp = Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
        FileHandle.standardError.write(Data("\(stamp) \(message)\n".utf8))
    }
}
