import CSQLite
import RunCore

/// The text of a `fix_chunks.fixes` column: a JSON array with one array per fix, in sequence order,
/// `[[latitude,longitude,accuracy,timestamp,received],[…,"rejection"],…]` — the rejection only for a filtered
/// fix, NaN as `null`, infinities as `9e999` and `-9e999`. Plain JSON, so the stock `sqlite3` shell unpacks it
/// with `json_each` (the `fixes` view does).
///
/// A fix with an altitude has it seventh, after the rejection or a `null` in its place:
/// `[…,received,null,altitude]` or `[…,"rejection",altitude]`. Chunks written before altitudes were kept have
/// no seventh element and read back without altitude; a fix without altitude is written as before.
///
/// `timestamp` and `received` are offsets from the row's `base_time` (whole Unix seconds): the fix's time is
/// `base_time + offset`, added in double precision. Each offset is the shortest decimal for which that sum gives
/// back the very double stored, so a receive clock to the sub-microsecond takes 9 or 10 characters instead of
/// 18. A time no offset can give (a phone's nonsense far from the clock) is written whole, as a one-element
/// array `[time]`.
///
/// Numbers are written so that a correct decimal parser gives back the very same double: a value that is exactly
/// `m / 10^k` for an integer `m` below 2^53 (what a phone's decimal text parses to) is written as those decimal
/// digits, anything else in Swift's shortest round-trip form. The decoder parses both without loss.
enum FixChunkCoding {
    /// The most text one row holds, for a database with pages of `pageSize` bytes: what fits in a B-tree cell
    /// of the `WITHOUT ROWID` table without spilling to an overflow page (SQLite's maxLocal for index pages,
    /// `(usable - 12) * 64 / 255 - 23`, less room for the key and the record header). About 960 bytes (some
    /// 20-25 fixes) with 4 KB pages.
    static func textLimit(pageSize: Int) -> Int {
        max(256, (pageSize - 12) * 64 / 255 - 23 - 40)
    }

    /// The base time of a chunk that starts with this fix: its receive time in whole seconds (the server's
    /// clock, always sensible), else its own timestamp, else 0.
    static func baseTime(for fix: StoredFix) -> Int64 {
        for time in [fix.received, fix.fix.timestamp] where time.isFinite && time.magnitude < 1e15 {
            return Int64(time.rounded(.down))
        }
        return 0
    }

    /// The fields of one fix as the chunk stores them.
    struct Fields: Equatable {
        var latitude: Double
        var longitude: Double
        var accuracy: Double
        var timestamp: Double
        var received: Double
        /// The rejection's text (`FixRejection.rawValue`), nil when accepted.
        var rejection: String?
        /// Metres, nil when the device reported none.
        var altitude: Double?

        init(_ stored: StoredFix) {
            latitude = stored.fix.latitude
            longitude = stored.fix.longitude
            accuracy = stored.fix.accuracy
            timestamp = stored.fix.timestamp
            received = stored.received
            rejection = stored.rejection?.rawValue
            altitude = stored.fix.altitude
        }

        init(latitude: Double, longitude: Double, accuracy: Double, timestamp: Double, received: Double,
             rejection: String?, altitude: Double? = nil) {
            self.altitude = altitude
            self.latitude = latitude
            self.longitude = longitude
            self.accuracy = accuracy
            self.timestamp = timestamp
            self.received = received
            self.rejection = rejection
        }

        static func == (left: Fields, right: Fields) -> Bool {
            func same(_ a: Double, _ b: Double) -> Bool { a.bitPattern == b.bitPattern || a.isNaN && b.isNaN }
            return same(left.latitude, right.latitude) && same(left.longitude, right.longitude)
                && same(left.accuracy, right.accuracy) && same(left.timestamp, right.timestamp)
                && same(left.received, right.received) && left.rejection == right.rejection
                && (left.altitude == nil) == (right.altitude == nil)
                && same(left.altitude ?? 0, right.altitude ?? 0)
        }
    }

    // MARK: Encoding

