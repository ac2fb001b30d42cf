/// Dates on the wire: ISO 8601 in UTC with whole seconds, e.g. `2026-11-30T10:00:00Z`.
///
/// Computed by hand (civil-from-days) so Wire needs no Foundation and formats identically everywhere.
public enum ISODate {
    /// The UTC date-time of a unix time, seconds truncated toward the past; years 0001...9999.
    public static func string(unixSeconds: Double) -> String {
        let clamped = min(max(unixSeconds.isNaN ? 0 : unixSeconds, -62_135_596_800), 253_402_300_799)
        let seconds = Int64(clamped.rounded(.down))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        NumberFormat.appendDigits(UInt64(year), minimumCount: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        NumberFormat.appendDigits(UInt64(month), minimumCount: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        NumberFormat.appendDigits(UInt64(day), minimumCount: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        NumberFormat.appendDigits(UInt64(secondOfDay / 3600), minimumCount: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        NumberFormat.appendDigits(UInt64(secondOfDay / 60 % 60), minimumCount: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        NumberFormat.appendDigits(UInt64(secondOfDay % 60), minimumCount: 2, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The unix time of `YYYY-MM-DDTHH:MM:SSZ`, or nil when the text is not exactly that form or not a real date.
    public static func unixSeconds(_ text: String) -> Double? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
              bytes[10] == UInt8(ascii: "T"), bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              bytes[19] == UInt8(ascii: "Z") else { return nil }
        func number(_ range: Range<Int>) -> Int64? {
            var value: Int64 = 0
            for index in range {
                let digit = bytes[index] &- 48
                guard digit < 10 else { return nil }
                value = value * 10 + Int64(digit)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              year >= 1, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        let days = CivilCalendar.days(fromYear: year, month, day)
        guard CivilCalendar.date(fromDays: days) == (year, month, day) else { return nil }  // e.g. 02-30
        return Double(days * 86_400 + hour * 3600 + minute * 60 + second)
    }
}
