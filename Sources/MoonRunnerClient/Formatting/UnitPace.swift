import Foundation

/// Pace — time per distance — as a Foundation `Dimension`, so paces convert like any `Measurement`:
/// `Measurement(value: 300, unit: UnitPace.secondsPerKilometer).converted(to: .secondsPerMile)` is 482.8 s/mi.
///
/// The base unit is seconds per kilometre, the unit of every pace on the wire. Pace is the reciprocal of speed,
/// so it cannot be a `UnitSpeed` with a linear converter; `UnitPace.pace(from:)` and `speed(from:)` convert
/// between the two through `UnitConverterPace`.
public final class UnitPace: Dimension, @unchecked Sendable {  // Foundation's Dimension is, and asks subclasses to restate it.
    /// s/km, the base unit.
    public static let secondsPerKilometer = UnitPace(symbol: "s/km", converter: UnitConverterLinear(coefficient: 1))
    /// s/mi: a mile takes 1.609344 times as long as a kilometre at the same speed.
    public static let secondsPerMile = UnitPace(symbol: "s/mi",
                                                converter: UnitConverterLinear(coefficient: 1 / UnitPace.metresPerMile * 1000))
    /// min/km.
    public static let minutesPerKilometer = UnitPace(symbol: "min/km", converter: UnitConverterLinear(coefficient: 60))
    /// min/mi.
    public static let minutesPerMile = UnitPace(symbol: "min/mi",
                                                converter: UnitConverterLinear(coefficient: 60 * 1000 / UnitPace.metresPerMile))

    /// Metres in an international mile.
    public static let metresPerMile = 1609.344

    /// The base unit (s/km).
    public override class func baseUnit() -> UnitPace { secondsPerKilometer }

    /// The pace of a speed (nil for a speed of zero or less: no pace).
    public static func pace(from speed: Measurement<UnitSpeed>) -> Measurement<UnitPace>? {
        let metresPerSecond = speed.converted(to: .metersPerSecond).value
        guard metresPerSecond > 0, metresPerSecond.isFinite else { return nil }
        return Measurement(value: UnitConverterPace().baseUnitValue(fromValue: metresPerSecond), unit: secondsPerKilometer)
    }

    /// The speed of a pace (nil for a pace of zero or less).
    public static func speed(from pace: Measurement<UnitPace>) -> Measurement<UnitSpeed>? {
        let secondsPerKilometer = pace.converted(to: .secondsPerKilometer).value
        guard secondsPerKilometer > 0, secondsPerKilometer.isFinite else { return nil }
        return Measurement(value: UnitConverterPace().value(fromBaseUnitValue: secondsPerKilometer), unit: .metersPerSecond)
    }
}

/// The reciprocal converter between speed in m/s and pace in s/km: pace = 1000 / speed (its own inverse).
public final class UnitConverterPace: UnitConverter, @unchecked Sendable {  // Stateless; UnitConverter asks subclasses to restate it.
    /// Seconds per kilometre of a speed in metres per second.
    public override func baseUnitValue(fromValue value: Double) -> Double {
        1000 / value
    }

    /// Metres per second of a pace in seconds per kilometre.
    public override func value(fromBaseUnitValue baseUnitValue: Double) -> Double {
        1000 / baseUnitValue
    }
}