    /// Appends one fix's array (no separator) to `text`, its times as offsets from `base`.
    static func append(_ fix: StoredFix, base: Int64, to text: ChunkText) {
        text.reserve(maximumFixLength)
        text.appendUnchecked(UInt8(ascii: "["))
        appendNumber(fix.fix.latitude, hint: &text.latitudeDecimals, to: text)
        text.appendUnchecked(UInt8(ascii: ","))
        appendNumber(fix.fix.longitude, hint: &text.longitudeDecimals, to: text)
        text.appendUnchecked(UInt8(ascii: ","))
        appendNumber(fix.fix.accuracy, to: text)
        text.appendUnchecked(UInt8(ascii: ","))
        appendTime(fix.fix.timestamp, base: base, hint: &text.timestampDecimals, to: text)
        text.appendUnchecked(UInt8(ascii: ","))
        appendTime(fix.received, base: base, hint: &text.receivedDecimals, to: text)
        if let rejection = fix.rejection {
            text.appendUnchecked(UInt8(ascii: ","))
            appendString(rejection.rawValue, to: text)
        }
        if let altitude = fix.fix.altitude { appendAltitude(altitude, rejected: fix.rejection != nil, to: text) }
        text.appendUnchecked(UInt8(ascii: "]"))
    }

    /// Appends one fix's array from its raw fields (the migration from the row-per-fix table uses this: it
    /// carries an unknown rejection text as it is).
    static func append(_ fields: Fields, base: Int64, to text: ChunkText) {
        text.reserve(maximumFixLength)
        text.appendUnchecked(UInt8(ascii: "["))
        appendNumber(fields.latitude, hint: &text.latitudeDecimals, to: text)
        text.appendUnchecked(UInt8(ascii: ","))
        appendNumber(fields.longitude, hint: &text.longitudeDecimals, to: text)
        text.appendUnchecked(UInt8(ascii: ","))
        appendNumber(fields.accuracy, to: text)
        text.appendUnchecked(UInt8(ascii: ","))
        appendTime(fields.timestamp, base: base, hint: &text.timestampDecimals, to: text)
        text.appendUnchecked(UInt8(ascii: ","))
        appendTime(fields.received, base: base, hint: &text.receivedDecimals, to: text)
        if let rejection = fields.rejection {
            text.appendUnchecked(UInt8(ascii: ","))
            appendString(rejection, to: text)
        }
        if let altitude = fields.altitude { appendAltitude(altitude, rejected: fields.rejection != nil, to: text) }
        text.appendUnchecked(UInt8(ascii: "]"))
    }

    /// Appends `,altitude` (after `,null` in the rejection's place when the fix was accepted).
    private static func appendAltitude(_ altitude: Double, rejected: Bool, to text: ChunkText) {
        text.reserve(32)
        if !rejected { text.appendUnchecked(",null") }
        text.appendUnchecked(UInt8(ascii: ","))
        appendNumber(altitude, to: text)
    }

    /// A whole chunk's text for these fixes.
    static func encode<Fixes: Collection<StoredFix>>(_ fixes: Fixes, base: Int64) -> [UInt8] {
        let text = ChunkText()
        text.append(UInt8(ascii: "["))
        var first = true
        for fix in fixes {
            if !first { text.append(UInt8(ascii: ",")) }
            first = false
            append(fix, base: base, to: text)
        }
        text.append(UInt8(ascii: "]"))
        return text.bytes
    }

    /// Room one fix's array may take without its rejection: five numbers of at most 26 characters (with the
    /// brackets of a whole time), brackets and commas; the rejection reserves its own.
    private static let maximumFixLength = 5 * 26 + 8

