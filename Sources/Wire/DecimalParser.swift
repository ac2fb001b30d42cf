/// Strict decimal numbers read straight from bytes: `-?[0-9]+(\.[0-9]+)?`.
///
/// No exponents, no hex, no `nan`/`inf`, no `+`, no leading or trailing dot: the wire only ever
/// carries plain decimals, and refusing everything else keeps `1e999` or `0x1p3` from sneaking in.
enum DecimalParser {
    /// Longest accepted number text; longer ones cannot be meaningful coordinates, times or counts.
    static let maximumLength = 40

    /// Exact powers of ten up to 10^22, the range where `Double(m) / 10^k` is correctly rounded.
    @usableFromInline static let exactPowers: [Double] = {
        var powers: [Double] = []
        var value = 1.0
        for _ in 0...22 {
            powers.append(value)
            value *= 10
        }
        return powers
    }()

    /// The value of `bytes[range]`, or nil when it is not a strict decimal.
    static func double(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Double? {
        var index = range.lowerBound
        let end = range.upperBound
        guard end > index, end - index <= maximumLength else { return nil }
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        var mantissa: UInt64 = 0
        var significantDigits = 0
        var fractionDigits = 0
        var integerDigits = 0
        while index < end, bytes[index] &- 48 < 10 {
            accumulate(bytes[index], &mantissa, &significantDigits)
            integerDigits += 1
            index += 1
        }
        guard integerDigits > 0 else { return nil }
        if index < end {
            guard bytes[index] == UInt8(ascii: ".") else { return nil }
            index += 1
            while index < end, bytes[index] &- 48 < 10 {
                accumulate(bytes[index], &mantissa, &significantDigits)
                fractionDigits += 1
                index += 1
            }
            guard fractionDigits > 0, index == end else { return nil }
        }
        // Clinger's fast path: both operands exact (the digits, all held, at most 2^53; the power of ten at most
        // 10^22), so the one division rounds correctly. A unix time with microseconds has 16 digits: still here.
        if significantDigits <= 19 && mantissa <= 1 << 53 && fractionDigits <= 22 {
            let magnitude = Double(mantissa) / exactPowers[fractionDigits]
            return negative ? -magnitude : magnitude
        }
        // Rare long numbers: let the standard library do the correctly rounded conversion.
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }

    private static func accumulate(_ digit: UInt8, _ mantissa: inout UInt64, _ significant: inout Int) {
        if mantissa == 0 && digit == UInt8(ascii: "0") { return }
        significant += 1
        if significant <= 19 { mantissa = mantissa &* 10 &+ UInt64(digit &- 48) }
    }

    /// The value of `bytes[range]` as a non-negative or negative integer, or nil when malformed or out of range.
    static func integer(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int64? {
        var index = range.lowerBound
        let end = range.upperBound
        guard end > index else { return nil }
        let negative = bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < end else { return nil }
        var value: Int64 = 0
        while index < end {
            let digit = bytes[index] &- 48
            guard digit < 10 else { return nil }
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(digit))
            guard !overflow1, !overflow2 else { return nil }
            value = sum
            index += 1
        }
        return negative ? -value : value
    }

    /// `double` over a string's UTF-8.
    static func double(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { double($0, 0..<$0.count) }
    }

    /// `integer` over a string's UTF-8.
    static func integer(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { integer($0, 0..<$0.count) }
    }
}
