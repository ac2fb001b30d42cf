import CEpoll
import Glibc

/// Process-wide limits and measurements for the 10,000-connection target.
public enum ProcessLimits {
    /// Raises the soft `RLIMIT_NOFILE` to at least `wanted` (never lowers it) and returns the soft
    /// limit now in force.
    ///
    /// Unprivileged processes can go up to the hard limit; if `wanted` is above it, raising the hard
    /// limit is attempted too (works as root) and otherwise the soft limit is raised to the hard one.
    public static func raiseOpenFileLimit(to wanted: Int) -> Int {
        guard var limit = try? Syscall.openFileLimit() else { return 0 }
        let target = rlim_t(Swift.max(wanted, 0))
        if limit.rlim_cur < target {
            if target <= limit.rlim_max {
                limit.rlim_cur = target
                try? Syscall.setOpenFileLimit(limit)
            } else {
                var raised = limit
                raised.rlim_cur = target
                raised.rlim_max = target
                do {
                    try Syscall.setOpenFileLimit(raised)
                } catch {
                    limit.rlim_cur = limit.rlim_max
                    try? Syscall.setOpenFileLimit(limit)
                }
            }
        }
        guard let now = try? Syscall.openFileLimit() else { return 0 }
        return Int(clamping: now.rlim_cur)
    }

    /// The soft and hard `RLIMIT_NOFILE` limits now in force (`RLIM_INFINITY` as `Int.max`); nil if they
    /// cannot be read.
    public static func openFileLimits() -> (soft: Int, hard: Int)? {
        guard let limit = try? Syscall.openFileLimit() else { return nil }
        return (Int(clamping: limit.rlim_cur), Int(clamping: limit.rlim_max))
    }

    /// The process's resident set size in bytes (`/proc/self/statm` resident pages × page size),
    /// or 0 if it cannot be read.
    public static func residentMemoryBytes() -> Int {
        guard let fd = try? Syscall.openForReading("/proc/self/statm") else { return 0 }
        defer { try? Syscall.close(fd) }
        var bytes = [UInt8](repeating: 0, count: 128)
        let result = bytes.withUnsafeMutableBytes { buffer in try? Syscall.read(fd, into: buffer) }
        guard case .processed(let count)? = result, count > 0 else { return 0 }
        // "size resident shared text lib data dt": the second field.
        let fields = bytes[..<count].split(separator: UInt8(ascii: " "))
        guard fields.count > 1, let pages = Int(String(decoding: fields[1], as: UTF8.self)) else { return 0 }
        return pages * sysconf(Int32(_SC_PAGESIZE))
    }

    /// Hands the pages malloc holds free back to the system (glibc's `malloc_trim(0)`, every arena); returns
    /// true if any were. glibc keeps what a burst freed (a backlog drained, queues emptied) in its arenas, so
    /// the resident size would otherwise stay at the burst's peak. Takes each arena's lock in turn: call it
    /// now and then, not per request.
    @discardableResult
    public static func returnFreeMemory() -> Bool {
        CEpoll.malloc_trim(0) != 0
    }
}
