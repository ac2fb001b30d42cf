/// Parameter values in PostgreSQL's text format. Values travel as parameters (`$1`), never inside SQL; arrays
/// (for one multi-row `INSERT … SELECT FROM unnest($1, $2, …)`) are array literals with every element quoted.
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

    /// A `bigint` or NULL.
    static func integer(_ value: Int64?) -> String? { value.map { String($0) } }

    /// An array literal of numbers (already in text form) or NULLs: `{1.5,NULL,NaN}`.
    static func numberArray(_ values: [String?]) -> String {
        var text = "{"
        text.reserveCapacity(values.count * 20)
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            text += value ?? "NULL"
        }
        return text + "}"
    }

    /// An array literal of text or NULLs, each element double-quoted with `"` and `\` escaped.
    static func textArray(_ values: [String?]) -> String {
        var text = "{"
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            guard let value else {
                text += "NULL"
                continue
            }
            text += "\""
            for character in value {
                if character == "\"" || character == "\\" { text += "\\" }
                text.append(character)
            }
            text += "\""
        }
        return text + "}"
    }
}
