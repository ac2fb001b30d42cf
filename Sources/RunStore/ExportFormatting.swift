import Foundation

/// Text formatting shared by the exports: strict XML escaping, plain decimals, ISO 8601 times.
enum ExportFormatting {
    /// `<name>value</name>` with the value exact (see ``exact(_:)``), or nothing when there is no finite value
    /// (a fix without altitude).
    static func element(_ name: String, _ value: Double?) -> String {
        guard let value, value.isFinite else { return "" }
        return "<\(name)>\(exact(value))</\(name)>"
    }

    /// Text safe inside XML elements and attribute values: the five special characters become entities and
    /// characters XML 1.0 forbids (most control characters) are dropped.
    static func xmlEscaped(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            case "\t", "\n", "\r": escaped.unicodeScalars.append(scalar)
            default:
                let value = scalar.value
                let allowed = (0x20...0xD7FF).contains(value) || (0xE000...0xFFFD).contains(value)
                    || (0x10000...0x10FFFF).contains(value)
                if allowed { escaped.unicodeScalars.append(scalar) }
            }
        }
        return escaped
    }

    /// A plain decimal with up to `places` fraction digits and no exponent (XML Schema `xsd:decimal`).
    static func decimal(_ value: Double, places: Int = 9) -> String {
        guard value.isFinite else { return "0" }
        var text = String(format: "%.\(places)f", value)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text == "-0" ? "0" : text
    }

    /// A plain decimal that reads back as the same `Double` (the shortest such
    /// text), so that an export imported again starts from exactly the same fixes.
    static func exact(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        let shortest = "\(value)"
        // Swift writes very small magnitudes with an exponent, which xsd:decimal does not allow.
        guard shortest.contains("e") else { return shortest.hasSuffix(".0") ? String(shortest.dropLast(2)) : shortest }
        return decimal(value, places: 17)
    }

    /// ISO 8601 in UTC, with milliseconds only when the time has a fraction: `2021-05-12T16:55:16.25Z`.
    static func isoTime(_ unixTime: Double) -> String {
        guard unixTime.isFinite else { return "1970-01-01T00:00:00Z" }
        var milliseconds = Int64((unixTime * 1000).rounded())
        var seconds = milliseconds / 1000
        milliseconds %= 1000
        if milliseconds < 0 {
            milliseconds += 1000
            seconds -= 1
        }
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var text = String(format: "%04d-%02d-%02dT%02d:%02d:%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                          Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
        if milliseconds != 0 {
            var fraction = String(format: ".%03d", Int(milliseconds))
            while fraction.hasSuffix("0") { fraction.removeLast() }
            text += fraction
        }
        return text + "Z"
    }

    /// `h:mm:ss`, hours always shown (`0:27:02`), as the client's formatter writes durations.
    static func duration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds >= 0 else { return "–" }
        let total = Int(seconds.rounded())
        return String(format: "%d:%02d:%02d", total / 3600, total / 60 % 60, total % 60)
    }

    /// A run in one line for descriptions: "9.65 km in 1:02:03 (moving 0:58:10)".
    static func runLine(_ record: RunRecord) -> String {
        String(format: "%.2f km", record.distance / 1000) + " in \(duration(record.elapsed)) "
            + "(moving \(duration(record.movingTime)))"
    }
}