    /// 10^k for k in 0...22, each exact (5^22 < 2^53): a switch over literals, which compiles to a constant
    /// table (a `static let` array would be checked for lazy initialization at every use).
    @inline(__always)
    static func powerOfTen(_ k: Int) -> Double {
        switch k {
        case 0: 1
        case 1: 1e1
        case 2: 1e2
        case 3: 1e3
        case 4: 1e4
        case 5: 1e5
        case 6: 1e6
        case 7: 1e7
        case 8: 1e8
        case 9: 1e9
        case 10: 1e10
        case 11: 1e11
        case 12: 1e12
        case 13: 1e13
        case 14: 1e14
        case 15: 1e15
        case 16: 1e16
        case 17: 1e17
        case 18: 1e18
        case 19: 1e19
        case 20: 1e20
        case 21: 1e21
        default: 1e22
        }
    }

    /// 2^52 and 2^53: integers below 2^53 are exact doubles.
    private static let twoToThe52 = 4_503_599_627_370_496.0
    private static let exactIntegerLimit = 9_007_199_254_740_992.0

    /// `x` rounded to an integer (to nearest, ties to even), for 0 ≤ x: adding and taking away 2^52 leaves no
    /// fraction bits (and needs no libm call); from 2^52 up every double is an integer already.
    @inline(__always)
    private static func roundedMagnitude(_ x: Double) -> Double {
        x < twoToThe52 ? (x + twoToThe52) - twoToThe52 : x
    }

    /// Appends a JSON number (or `null`) that parses back to exactly `value`.
    static func appendNumber(_ value: Double, to text: ChunkText) {
        var noHint = -1
        appendNumber(value, hint: &noHint, to: text)
    }

    /// ``appendNumber(_:to:)`` trying first the decimals `hint` says the last such number needed (a phone writes
    /// all its latitudes with the same places), and leaving there what this one needed (-1: no short decimal;
    /// zero, NaN and the infinities leave it as it was). The text is the same as without the hint: k decimals
    /// are the fewest when k works and k - 1 does not (the decimals that work are all those from the fewest up
    /// to the last below 2^53).
    static func appendNumber(_ value: Double, hint: inout Int, to text: ChunkText) {
        text.reserve(26)
        guard value.isFinite else {
            if value.isNaN {
                text.appendUnchecked("null")
            } else {
                text.appendUnchecked(value < 0 ? "-9e999" : "9e999")
            }
            return
        }
        if value == 0 {
            text.appendUnchecked(value.sign == .minus ? "-0" : "0")
            return
        }
        // The fast exact form: the fewest decimals k with value == m / 10^k, m an integer below 2^53. Then
        // m / 10^k in IEEE arithmetic (both operands exact) and a correct parse of the digits round the same
        // rational the same way, so the text gives back `value`.
        // Once k decimals give the value back, so does every larger k (m grows tenfold, the rational stays),
        // so the fewest is found by bisection between 0 and the most decimals that keep m below 2^53 (a whole
        // number, as accuracies often are, is tried first).
        let magnitude = value.magnitude
        if hint > 0, hint <= 17, exactDecimal(magnitude, decimals: hint),
           !exactDecimal(magnitude, decimals: hint - 1) {
            let scaled = roundedMagnitude(magnitude * powerOfTen(hint))
            appendDecimal(UInt64(scaled), decimals: hint, negative: value < 0, to: text)
            return
        }
        if exactDecimal(magnitude, decimals: 0) {
            appendDecimal(UInt64(roundedMagnitude(magnitude)), decimals: 0, negative: value < 0, to: text)
            hint = 0
            return
        }
        var most = 17
        while most > 0, magnitude * powerOfTen(most) >= exactIntegerLimit { most -= 1 }
        if most > 0, exactDecimal(magnitude, decimals: most) {
            var low = 1  // below `low`: known not to work
            var high = most  // works
            while low < high {
                let middle = (low + high) / 2
                if exactDecimal(magnitude, decimals: middle) {
                    high = middle
                } else {
                    low = middle + 1
                }
            }
            let scaled = roundedMagnitude(magnitude * powerOfTen(high))
            appendDecimal(UInt64(scaled), decimals: high, negative: value < 0, to: text)
            hint = high
            return
        }
        hint = -1
        // Anything else (a value computed rather than parsed, or beyond 2^53): Swift's shortest round-trip
        // digits, which JSON reads as they are (`1e-07`, `1.7976931348623157e+308`).
        text.appendUnchecked(value.description)
    }

