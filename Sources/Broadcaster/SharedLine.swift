/// The bytes of one outgoing line, copied once and then only referenced: a broadcast hands the same
/// `SharedLine` to every recipient's ``OutputBuffer``, and the socket write gathers them with `writev`, so a line
/// for 500 spectators is one copy, not 500.
///
/// The bytes live inside the object itself (tail-allocated: one allocation per line, not two, and a pace line is
/// made for every fix), so they stay put exactly as long as the object lives, which is why a write may hold a
/// raw pointer into them while a buffer keeps a reference (an `[UInt8]` gives no pointer outside a closure).
/// The header is the byte count. Immutable once made.
/// Not Sendable (ManagedBuffer is not): a connection moving to another loop takes its queue along inside a
/// ``MigratingPeer``, whose ownership passes whole.
final class SharedLine: ManagedBuffer<Int, UInt8> {
    /// A copy of `line`.
    static func copying(_ line: [UInt8]) -> SharedLine {
        let made = unsafeDowncast(SharedLine.create(minimumCapacity: line.count) { _ in line.count },
                                  to: SharedLine.self)
        made.withUnsafeMutablePointerToElements { target in
            line.withUnsafeBufferPointer { source in
                guard let start = source.baseAddress else { return }
                target.initialize(from: start, count: source.count)
            }
        }
        return made
    }

    /// The line, newline included.
    var bytes: UnsafeRawBufferPointer {
        withUnsafeMutablePointerToElements { UnsafeRawBufferPointer(start: $0, count: header) }
    }

    /// Bytes in the line.
    var count: Int { header }
}

/// Makes one ``SharedLine`` per distinct line handed in a row: a broadcast sends the very same array to each
/// recipient, and only the first call copies it. Loop thread only.
struct SharedLineCache {
    /// The array last copied (kept alive, so its storage cannot be freed and reused by another array), and its copy.
    private var source: [UInt8] = []
    private var shared: SharedLine?

    /// The shared copy of `line`: the previous one when `line` is the same array (same storage), else a new copy.
    mutating func share(_ line: [UInt8]) -> SharedLine {
        if let shared, line.count == source.count, let here = Self.storage(of: line), here == Self.storage(of: source) {
            return shared
        }
        let made = SharedLine.copying(line)
        source = line
        shared = made
        return made
    }

    /// Where the array's bytes live; nil for an empty array (never treated as the same line).
    private static func storage(of line: [UInt8]) -> UnsafeRawPointer? {
        line.withUnsafeBytes { $0.count == 0 ? nil : $0.baseAddress }
    }
}
