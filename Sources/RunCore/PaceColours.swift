/// A 24-bit colour.
public struct RGBColour: Sendable, Hashable, Codable {
    /// Red, green and blue components.
    public var red: UInt8, green: UInt8, blue: UInt8

    /// Creates a colour.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    /// `#RRGGBB`, uppercase.
    public var hex: String {
        let digits = Array("0123456789ABCDEF")
        var text = "#"
        for component in [red, green, blue] {
            text.append(digits[Int(component >> 4)])
            text.append(digits[Int(component & 0x0F)])
        }
        return text
    }

    /// The colour a fraction `t` (clamped to 0...1) of the way from `self` to `other`, per channel.
    public func blended(with other: RGBColour, fraction t: Double) -> RGBColour {
        let t = t.isFinite ? min(max(t, 0), 1) : 0
        func mix(_ a: UInt8, _ b: UInt8) -> UInt8 {
            UInt8((Double(a) + (Double(b) - Double(a)) * t).rounded())
        }
        return RGBColour(red: mix(red, other.red), green: mix(green, other.green), blue: mix(blue, other.blue))
    }
}

/// Colours for a finished run's segments: red (slowest) through yellow (mean speed) to green (fastest).
public enum PaceColours {
    /// Slowest: #FF142C.
    public static let red = RGBColour(red: 0xFF, green: 0x14, blue: 0x2C)
    /// Mean speed: #FFD700.
    public static let yellow = RGBColour(red: 0xFF, green: 0xD7, blue: 0x00)
    /// Fastest: #00924E.
    public static let green = RGBColour(red: 0x00, green: 0x92, blue: 0x4E)

    /// Speed differences from the mean below this (m/s) are not stretched to the full red or green.
    public static let minimumSpread = 0.1

    /// One colour per segment (track.count - 1 of them; none for fewer than 2 fixes).
    ///
    /// A segment's speed is its geodesic length over its duration. The mean is the run's overall speed
    /// (total length / total duration), so it always lies between the slowest and fastest segment.
    /// Segments without a usable speed (zero or negative duration, non-finite values) are coloured as the
    /// mean, and a run at one steady speed is all yellow: the colour scale never spreads less than
    /// ``minimumSpread`` either side of the mean.
    public static func colours(for track: [Fix]) -> [RGBColour] {
        guard track.count >= 2 else { return [] }
        var speeds = [Double?](repeating: nil, count: track.count - 1)
        var totalDistance = 0.0, totalDuration = 0.0
        var slowest = Double.infinity, fastest = -Double.infinity
        for index in speeds.indices {
            let a = track[index], b = track[index + 1]
            let duration = b.timestamp - a.timestamp
            let length = Geodesy.distance(from: a.coordinate, to: b.coordinate)
            guard duration > 0, duration.isFinite, length.isFinite else { continue }
            let speed = length / duration
            speeds[index] = speed
            totalDistance += length
            totalDuration += duration
            slowest = min(slowest, speed)
            fastest = max(fastest, speed)
        }
        guard totalDuration > 0 else { return speeds.map { _ in yellow } }
        let mean = totalDistance / totalDuration
        // A floor under the spread keeps a steady run steady: speeds a hair apart stay near yellow
        // instead of being stretched to full red and green.
        let slowSpread = max(mean - slowest, minimumSpread), fastSpread = max(fastest - mean, minimumSpread)
        return speeds.map { speed in
            guard let speed else { return yellow }
            if speed < mean { return yellow.blended(with: red, fraction: (mean - speed) / slowSpread) }
            return yellow.blended(with: green, fraction: (speed - mean) / fastSpread)
        }
    }
}
