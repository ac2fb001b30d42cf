/// Parameter values in PostgreSQL's text format. Values travel as parameters (`$1`), never inside SQL.
enum PostgresValue {
    /// A `double precision` that reads back bit for bit: Swift's shortest round-trip digits, and PostgreSQL's
    /// spellings of NaN and the infinities.
    static func double(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return value.description
    }

    /// A `double precision` or NULL.
    static func double(_ value: Double?) -> String? { value.map { double($0) } }
}

/// One-dimensional arrays in PostgreSQL's binary format (what `array_recv` reads): no text to parse on the
/// server, and doubles sent bit for bit. Layout: dimensions, a has-NULLs flag, the element type's OID, then
/// per dimension its length and lower bound (1), then each element as a 4-byte length (-1 for NULL) and its
/// bytes, all big-endian.
struct PostgresBinaryArray {
    /// Element types by their OIDs in `pg_type` (fixed since PostgreSQL's first releases).
    enum Element: UInt32 {
        case bigint = 20
        case text = 25
        case doublePrecision = 701
    }

    private(set) var bytes: [UInt8] = []
    private var countOffset = 0
    private var count: UInt32 = 0

    /// An empty array of `element`s with room for `capacity` of them.
    init(of element: Element, capacity: Int) {
        bytes.reserveCapacity(20 + capacity * 12)
        append(UInt32(1))  // dimensions
        append(UInt32(1))  // may hold NULLs (array_recv accepts the flag either way)
        append(element.rawValue)
        countOffset = bytes.count
        append(UInt32(0))  // the length, filled in as elements arrive
        append(UInt32(1))  // lower bound
    }

    /// Appends a `bigint`.
    mutating func append(_ value: Int64) {
        element(length: 8)
        append(UInt64(bitPattern: value))
    }

    /// Appends a `double precision` (NaN and infinities included), or NULL.
    mutating func append(_ value: Double?) {
        guard let value else { return null() }
        element(length: 8)
        append(value.bitPattern)
    }

    /// Appends a UTF-8 `text`, or NULL.
    mutating func append(_ value: String?) {
        guard let value else { return null() }
        let utf8 = Array(value.utf8)
        element(length: Int32(utf8.count))
        bytes += utf8
    }

    private mutating func null() {
        element(length: -1)
    }

    private mutating func element(length: Int32) {
        append(UInt32(bitPattern: length))
        count += 1
        withUnsafeBytes(of: count.bigEndian) { bytes.replaceSubrange(countOffset..<countOffset + 4, with: $0) }
    }

    private mutating func append<Integer: FixedWidthInteger>(_ value: Integer) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }
}