    /// True when `magnitude` is the double nearest to m / 10^decimals for the integer m nearest to
    /// magnitude × 10^decimals (below 2^53).
    @inline(__always)
    private static func exactDecimal(_ magnitude: Double, decimals: Int) -> Bool {
        let scaled = roundedMagnitude(magnitude * powerOfTen(decimals))
        return scaled < exactIntegerLimit && scaled / powerOfTen(decimals) == magnitude
    }

    /// Appends a time as the shortest decimal offset `d` with `Double(base) + d == time` (NaN and the
    /// infinities as themselves: `base + null` is NULL, `base + 9e999` infinite), or else as `[time]`.
    static func appendTime(_ time: Double, base: Int64, to text: ChunkText) {
        var noHint = -1
        appendTime(time, base: base, hint: &noHint, to: text)
    }

    /// ``appendTime(_:base:to:)`` trying first the decimals `hint` says the last such time's offset needed, and
    /// leaving there what this one needed (-1: none). The offset written always gives the time back; it is the
    /// shortest whenever fewer decimals never work once some do, as for every time a clock or a phone gives.
    static func appendTime(_ time: Double, base: Int64, hint: inout Int, to text: ChunkText) {
        guard time.isFinite else {
            appendNumber(time, to: text)
            return
        }
        text.reserve(28)
        let origin = Double(base)
        let difference = time - origin
        let magnitude = difference.magnitude
        let negative = difference < 0
        if hint > 0, hint <= 17, offsetWorks(magnitude, negative: negative, origin: origin, time: time, decimals: hint),
           !offsetWorks(magnitude, negative: negative, origin: origin, time: time, decimals: hint - 1) {
            appendOffset(magnitude, negative: negative, decimals: hint, to: text)
            return
        }
        hint = -1
        // Whether k decimals of the difference give the time back: almost always true from some k on, so
        // bisect (a whole second, as phones often stamp, is tried first), and count up only if that fails.
        if offsetWorks(magnitude, negative: negative, origin: origin, time: time, decimals: 0) {
            appendOffset(magnitude, negative: negative, decimals: 0, to: text)
            hint = 0
            return
        }
        var most = 17
        while most > 0, magnitude * powerOfTen(most) >= exactIntegerLimit { most -= 1 }
        if most > 0, offsetWorks(magnitude, negative: negative, origin: origin, time: time, decimals: most) {
            var low = 1
            var high = most
            while low < high {
                let middle = (low + high) / 2
                if offsetWorks(magnitude, negative: negative, origin: origin, time: time, decimals: middle) {
                    high = middle
                } else {
                    low = middle + 1
                }
            }
            appendOffset(magnitude, negative: negative, decimals: high, to: text)
            hint = high
            return
        }
        for k in 1..<max(most, 1) where offsetWorks(magnitude, negative: negative, origin: origin, time: time, decimals: k) {
            appendOffset(magnitude, negative: negative, decimals: k, to: text)
            hint = k
            return
        }
        // The difference in full, when adding it gives the time back; else the time itself.
        if (origin + difference).bitPattern == time.bitPattern {
            appendNumber(difference, to: text)
            return
        }
        text.appendUnchecked(UInt8(ascii: "["))
        appendNumber(time, to: text)
        text.appendUnchecked(UInt8(ascii: "]"))
    }

    /// True when the offset of `magnitude` (and sign) rounded to `decimals` decimals, added to `origin`, gives
    /// `time` back bit for bit. A correct parse of those digits gives exactly the quotient used here (both of
    /// its operands are exact).
    @inline(__always)
    private static func offsetWorks(_ magnitude: Double, negative: Bool, origin: Double, time: Double,
                                    decimals: Int) -> Bool {
        let scaled = roundedMagnitude(magnitude * powerOfTen(decimals))
        guard scaled < exactIntegerLimit else { return false }
        let offset = scaled / powerOfTen(decimals)
        return (origin + (negative ? -offset : offset)).bitPattern == time.bitPattern
    }

