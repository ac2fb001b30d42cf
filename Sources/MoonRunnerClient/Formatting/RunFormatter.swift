import Foundation
import Wire

/// Formats distances, durations, paces and dates for people, in kilometres or miles chosen from the locale.
///
/// Values go through Foundation's `Measurement` (`UnitLength`, `UnitPace`) for the unit conversions; the text
/// itself is written here rather than by `MeasurementFormatter`/`Measurement.FormatStyle`, which Linux
/// Foundation lacks, so the output is the same on Linux and Apple platforms: the locale contributes its
/// measurement system and its decimal separator only.
///
/// | Value | Metric (`de_DE`) | Imperial (`en_US`) |
/// |---|---|---|
/// | 5012.35 m | `5,01 km` | `3.11 mi` |
/// | 1622.4 s | `0:27:02` | `0:27:02` |
/// | 320.1 s/km | `5:20 /km` | `8:35 /mi` |
public struct RunFormatter: Sendable {
    /// Kilometres or miles.
    public enum DistanceUnit: String, Sendable, Hashable {
        /// Kilometres and min/km.
        case kilometres = "km"
        /// Miles and min/mi.
        case miles = "mi"

        /// The Foundation length unit.
        public var length: UnitLength { self == .kilometres ? .kilometers : .miles }
        /// The Foundation pace unit, per second.
        public var pace: UnitPace { self == .kilometres ? .secondsPerKilometer : .secondsPerMile }
    }

    /// The locale (decimal separator, and the unit unless given).
    public let locale: Locale
    /// Kilometres or miles.
    public let unit: DistanceUnit
    /// Time zone for dates.
    public let timeZone: TimeZone

    /// A formatter for `locale`: miles where the measurement system is US or UK (British road running is
    /// measured in miles), kilometres elsewhere — unless `unit` is given. The default locale is the user's
    /// (`userLocale`: from `LC_ALL`/`LC_MEASUREMENT`/`LANG`, which Linux's `Locale.current` ignores).
    public init(locale: Locale = RunFormatter.userLocale, unit: DistanceUnit? = nil, timeZone: TimeZone = .current) {
        self.locale = locale
        self.unit = unit ?? Self.unit(for: locale)
        self.timeZone = timeZone
    }

    /// The distance unit a locale uses for running.
    public static func unit(for locale: Locale) -> DistanceUnit {
        switch locale.measurementSystem {
        case .us, .uk: return .miles
        default: return .kilometres
        }
    }

    /// `5,01 km` / `3.11 mi`: metres in the formatter's unit with `decimals` decimals.
    public func distance(_ metres: Double, decimals: Int = 2) -> String {
        let value = Measurement(value: metres, unit: UnitLength.meters).converted(to: unit.length).value
        return "\(number(value, decimals: decimals)) \(unit.rawValue)"
    }

    /// The distance as a number in the formatter's unit (for arithmetic, e.g. progress bars).
    public func distanceValue(_ metres: Double) -> Double {
        Measurement(value: metres, unit: UnitLength.meters).converted(to: unit.length).value
    }

    /// `h:mm:ss`, e.g. `1:02:05`, `0:27:02`; whole seconds rounded half up; negative and non-finite as `0:00:00`.
    public func duration(_ seconds: Double) -> String {
        let total = seconds.isFinite && seconds > 0 ? Int((seconds + 0.5).rounded(.down)) : 0
        return "\(total / 3600):\(Self.twoDigits(total / 60 % 60)):\(Self.twoDigits(total % 60))"
    }

    /// `5:20 /km` / `8:35 /mi` from seconds per kilometre; `–:–` (with the unit) when there is no pace.
    public func pace(_ secondsPerKilometre: Double?) -> String {
        "\(paceValue(secondsPerKilometre)) /\(unit.rawValue)"
    }

    /// `5:20` / `8:35` (minutes:seconds per unit), without the unit; `–:–` without a pace.
    public func paceValue(_ secondsPerKilometre: Double?) -> String {
        guard let secondsPerKilometre, secondsPerKilometre.isFinite, secondsPerKilometre > 0 else { return "–:–" }
        let perUnit = Measurement(value: secondsPerKilometre, unit: UnitPace.secondsPerKilometer).converted(to: unit.pace).value
        let total = Int((perUnit + 0.5).rounded(.down))
        return "\(total / 60):\(Self.twoDigits(total % 60))"
    }

    /// The time zone dates are shown in, for a column heading: `UTC`, `CET`, or the zone's identifier.
    public var timeZoneLabel: String {
        if timeZone.secondsFromGMT() == 0 && ["GMT", "UTC", "Etc/UTC", "Etc/GMT"].contains(timeZone.identifier) {
            return "UTC"
        }
        return timeZone.abbreviation() ?? timeZone.identifier
    }

    /// `2024-11-30 08:00` in the formatter's time zone, from an ISO 8601 wire date (returned as is if unreadable).
    public func date(_ wireDate: String) -> String {
        guard let seconds = ISODate.unixSeconds(wireDate) else { return wireDate }
        return date(Date(timeIntervalSince1970: seconds))
    }

    /// `2024-11-30 08:00` in the formatter's time zone (a fixed, sortable form: locale date styles differ between
    /// Linux and Apple ICU versions).
    public func date(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return "\(parts.year ?? 0)-\(Self.twoDigits(parts.month ?? 0))-\(Self.twoDigits(parts.day ?? 0)) "
            + "\(Self.twoDigits(parts.hour ?? 0)):\(Self.twoDigits(parts.minute ?? 0))"
    }

    /// `value` with `decimals` decimals (rounded half away from zero) and the locale's decimal separator.
    public func number(_ value: Double, decimals: Int) -> String {
        let plain = NumberFormat.string(value, decimals: decimals)
        let separator = locale.decimalSeparator ?? "."
        return separator == "." ? plain : plain.replacingOccurrences(of: ".", with: separator)
    }

    private static func twoDigits(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
