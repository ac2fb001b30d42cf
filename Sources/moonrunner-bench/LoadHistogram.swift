#if canImport(Glibc)
import Glibc
#endif

/// Latencies in microseconds, kept in log-linear buckets (exact below 1,024 µs, then within 0.2 %),
/// so millions of samples cost a fixed ~60 KiB and percentiles need no sorting.
struct LatencyHistogram {
    /// Values below this are counted exactly.
    private static let linearLimit: Int64 = 1024
    /// Buckets per power of two above the linear range.
    private static let subBuckets: Int64 = 512
    private var counts = [Int](repeating: 0, count: 1024 + 512 * 44)
    /// How many samples were recorded.
    private(set) var count = 0
    /// The largest sample, exactly.
    private(set) var maximum: Int64 = 0
    private var sum: Double = 0

    /// Records one latency; negative values (clock steps) count as 0.
    mutating func record(_ microseconds: Int64) {
        let value = max(microseconds, 0)
        counts[Self.bucket(of: value)] += 1
        count += 1
        sum += Double(value)
        if value > maximum { maximum = value }
    }

    /// The mean in microseconds, 0 when empty.
    var mean: Double { count == 0 ? 0 : sum / Double(count) }

    /// The latency below which `fraction` of the samples fall (upper edge of its bucket, capped at the maximum).
    func percentile(_ fraction: Double) -> Int64 {
        guard count > 0 else { return 0 }
        let rank = max(1, Int((fraction * Double(count)).rounded(.up)))
        var seen = 0
        for (index, bucketCount) in counts.enumerated() where bucketCount > 0 {
            seen += bucketCount
            if seen >= rank { return min(Self.upperEdge(of: index), maximum) }
        }
        return maximum
    }

    private static func bucket(of value: Int64) -> Int {
        if value < linearLimit { return Int(value) }
        let magnitude = 63 - value.leadingZeroBitCount  // value in [2^magnitude, 2^(magnitude+1))
        let shift = magnitude - 9
        let index = linearLimit + Int64(shift - 1) * subBuckets + ((value >> Int64(shift)) - subBuckets)
        return Int(min(index, Int64(1024 + 512 * 44 - 1)))
    }

    private static func upperEdge(of index: Int) -> Int64 {
        if index < Int(linearLimit) { return Int64(index) }
        let offset = Int64(index) - linearLimit
        let shift = offset / subBuckets + 1
        return ((offset % subBuckets + subBuckets + 1) << shift) - 1
    }
}

/// Clocks used by the load benchmark.
enum LoadClock {
    /// Wall-clock Unix time in microseconds: what `ts=` carries, comparable across the two processes.
    @inline(__always) static func wallMicroseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000 + Int64(now.tv_nsec) / 1000
    }

    /// Monotonic seconds, for phase deadlines.
    static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Appends `micros` as `SECONDS.MICROS` (always six decimals), as a runner writes `ts`.
    static func appendTimestamp(_ micros: Int64, to buffer: inout [UInt8]) {
        appendDigits(micros / 1_000_000, minimumWidth: 1, to: &buffer)
        buffer.append(UInt8(ascii: "."))
        appendDigits(micros % 1_000_000, minimumWidth: 6, to: &buffer)
    }

    private static func appendDigits(_ value: Int64, minimumWidth: Int, to buffer: inout [UInt8]) {
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { raw in
            repeat {
                raw[count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            } while rest > 0 && count < 20
            while count < minimumWidth {
                raw[count] = UInt8(ascii: "0")
                count += 1
            }
            for index in stride(from: count - 1, through: 0, by: -1) { buffer.append(raw[index]) }
        }
    }

    /// Reads the `ts=` value of an event line as microseconds (nil when absent or not `DIGITS[.DIGITS]`).
    /// Hand-rolled because it runs once per received event: a full parse is sampled separately.
    static func timestampMicros(in line: UnsafeBufferPointer<UInt8>) -> Int64? {
        let count = line.count
        var index = 0
        while index + 3 < count {
            if line[index] == UInt8(ascii: " ") && line[index + 1] == UInt8(ascii: "t")
                && line[index + 2] == UInt8(ascii: "s") && line[index + 3] == UInt8(ascii: "=") {
                return parseMicros(line, from: index + 4)
            }
            index += 1
        }
        return nil
    }

    /// The `"ts":"…"` of a JSON event (the web stream's form of `ts=`), in microseconds.
    static func jsonTimestampMicros(in line: UnsafeBufferPointer<UInt8>) -> Int64? {
        let pattern = Array(#""ts":""#.utf8)
        var index = 0
        while index + pattern.count <= line.count {
            if line[index] == pattern[0] && Array(line[index..<(index + pattern.count)]) == pattern {
                return parseMicros(line, from: index + pattern.count)
            }
            index += 1
        }
        return nil
    }

    private static func parseMicros(_ line: UnsafeBufferPointer<UInt8>, from start: Int) -> Int64? {
        var index = start
        var seconds: Int64 = 0
        var digits = 0
        while index < line.count, line[index] &- UInt8(ascii: "0") < 10 {
            seconds = seconds * 10 + Int64(line[index] &- UInt8(ascii: "0"))
            index += 1
            digits += 1
        }
        guard digits > 0 else { return nil }
        var micros: Int64 = 0
        var scale: Int64 = 100_000
        if index < line.count, line[index] == UInt8(ascii: ".") {
            index += 1
            while index < line.count, line[index] &- UInt8(ascii: "0") < 10 {
                micros += Int64(line[index] &- UInt8(ascii: "0")) * scale
                scale /= 10
                index += 1
            }
        }
        return seconds * 1_000_000 + micros
    }
}
