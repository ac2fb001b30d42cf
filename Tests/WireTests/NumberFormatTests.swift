import Testing
@testable import Wire

@Suite struct NumberFormatTests {
    static let fixed: [(Double, Int, String)] = [
        (0, 2, "0.00"),
        (1234.5678, 2, "1234.57"),
        (1234.564, 2, "1234.56"),
        (0.125, 2, "0.13"),          // exact tie: half away from zero
        (-0.125, 2, "-0.13"),
        (2.5, 0, "3"),
        (-2.5, 0, "-3"),
        (9.999, 2, "10.00"),         // carry into the integer part
        (-9.999, 2, "-10.00"),
        (99.96, 1, "100.0"),
        (0.05, 1, "0.1"),
        (-0.04, 1, "0.0"),           // rounds to zero: no minus sign
        (-0.0, 2, "0.00"),
        (-0.0, 0, "0"),
        (48.856614, 7, "48.8566140"),
        (-122.0840575, 7, "-122.0840575"),
        (179.99999999, 7, "180.0000000"),
        (1e-9, 7, "0.0000000"),
        (1_732_950_259.125, 3, "1732950259.125"),
        (123_456_789_012.5, 1, "123456789012.5"),
        (1e15, 2, "1000000000000000.00"),
        (1e300, 2, "1000000000000000.00"),    // clamped
        (-1e300, 1, "-1000000000000000.0"),
        (.infinity, 1, "1000000000000000.0"),
        (-.infinity, 0, "-1000000000000000"),
        (.nan, 2, "0.00"),
        (7, 0, "7"),
        (0.1 + 0.2, 9, "0.300000000"),
    ]

    @Test(arguments: fixed)
    func formatsFixedDecimals(value: Double, decimals: Int, expected: String) {
        #expect(NumberFormat.string(value, decimals: decimals) == expected)
        var bytes: [UInt8] = Array("x=".utf8)
        NumberFormat.append(value, decimals: decimals, to: &bytes)
        #expect(bytes == Array("x=\(expected)".utf8))
        // Whatever is written parses back with the strict grammar.
        #expect(NumberFormat.parseDecimal(expected) != nil)
    }

    @Test func formatsOptionalsAndIntegers() {
        #expect(NumberFormat.string(nil, decimals: 1) == "-")
        #expect(NumberFormat.string(Optional(3.25), decimals: 1) == "3.3")
        var bytes: [UInt8] = []
        NumberFormat.append(nil, decimals: 1, orDashTo: &bytes)
        NumberFormat.append(Int64(-42), to: &bytes)
        NumberFormat.append(Int64.min, to: &bytes)
        #expect(String(decoding: bytes, as: UTF8.self) == "--42-9223372036854775808")
    }

    @Test func fixedFormattingMatchesRoundedValueOverManyValues() {
        // Cross-check against integer arithmetic on values that are exact in binary (k / 1024).
        for k in stride(from: -200_000, through: 200_000, by: 7) {
            let value = Double(k) / 1024
            let text = NumberFormat.string(value, decimals: 1)
            let parsed = NumberFormat.parseDecimal(text)!
            #expect(abs(parsed - value) <= 0.05 + 1e-12, "\(value) -> \(text)")
        }
    }

    static let decimals: [(String, Double?)] = [
        ("0", 0), ("-0", -0.0), ("12", 12), ("12.5", 12.5), ("-12.5", -12.5), ("007.50", 7.5),
        ("48.8566140", 48.856614), ("1732950000.123", 1_732_950_000.123),
        ("0.1", 0.1), ("123456789012345678", 123_456_789_012_345_680),
        ("1.00000000000000000000000000000000000001", 1),
        ("", nil), ("-", nil), ("+1", nil), ("1e5", nil), ("1E5", nil), (".5", nil), ("5.", nil), ("1.2.3", nil),
        ("nan", nil), ("inf", nil), ("0x10", nil), (" 1", nil), ("1 ", nil), ("1,5", nil), ("--1", nil),
        (String(repeating: "9", count: 41), nil),
    ]