    /// Appends the offset `offsetWorks` accepted.
    @inline(__always)
    private static func appendOffset(_ magnitude: Double, negative: Bool, decimals: Int, to text: ChunkText) {
        let scaled = roundedMagnitude(magnitude * powerOfTen(decimals))
        if scaled == 0 {
            text.appendUnchecked(UInt8(ascii: "0"))
        } else {
            appendDecimal(UInt64(scaled), decimals: decimals, negative: negative, to: text)
        }
    }

    /// Appends `-`? then the digits of `mantissa` (below 2^53) with a decimal point `decimals` from the
    /// right (`0.005` for 5 with 3 decimals). Needs 25 bytes reserved.
    @inline(__always)
    private static func appendDecimal(_ mantissa: UInt64, decimals: Int, negative: Bool, to text: ChunkText) {
        if negative { text.appendUnchecked(UInt8(ascii: "-")) }
        var digits = 1
        var limit: UInt64 = 10
        while digits < 20, mantissa >= limit {
            digits += 1
            limit &*= 10
        }
        // With decimals, at least one digit before the point.
        let integerDigits = max(digits - decimals, 1)
        let length = decimals > 0 ? integerDigits + 1 + decimals : digits
        let start = text.count
        text.count += length
        let out = text.storage + start
        var rest = mantissa
        var position = length - 1
        for _ in 0..<decimals {
            out[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
            position -= 1
        }
        if decimals > 0 {
            out[position] = UInt8(ascii: ".")
            position -= 1
        }
        while position >= 0 {
            out[position] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
            position -= 1
        }
    }

    /// Appends a JSON string (the rejection reasons need no escapes; anything else is escaped).
    private static func appendString(_ string: String, to text: ChunkText) {
        text.reserve(string.utf8.count * 6 + 2)
        text.appendUnchecked(UInt8(ascii: "\""))
        let hex = Array("0123456789abcdef".utf8)
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                text.appendUnchecked(UInt8(ascii: "\\"))
                text.appendUnchecked(byte)
            case 0..<0x20:
                text.appendUnchecked("\\u00")
                text.appendUnchecked(hex[Int(byte >> 4)])
                text.appendUnchecked(hex[Int(byte & 15)])
            default:
                text.appendUnchecked(byte)
            }
        }
        text.appendUnchecked(UInt8(ascii: "\""))
    }

    // MARK: Decoding

    /// Decodes a chunk's text into `fixes`: `count` fixes of run `run`, with sequences from `firstSequence`.
    /// Throws SQLITE_CORRUPT when the text is not a chunk or holds another number of fixes.
    static func decode(_ text: UnsafeBufferPointer<UInt8>, run: Int64, firstSequence: Int64, count: Int,
                       base: Int64, into fixes: inout [StoredFix]) throws(StoreError) {
        var parser = Parser(text: text, run: run, firstSequence: firstSequence, base: base)
        var decoded = 0
        try parser.expect(UInt8(ascii: "["))
        if try parser.peek() == UInt8(ascii: "]") {
            parser.position += 1
        } else {
            while true {
                let fields = try parser.fix()
                let sequence = firstSequence &+ Int64(decoded)
                var rejection: FixRejection?
                if let reason = fields.rejection {
                    guard let known = FixRejection(rawValue: reason) else {
                        throw StoreError(.corrupt,
                                         "fix \(sequence) of run \(run): unknown rejection \(reason)")
                    }
                    rejection = known
                }
                fixes.append(StoredFix(runID: run, sequence: sequence,
                                       fix: Fix(latitude: fields.latitude, longitude: fields.longitude,
                                                accuracy: fields.accuracy, timestamp: fields.timestamp,
                                                altitude: fields.altitude),
                                       received: fields.received, rejection: rejection))
                decoded += 1
                let next = try parser.next()
                if next == UInt8(ascii: "]") { break }
                guard next == UInt8(ascii: ",") else { throw parser.corrupt("expected , or ] after a fix") }
            }
        }
        try parser.end()
        guard decoded == count else {
            throw parser.corrupt("holds \(decoded) fixes, its count says \(count)")
        }
    }

    /// Decodes a chunk's text into raw fields (tests use it).
    static func decodeFields(_ text: [UInt8], base: Int64) throws(StoreError) -> [Fields] {
        try text.withUnsafeBufferPointer { (buffer) throws(StoreError) -> [Fields] in
            var parser = Parser(text: buffer, run: 0, firstSequence: 0, base: base)
            var all: [Fields] = []
            try parser.expect(UInt8(ascii: "["))
            if try parser.peek() == UInt8(ascii: "]") {
                parser.position += 1
            } else {
                while true {
                    all.append(try parser.fix())
                    let next = try parser.next()
                    if next == UInt8(ascii: "]") { break }
                    guard next == UInt8(ascii: ",") else { throw parser.corrupt("expected , or ] after a fix") }
                }
            }
            try parser.end()
            return all
        }
    }

    /// Parses one number as ``appendNumber(_:to:)`` writes it (and any other JSON number, or `null`) into the
    /// exact double. Exposed for tests.
    static func parseNumber(_ text: String) -> Double? {
        var bytes = Array(text.utf8)
        bytes.append(UInt8(ascii: "]"))
        return bytes.withUnsafeBufferPointer { buffer in
            var parser = Parser(text: buffer, run: 0, firstSequence: 0, base: 0)
            guard let value = try? parser.number(), parser.position == buffer.count - 1 else { return nil }
            return value
        }
    }

    /// A strict reader of the chunk format (whitespace between tokens allowed, as JSON allows).
    private struct Parser {
        let text: UnsafeBufferPointer<UInt8>
        let run: Int64
        let firstSequence: Int64
        /// The row's base time, as a double (times are offsets from it).
        let origin: Double
        var position = 0

        init(text: UnsafeBufferPointer<UInt8>, run: Int64, firstSequence: Int64, base: Int64) {
            self.text = text
            self.run = run
            self.firstSequence = firstSequence
            self.origin = Double(base)
        }

        func corrupt(_ problem: String) -> StoreError {
            StoreError(.corrupt,
                       "fix chunk of run \(run) from sequence \(firstSequence): \(problem) (at byte \(position))")
        }

        mutating func skipSpace() {
            while position < text.count {
                switch text[position] {
                case 0x20, 0x09, 0x0A, 0x0D: position += 1
                default: return
                }
            }
        }

        mutating func peek() throws(StoreError) -> UInt8 {
            skipSpace()
            guard position < text.count else { throw corrupt("ends early") }
            return text[position]
        }

        mutating func next() throws(StoreError) -> UInt8 {
            let byte = try peek()
            position += 1
            return byte
        }

        mutating func expect(_ byte: UInt8) throws(StoreError) {
            guard try next() == byte else {
                throw corrupt("expected \(Character(Unicode.Scalar(byte)))")
            }
        }

        mutating func end() throws(StoreError) {
            skipSpace()
            guard position == text.count else { throw corrupt("text after the chunk") }
        }

        mutating func fix() throws(StoreError) -> Fields {
            try expect(UInt8(ascii: "["))
            let latitude = try number()
            try expect(UInt8(ascii: ","))
            let longitude = try number()
            try expect(UInt8(ascii: ","))
            let accuracy = try number()
            try expect(UInt8(ascii: ","))
            let timestamp = try time()
            try expect(UInt8(ascii: ","))
            let received = try time()
            var rejection: String?
            var altitude: Double?
            if try peek() == UInt8(ascii: ",") {
                position += 1
                if try peek() == UInt8(ascii: "n") {
                    try literalNull()  // a rejection of null: accepted
                } else {
                    rejection = try string()
                }
                if try peek() == UInt8(ascii: ",") {
                    position += 1
                    altitude = try number()
                }
            }
            try expect(UInt8(ascii: "]"))
            return Fields(latitude: latitude, longitude: longitude, accuracy: accuracy, timestamp: timestamp,
                          received: received, rejection: rejection, altitude: altitude)
        }

        /// An offset from the base time, or a whole time as `[time]`.
        mutating func time() throws(StoreError) -> Double {
            if try peek() == UInt8(ascii: "[") {
                position += 1
                let whole = try number()
                try expect(UInt8(ascii: "]"))
                return whole
            }
            return origin + (try number())
        }

        mutating func literalNull() throws(StoreError) {
            guard position + 4 <= text.count, text[position] == UInt8(ascii: "n"), text[position + 1] == UInt8(ascii: "u"),
                  text[position + 2] == UInt8(ascii: "l"), text[position + 3] == UInt8(ascii: "l") else {
                throw corrupt("expected a number or null")
            }
            position += 4
        }

        /// A JSON number or `null` (NaN).
        mutating func number() throws(StoreError) -> Double {
            if try peek() == UInt8(ascii: "n") {
                try literalNull()
                return .nan
            }
            let start = position
            var negative = false
            if text[position] == UInt8(ascii: "-") {
                negative = true
                position += 1
            }
            var mantissa: UInt64 = 0
            var digits = 0  // significant digits in `mantissa`
            var exactMantissa = true
            var decimalExponent = 0
            var sawDigit = false
            while position < text.count, case let byte = text[position], byte >= 0x30, byte <= 0x39 {
                sawDigit = true
                if digits < 19 {
                    mantissa = mantissa * 10 + UInt64(byte - 0x30)
                    if mantissa != 0 { digits += 1 }
                } else {
                    decimalExponent += 1
                    if byte != 0x30 { exactMantissa = false }
                }
                position += 1
            }
            if position < text.count, text[position] == UInt8(ascii: ".") {
                position += 1
                var sawFraction = false
                while position < text.count, case let byte = text[position], byte >= 0x30, byte <= 0x39 {
                    sawFraction = true
                    if digits < 19 {
                        mantissa = mantissa * 10 + UInt64(byte - 0x30)
                        if mantissa != 0 { digits += 1 }
                        decimalExponent -= 1
                    } else if byte != 0x30 {
                        exactMantissa = false
                    }
                    position += 1
                }
                guard sawFraction else { throw corrupt("a number ends in a decimal point") }
            }
            guard sawDigit else { throw corrupt("expected a number") }
            if position < text.count, text[position] == UInt8(ascii: "e") || text[position] == UInt8(ascii: "E") {
                position += 1
                var exponentNegative = false
                if position < text.count, text[position] == UInt8(ascii: "-") || text[position] == UInt8(ascii: "+") {
                    exponentNegative = text[position] == UInt8(ascii: "-")
                    position += 1
                }
                var exponent = 0
                var sawExponent = false
                while position < text.count, case let byte = text[position], byte >= 0x30, byte <= 0x39 {
                    sawExponent = true
                    if exponent < 100_000 { exponent = exponent * 10 + Int(byte - 0x30) }
                    position += 1
                }
                guard sawExponent else { throw corrupt("a number has an empty exponent") }
                decimalExponent += exponentNegative ? -exponent : exponent
            }
            // Exact fast path: an integer mantissa below 2^53 and a power of ten that is itself exact, so one
            // IEEE multiplication or division rounds the decimal value correctly.
            if exactMantissa, mantissa < (1 << 53), decimalExponent >= -22, decimalExponent <= 22 {
                let magnitude = decimalExponent < 0
                    ? Double(mantissa) / FixChunkCoding.powerOfTen(-decimalExponent)
                    : Double(mantissa) * FixChunkCoding.powerOfTen(decimalExponent)
                return negative ? -magnitude : magnitude
            }
            if mantissa == 0 && exactMantissa { return negative ? -0.0 : 0.0 }
            // Anything else: the C library's correctly rounded conversion (it turns 9e999 into infinity).
            let literal = String(decoding: UnsafeBufferPointer(rebasing: text[start..<position]), as: UTF8.self)
            guard let value = Double(literal) else { throw corrupt("bad number \(literal)") }
            return value
        }

        /// A JSON string (with its escapes).
        mutating func string() throws(StoreError) -> String {
            try expect(UInt8(ascii: "\""))
            var bytes: [UInt8] = []
            while true {
                guard position < text.count else { throw corrupt("a string ends early") }
                let byte = text[position]
                position += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: bytes, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard position < text.count else { throw corrupt("a string ends early") }
                    let escaped = text[position]
                    position += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escaped)
                    case UInt8(ascii: "n"): bytes.append(0x0A)
                    case UInt8(ascii: "t"): bytes.append(0x09)
                    case UInt8(ascii: "r"): bytes.append(0x0D)
                    case UInt8(ascii: "b"): bytes.append(0x08)
                    case UInt8(ascii: "f"): bytes.append(0x0C)
                    case UInt8(ascii: "u"):
                        guard position + 4 <= text.count,
                              let code = UInt32(String(decoding: UnsafeBufferPointer(rebasing: text[position..<position + 4]),
                                                       as: UTF8.self), radix: 16),
                              let scalar = Unicode.Scalar(code) else {
                            throw corrupt("a bad \\u escape")
                        }
                        position += 4
                        bytes.append(contentsOf: Array(String(Character(scalar)).utf8))
                    default:
                        throw corrupt("a bad escape")
                    }
                default:
                    bytes.append(byte)
                }
            }
        }
    }
}

