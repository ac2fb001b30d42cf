import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Another process's open-file limit (`RLIMIT_NOFILE`), read and changed with `prlimit(2)`: a process of the
/// same user may change it without privileges. For running a spawned server out of descriptors while it runs,
/// which no flag of its own could do.
public enum ProcessFileLimit {
    private typealias PRLimit = @convention(c) (pid_t, Int32, UnsafePointer<rlimit>?, UnsafeMutablePointer<rlimit>?) -> Int32
    /// glibc declares `prlimit` only under `_GNU_SOURCE`, which Swift's Glibc module is not built with.
    private static let prlimitFunction: PRLimit? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "prlimit") else { return nil }
        return unsafeBitCast(symbol, to: PRLimit.self)
    }()

    /// An error from `prlimit`.
    public struct Failure: Error, CustomStringConvertible {
        /// The errno (ENOSYS when there is no `prlimit`).
        public let code: Int32
        public var description: String { "prlimit: \(String(cString: strerror(code)))" }
    }

    /// The soft and hard limits of `pid`.
    public static func limits(of pid: pid_t) throws -> (soft: Int, hard: Int) {
        guard let prlimit = prlimitFunction else { throw Failure(code: ENOSYS) }
        var old = rlimit()
        guard prlimit(pid, Int32(RLIMIT_NOFILE.rawValue), nil, &old) == 0 else { throw Failure(code: errno) }
        return (Int(clamping: old.rlim_cur), Int(clamping: old.rlim_max))
    }

    /// Sets the soft limit of `pid` (its hard limit stays, so it can be raised back).
    public static func setSoftLimit(of pid: pid_t, to soft: Int) throws {
        guard let prlimit = prlimitFunction else { throw Failure(code: ENOSYS) }
        let hard = try limits(of: pid).hard
        var new = rlimit(rlim_cur: rlim_t(soft), rlim_max: rlim_t(hard))
        guard prlimit(pid, Int32(RLIMIT_NOFILE.rawValue), &new, nil) == 0 else { throw Failure(code: errno) }
    }

    /// The descriptors `pid` has open, by number (from `/proc/PID/fd`).
    public static func openDescriptors(of pid: pid_t) throws -> [Int] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").compactMap(Int.init).sorted()
    }
}