    @Test(arguments: decimals)
    func parsesStrictDecimals(text: String, expected: Double?) {
        let value = NumberFormat.parseDecimal(text)
        #expect(value == expected)
        if let value, let expected { #expect(value.sign == expected.sign) }
    }

    @Test func decimalParsingIsCorrectlyRounded() {
        // Every shortest representation must read back to the identical double (fast and slow paths).
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let value = Double.random(in: -180...180, using: &generator)
            let text = NumberFormat.plain(value)
            #expect(NumberFormat.parseDecimal(text) == value, "\(text)")
        }
        for text in ["48.8566141", "2.3522219", "0.3", "1732950000.7", "-33.4489", "151.2093"] {
            #expect(NumberFormat.parseDecimal(text) == Double(text))
        }
        // Unix times with microseconds (16-17 digits: the fast path up to 2^53 of digits, the library's beyond)
        // and the edge itself, against the standard library's correctly rounded reading.
        for _ in 0..<20_000 {
            let text = "\(UInt64.random(in: 1_000_000_000...4_000_000_000, using: &generator))."
                + String(UInt64.random(in: 0...999_999, using: &generator) + 1_000_000).dropFirst()
            #expect(NumberFormat.parseDecimal(text) == Double(text), "\(text)")
        }
        for text in ["9007199254740992", "9007199254740993", "9007199254.740993", "-9007199254740991.0",
                     "900719925474099.3", "9007199254740992.5", "0.9007199254740993", "1764640000.000001"] {
            #expect(NumberFormat.parseDecimal(text) == Double(text), "\(text)")
        }
    }

    static let plain: [(Double, String)] = [
        (0.00001, "0.00001"), (-1.5e-7, "-0.00000015"), (1e16, "10000000000000000"), (1.25e20, "125000000000000000000"),
        (48.856614, "48.856614"), (5, "5.0"), (-0.0, "-0.0"), (1_732_950_000.125, "1732950000.125"),
    ]

    @Test(arguments: plain)
    func plainNeverUsesExponents(value: Double, expected: String) {
        #expect(NumberFormat.plain(value) == expected)
        #expect(NumberFormat.parseDecimal(expected) == value)
    }

    @Test func parsesIntegers() {
        #expect(NumberFormat.parseInteger("0") == 0)
        #expect(NumberFormat.parseInteger("-17") == -17)
        #expect(NumberFormat.parseInteger("9223372036854775807") == .max)
        #expect(NumberFormat.parseInteger("9223372036854775808") == nil)
        #expect(NumberFormat.parseInteger("1.0") == nil)
        #expect(NumberFormat.parseInteger("") == nil)
        #expect(NumberFormat.parseInteger("-") == nil)
    }

    static let dates: [(Double, String)] = [
        (0, "1970-01-01T00:00:00Z"),
        (1_732_950_000, "2024-11-30T07:00:00Z"),
        (1_732_950_000.999, "2024-11-30T07:00:00Z"),
        (951_782_400, "2000-02-29T00:00:00Z"),
        (-1, "1969-12-31T23:59:59Z"),
        (1_798_761_599, "2026-12-31T23:59:59Z"),
        (4_107_542_400, "2100-03-01T00:00:00Z"),
    ]

    @Test(arguments: dates)
    func formatsAndParsesISODates(seconds: Double, expected: String) {
        #expect(ISODate.string(unixSeconds: seconds) == expected)
        #expect(ISODate.unixSeconds(expected) == seconds.rounded(.down))
    }

    @Test func refusesMalformedDates() {
        for text in ["2024-02-30T00:00:00Z", "2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-11-30T24:00:00Z",
                     "2024-11-30 07:00:00Z", "2024-11-30T07:00:00", "24-11-30T07:00:00Z", "no", ""] {
            #expect(ISODate.unixSeconds(text) == nil, "\(text)")
        }
        #expect(ISODate.unixSeconds("2024-02-29T12:00:00Z") != nil)
    }
}