/// A growable byte buffer for building chunk texts: the writer reserves room once per fix and then stores
/// bytes without checks, which `[UInt8].append` cannot do. Reused across rows by its owner.
final class ChunkText {
    private(set) var storage: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    /// Bytes written.
    var count = 0
    /// The decimals the last latitude and longitude written needed (see
    /// ``FixChunkCoding/appendNumber(_:hint:to:)``); -1 when unknown.
    var latitudeDecimals = -1
    var longitudeDecimals = -1
    /// The same for the offsets of the last fix's timestamp and receive time (see
    /// ``FixChunkCoding/appendTime(_:base:hint:to:)``).
    var timestampDecimals = -1
    var receivedDecimals = -1

    init(capacity: Int = 4096) {
        self.capacity = max(capacity, 64)
        storage = .allocate(capacity: self.capacity)
    }

    deinit { storage.deallocate() }

    /// The bytes written, as an array.
    var bytes: [UInt8] { Array(UnsafeBufferPointer(start: storage, count: count)) }

    /// The bytes written, for the duration of `body`.
    func withBytes<Result, Failure: Error>(_ body: (UnsafeBufferPointer<UInt8>) throws(Failure) -> Result) throws(Failure) -> Result {
        try body(UnsafeBufferPointer(start: storage, count: count))
    }

    func removeAll() { count = 0 }

    /// Makes room for `extra` more bytes.
    @inline(__always)
    func reserve(_ extra: Int) {
        if count + extra > capacity { grow(to: count + extra) }
    }

    private func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newStorage = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newStorage.update(from: storage, count: count)
        storage.deallocate()
        storage = newStorage
        capacity = newCapacity
    }

    /// Appends a byte (room must be reserved).
    @inline(__always)
    func appendUnchecked(_ byte: UInt8) {
        storage[count] = byte
        count += 1
    }

    /// Appends a string's UTF-8 (room must be reserved).
    func appendUnchecked(_ string: String) {
        var string = string
        string.withUTF8 { bytes in
            reserve(bytes.count)
            (storage + count).update(from: bytes.baseAddress!, count: bytes.count)
            count += bytes.count
        }
    }

    /// Appends a byte, making room.
    func append(_ byte: UInt8) {
        reserve(1)
        appendUnchecked(byte)
    }

    /// Appends bytes, making room.
    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (storage + count).update(from: base, count: bytes.count)
        count += bytes.count
    }
}
