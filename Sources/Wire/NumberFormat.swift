/// The one place numbers and dates are written and read on the wire.
///
/// Values are plain decimals with a fixed number of places per quantity (see protocol.md, "Values").
/// Formatting is hand-rolled into byte buffers because the server writes several numbers per
/// `pace:` line at a six-figure line rate; String interpolation of `Double` would dominate.
public enum NumberFormat {
    /// Places for distances in metres.
    public static let distanceDecimals = 2
    /// Places for durations and elapsed times in seconds.
    public static let timeDecimals = 1
    /// Places for paces in seconds per kilometre.
    public static let paceDecimals = 1
    /// Places for latitudes and longitudes in degrees (about 1 cm).
    public static let coordinateDecimals = 7
    /// Places for elevation gain and loss in metres (GPS altitude is good to metres, not centimetres).
    public static let elevationDecimals = 1
    /// Places for speeds in metres per second.
    public static let speedDecimals = 3
    /// Places for computed unix timestamps (milliseconds).
    public static let timestampDecimals = 3
    /// Magnitudes beyond this are written clamped; nothing real comes close.
    public static let maximumMagnitude = 1e15

    /// Most bytes `write(_:decimals:to:)` produces: sign, 16 integer digits, point, 9 decimals.
    static let maximumWrittenLength = 27

    /// Appends `value` with exactly `decimals` places (0...9), rounding half away from zero.
    ///
    /// NaN is written as 0, infinities and huge values as ±`maximumMagnitude`, and a value that rounds
    /// to zero never gets a minus sign, so every output parses back with the strict decimal grammar.
    public static func append(_ value: Double, decimals: Int, to buffer: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maximumWrittenLength) { scratch in
            let count = write(value, decimals: decimals, to: scratch.baseAddress!)
            buffer.append(contentsOf: UnsafeBufferPointer(start: scratch.baseAddress, count: count))
        }
    }

    /// Writes `value` as `append(_:decimals:to:)` does into raw memory with room for
    /// `maximumWrittenLength` bytes; returns the number of bytes written.
    @inline(__always)
    static func write(_ value: Double, decimals: Int, to output: UnsafeMutablePointer<UInt8>) -> Int {
        precondition((0...9).contains(decimals), "decimals must be 0...9")
        var value = value.isNaN ? 0 : value
        value = min(max(value, -maximumMagnitude), maximumMagnitude)
        let magnitude = value.magnitude
        // Truncation and rounding through integer conversion (one instruction each) rather than libm's trunc and
        // round (calls: this baseline has no SSE4.1): exact here, as every magnitude is below 2^53.
        var integer = UInt64(magnitude)
        var scale: UInt64 = 1
        for _ in 0..<decimals { scale &*= 10 }
        let scaledFraction = (magnitude - Double(integer)) * Double(scale)
        var fraction = UInt64(scaledFraction)
        if scaledFraction - Double(fraction) >= 0.5 { fraction += 1 }  // half away from zero, as .rounded()
        if fraction >= scale {
            fraction -= scale
            integer += 1
        }
        var count = 0
        if value < 0 && (integer != 0 || fraction != 0) {
            output[0] = UInt8(ascii: "-")
            count = 1
        }
        // Integer digits: count them, then fill from the right.
        var digits = 1
        var probe = integer / 10
        while probe > 0 {
            digits += 1
            probe /= 10
        }
        var index = count + digits - 1
        repeat {
            output[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: integer % 10)
            integer /= 10
            index -= 1
        } while integer > 0
        count += digits
        if decimals > 0 {
            output[count] = UInt8(ascii: ".")
            var index = count + decimals
            for _ in 0..<decimals {
                output[index] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: fraction % 10)
                fraction /= 10
                index -= 1
            }
            count += decimals + 1
        }
        return count
    }

    /// Appends `value` like `append(_:decimals:to:)`, or `-` when it is nil.
    public static func append(_ value: Double?, decimals: Int, orDashTo buffer: inout [UInt8]) {
        if let value {
            append(value, decimals: decimals, to: &buffer)
        } else {
            buffer.append(UInt8(ascii: "-"))
        }
    }

    /// Appends a signed integer in decimal.
    public static func append(_ value: Int64, to buffer: inout [UInt8]) {
        if value < 0 { buffer.append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude, minimumCount: 1, to: &buffer)
    }

    /// Writes the decimal digits of `value`, left-padded with zeros to `minimumCount` (at most 20),
    /// through a stack buffer so no temporary array is made.
    static func appendDigits(_ value: UInt64, minimumCount: Int, to buffer: inout [UInt8]) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = 20
            var remaining = value
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: remaining % 10)
                remaining /= 10
            } while remaining > 0
            while 20 - start < minimumCount && start > 0 {
                start -= 1
                digits[start] = UInt8(ascii: "0")
            }
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    /// `value` with exactly `decimals` places, as a string.
    public static func string(_ value: Double, decimals: Int) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(value, decimals: decimals, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `value` with exactly `decimals` places, or `-` when nil.
    public static func string(_ value: Double?, decimals: Int) -> String {
        guard let value else { return "-" }
        return string(value, decimals: decimals)
    }

    /// The shortest decimal that reads back as exactly `value`, never in exponent form (e.g. `0.00001`).
    ///
    /// Used where a number must survive a round trip unchanged (the coordinates of `loc:`).
    public static func plain(_ value: Double) -> String {
        let text = value.description
        guard value.isFinite, let exponentIndex = text.firstIndex(of: "e") else { return text }
        var mantissa = text[..<exponentIndex]
        let exponent = Int(text[text.index(after: exponentIndex)...]) ?? 0
        let negative = mantissa.hasPrefix("-")
        if negative { mantissa = mantissa.dropFirst() }
        let pointOffset = mantissa.firstIndex(of: ".").map { mantissa.distance(from: mantissa.startIndex, to: $0) }
            ?? mantissa.count
        let digits = Array(mantissa.filter { $0 != "." })
        let newPoint = pointOffset + exponent
        var result = negative ? "-" : ""
        if newPoint <= 0 {
            result += "0." + String(repeating: "0", count: -newPoint) + String(digits)
        } else if newPoint >= digits.count {
            // No ".0" here: a 40-digit field (the most the parser reads) must not grow past 40 when written back.
            result += String(digits) + String(repeating: "0", count: newPoint - digits.count)
        } else {
            result += String(digits[..<newPoint]) + "." + String(digits[newPoint...])
        }
        return result
    }

    /// Reads a strict decimal (`-?[0-9]+(\.[0-9]+)?`, at most 40 characters); nil for anything else.
    public static func parseDecimal(_ text: String) -> Double? {
        DecimalParser.double(text)
    }

    /// Reads a strict integer (`-?[0-9]+`) that fits in 64 bits; nil for anything else.
    public static func parseInteger(_ text: String) -> Int64? {
        DecimalParser.integer(text)
    }
}
