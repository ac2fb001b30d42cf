/// `application/x-www-form-urlencoded` and query strings: `a=1&b=two+words&c=%C3%A9`.
public enum FormURLEncoding {
    /// The items of a query string or form body, decoded, in order; empty pairs (`a=1&&b=2`) are skipped.
    /// Throws 400 for a malformed `%` escape, an encoded NUL, or bytes that are not UTF-8.
    public static func items(_ bytes: some Collection<UInt8>) throws(HTTPError) -> [HTTPQueryItem] {
        var items: [HTTPQueryItem] = []
        for pair in Array(bytes).split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = pair.firstIndex(of: UInt8(ascii: "="))
            let name = pair[..<(equals ?? pair.endIndex)]
            let value = equals.map { pair[pair.index(after: $0)...] } ?? []
            guard let decodedName = PercentDecoding.decode(name, plusAsSpace: true),
                  let decodedValue = PercentDecoding.decode(value, plusAsSpace: true) else {
                throw HTTPError.malformed("bad percent-encoding or UTF-8 in a query or form")
            }
            items.append(HTTPQueryItem(decodedName, decodedValue))
        }
        return items
    }

    /// Encodes items as a form body or query (`*`, `-`, `.`, `_` and alphanumerics bare, space as `+`).
    public static func encode(_ items: [HTTPQueryItem]) -> String {
        items.map { PercentDecoding.encode($0.name) + "=" + PercentDecoding.encode($0.value) }.joined(separator: "&")
    }
}

/// Percent-decoding of paths and queries.
enum PercentDecoding {
    /// The decoded text, or nil for a `%` not followed by two hex digits, `%00`, or invalid UTF-8.
    static func decode(_ bytes: some Collection<UInt8>, plusAsSpace: Bool) -> String? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var iterator = bytes.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(ASCII.hexValue),
                      let low = iterator.next().flatMap(ASCII.hexValue) else { return nil }
                let decoded = high << 4 | low
                guard decoded != 0 else { return nil }
                output.append(decoded)
            case UInt8(ascii: "+") where plusAsSpace:
                output.append(ASCII.space)
            default:
                output.append(byte)
            }
        }
        return String(validating: output, as: UTF8.self)
    }

    static func encode(_ text: String) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"):
                output.append(byte)
            case ASCII.space:
                output.append(UInt8(ascii: "+"))
            default:
                output.append(contentsOf: [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
            }
        }
        return String(decoding: output, as: UTF8.self)
    }
}
