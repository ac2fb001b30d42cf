import Foundation
import Reactor
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A map tile server for the browser tests, on 127.0.0.1: one PNG (a plain 256×256 tile) for every
/// `GET /{z}/{x}/{y}.png`, and a record of every path asked for with its `Referer`. Each request is answered
/// and its connection closed, on a thread of its own; ``stop()`` ends it.
public final class TileServer: Sendable {
    /// One request as the browser sent it.
    public struct Request: Sendable, Hashable {
        /// The tile's zoom, x and y (nil for a path that is not a tile).
        public let z: Int?, x: Int?, y: Int?
        /// The path.
        public let path: String
        /// The `Referer` header, nil when none was sent.
        public let referer: String?
    }

    private let listener: ListeningSocket
    private let state = Mutex<(requests: [Request], stopped: Bool)>(([], false))
    /// The port to point `--tiles` at.
    public var port: UInt16 { listener.port }
    /// `http://127.0.0.1:PORT/{z}/{x}/{y}.png`.
    public var template: String { "http://127.0.0.1:\(port)/{z}/{x}/{y}.png" }
    /// Every request so far.
    public var requests: [Request] { state.withLock { $0.requests } }

    /// Starts serving.
    public init() throws {
        listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let thread = Thread { [self] in serve() }
        thread.name = "TileServer"
        thread.start()
    }

    /// Stops serving (the thread ends within its poll interval).
    public func stop() {
        state.withLock { $0.stopped = true }
    }

    /// The tile at `zoom` that holds a place (the slippy-map scheme every tile server uses).
    public static func tile(latitude: Double, longitude: Double, zoom: Int) -> (x: Int, y: Int) {
        let n = Double(1 << zoom)
        let x = Int(((longitude + 180) / 360 * n).rounded(.down))
        let radians = latitude * .pi / 180
        let y = Int(((1 - log(tan(radians) + 1 / cos(radians)) / .pi) / 2 * n).rounded(.down))
        return (x, y)
    }

    private func serve() {
        while !state.withLock({ $0.stopped }) {
            var descriptor = pollfd(fd: listener.fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0, case .processed(let socket)? = try? listener.accept() else { continue }
            answer(socket)
        }
        listener.close()
    }

    private func answer(_ socket: StreamSocket) {
        defer { socket.close() }
        var head: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(5)
        while !head.contains(subsequence: [13, 10, 13, 10]), head.count < 16_384, Date() < deadline {
            var descriptor = pollfd(fd: socket.fileDescriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 200) >= 0 else { return }
            guard let result = try? buffer.withUnsafeMutableBytes({ try socket.read(into: $0) }) else { return }
            if case .processed(let count) = result {
                if count == 0 { break }
                head += buffer[..<count]
            }
        }
        let lines = String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n")
        let path = lines.first?.split(separator: " ").dropFirst().first.map(String.init) ?? ""
        let referer = lines.dropFirst().first { $0.lowercased().hasPrefix("referer:") }
            .map { String($0.dropFirst("referer:".count)).trimmingCharacters(in: .whitespaces) }
        let parts = path.split(separator: "/").map { String($0.split(separator: ".").first ?? "") }
        let numbers = parts.compactMap(Int.init)
        let isTile = parts.count == 3 && numbers.count == 3
        state.withLock {
            $0.requests.append(Request(z: isTile ? numbers[0] : nil, x: isTile ? numbers[1] : nil, y: isTile ? numbers[2] : nil,
                                       path: path, referer: referer))
        }
        let body = isTile ? Self.tile : Array("no such tile\n".utf8)
        let response = Array(("HTTP/1.1 \(isTile ? "200 OK" : "404 Not Found")\r\nContent-Type: \(isTile ? "image/png" : "text/plain")\r\n"
            + "Content-Length: \(body.count)\r\nAccess-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n").utf8) + body
        var offset = 0
        while offset < response.count, Date() < deadline {
            let written = response.withUnsafeBytes { bytes in
                try? socket.write(UnsafeRawBufferPointer(rebasing: bytes[offset...]))
            }
            switch written {
            case .processed(let count)?: offset += count
            case .wouldBlock?:
                var descriptor = pollfd(fd: socket.fileDescriptor, events: Int16(POLLOUT), revents: 0)
                _ = poll(&descriptor, 1, 200)
            case nil: return
            }
        }
    }

    /// A 256×256 PNG, one pale blue-grey: an 8-bit greyscale image whose rows are all one value.
    private static let tile: [UInt8] = {
        var raw: [UInt8] = []
        for _ in 0..<256 { raw.append(0); raw += [UInt8](repeating: 0xD8, count: 256) }
        func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
            let typed = Array(type.utf8) + data
            return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
        }
        let header = bigEndian(256) + bigEndian(256) + [8, 0, 0, 0, 0]
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + chunk("IHDR", header) + chunk("IDAT", stored(raw))
            + chunk("IEND", [])
    }()

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// zlib with stored (uncompressed) blocks: no compressor needed for a test image.
    private static func stored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let last: UInt8 = offset + count == data.count ? 1 : 0
            out += [last, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<(offset + count)]
            offset += count
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        return out + bigEndian(b << 16 | a)
    }

    private static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }
}

private extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard count >= subsequence.count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
    }
}
