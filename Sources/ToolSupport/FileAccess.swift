import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Reading and writing the files a user names, with errors that read like `cannot read run.gpx: no such
/// file` (Foundation's errors print as NSCocoaErrorDomain dumps).
public enum FileAccess {
    /// A file that could not be read or written.
    public struct Problem: Error, CustomStringConvertible {
        /// "cannot read run.gpx: no such file".
        public let description: String

        init(_ verb: String, _ path: String, errno code: Int32) {
            self.init(verb, path, because: FileAccess.reason(code))
        }

        init(_ verb: String, _ path: String, because reason: String) {
            description = "cannot \(verb) \(path): \(reason)"
        }
    }

    /// The most `read` takes by default: 512 MiB (a GPX of a million points is some 85 MB).
    public static let defaultReadLimit = 512 << 20

    /// The whole file, refused past `limit` bytes (a device such as /dev/zero never ends).
    public static func read(_ path: String, limit: Int = defaultReadLimit) throws(Problem) -> Data {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw Problem("read", path, errno: errno) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw Problem("read", path, errno: errno) }
        guard status.st_mode & S_IFMT != S_IFDIR else { throw Problem("read", path, errno: EISDIR) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return data }
            if count < 0 {
                if errno == EINTR { continue }
                throw Problem("read", path, errno: errno)
            }
            data.append(contentsOf: buffer[0..<count])
            if data.count > limit { throw Problem("read", path, because: "larger than \(limit >> 20) MiB") }
        }
    }

    /// True when both paths name one existing file (the same device and inode, whatever the spelling).
    public static func isSameFile(_ first: String, _ second: String) -> Bool {
        var a = stat(), b = stat()
        guard stat(first, &a) == 0, stat(second, &b) == 0 else { return false }
        return a.st_dev == b.st_dev && a.st_ino == b.st_ino
    }

    /// Writes `data` to `path`, replacing it.
    public static func write(_ data: Data, to path: String) throws(Problem) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw Problem("write", path, errno: errno) }
        var offset = 0
        let failure: Int32? = data.withUnsafeBytes { bytes in
            while offset < bytes.count {
                let written = Glibc.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        let closed = close(descriptor)
        if let failure { throw Problem("write", path, errno: failure) }
        guard closed == 0 else { throw Problem("write", path, errno: errno) }
    }

    /// Short words for the usual errnos, the C library's text for the rest.
    static func reason(_ code: Int32) -> String {
        switch code {
        case ENOENT: "no such file"
        case EACCES, EPERM: "permission denied"
        case EISDIR: "is a directory"
        case ENOTDIR: "a part of the path is not a directory"
        case ENOSPC: "the disk is full"
        case EROFS: "read-only file system"
        default: String(cString: strerror(code)).lowercased()
        }
    }
}
