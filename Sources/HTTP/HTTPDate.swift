import Wire

/// The `Date` header's IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7), computed
/// without Foundation.
public enum HTTPDate {
    static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The IMF-fixdate of whole unix seconds (UTC).
    public static func string(unixSeconds: Int64) -> String {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let seconds = Int(unixSeconds - days * 86_400)
        let (year, month, day) = CivilCalendar.date(fromDays: days)
        let weekday = weekdays[Int(((days % 7) + 7) % 7)]
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(weekday), \(two(Int(day))) \(months[Int(month) - 1]) \(year) "
            + "\(two(seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60)) GMT"
    }
}
