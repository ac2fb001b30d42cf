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

/// Colours for a run's segments by pace, so the map shows where the runner was fast or slow rather than
/// GPS noise: each segment takes the speed over the stretch around it (at least ``stretchMetres`` and
/// ``stretchSeconds``), and the scale runs from red at the run's slow end (5th percentile speed) through
/// yellow at its median to green at its fast end (95th percentile). The web page applies the same rule.
public enum PaceColours {
    /// Slow: #FF142C.
    public static let red = RGBColour(red: 0xFF, green: 0x14, blue: 0x2C)
    /// Median: #FFD700.
    public static let yellow = RGBColour(red: 0xFF, green: 0xD7, blue: 0x00)
    /// Fast: #00924E.
    public static let green = RGBColour(red: 0x00, green: 0x92, blue: 0x4E)

    /// The stretch a segment's pace is measured over: this many metres around it… Default 100.
    public static let stretchMetres = 100.0
    /// …and at least this many seconds. Default 30.
    public static let stretchSeconds = 30.0
    /// Speed differences from the median below this share of it (or 0.1 m/s) are not stretched to the full
    /// red or green, so a steady run stays mostly yellow under GPS noise. Default 10%.
    public static let minimumSpread = 0.10

    /// One colour per segment (track.count - 1 of them; none for fewer than 2 fixes).
    public static func colours(for track: [Fix]) -> [RGBColour] {
        let (distances, times) = cumulative(track)
        return colours(distances: distances, times: times)
    }

    /// One colour per segment of a track given as the page gets it, `[lat, lon, dist, time]` points: the
    /// cumulative distance (metres) and time (seconds) at each point. `common.js`'s `paceColours` is this.
    public static func colours(distances: [Double], times: [Double]) -> [RGBColour] {
        guard distances.count >= 2 else { return [] }
        let speeds = smoothedSpeeds(distances: distances, times: times)
        let known = speeds.compactMap { $0 }.sorted()
        guard !known.isEmpty else { return speeds.map { _ in yellow } }  // no time at all: nothing to tell apart
        let slow = percentile(known, 0.05), median = percentile(known, 0.5), fast = percentile(known, 0.95)
        let floor = max(0.1, minimumSpread * median)
        let slowSpread = max(median - slow, floor), fastSpread = max(fast - median, floor)
        // Steps the eye can tell apart; equal neighbours then share one path in the SVG.
        func step(_ t: Double) -> Double { (min(max(t, 0), 1) * steps).rounded() / steps }
        return speeds.map { speed in
            guard let speed else { return red }  // no usable time around it: nothing to measure, drawn as slow
            if speed < median { return yellow.blended(with: red, fraction: step((median - speed) / slowSpread)) }
            return yellow.blended(with: green, fraction: step((speed - median) / fastSpread))
        }
    }

    /// Each segment's speed over the stretch around it (nil where the track has no usable time).
    public static func smoothedSpeeds(for track: [Fix]) -> [Double?] {
        guard track.count >= 2 else { return [] }
        let (distances, times) = cumulative(track)
        return smoothedSpeeds(distances: distances, times: times)
    }

    /// Cumulative distance and time at each fix from the first, what the page's points carry; a segment
    /// without usable time (not later than the one before, or not finite) adds nothing.
    static func cumulative(_ track: [Fix]) -> (distances: [Double], times: [Double]) {
        guard !track.isEmpty else { return ([], []) }
        var distance = [0.0], time = [0.0]
        distance.reserveCapacity(track.count)
        time.reserveCapacity(track.count)
        for index in 1..<track.count {
            let a = track[index - 1], b = track[index]
            let duration = b.timestamp - a.timestamp
            let length = Geodesy.distance(from: a.coordinate, to: b.coordinate)
            let usable = duration > 0 && duration.isFinite && length.isFinite
            distance.append(distance[index - 1] + (usable ? length : 0))
            time.append(time[index - 1] + (usable ? duration : 0))
        }
        return (distance, time)
    }

    /// Each segment's speed over the stretch around it, from the cumulative distance and time at each point
    /// (`common.js`'s `smoothedSpeeds`); nil where there is no time around it.
    public static func smoothedSpeeds(distances distance: [Double], times time: [Double]) -> [Double?] {
        let count = min(distance.count, time.count)
        guard count >= 2 else { return [] }
        guard time[count - 1] > time[0] else { return Array(repeating: nil, count: count - 1) }
        // Two pointers per side: the stretch's ends only move forward as the segment does.
        var low = 0, high = 0
        var speeds: [Double?] = []
        speeds.reserveCapacity(count - 1)
        for segment in 0..<(count - 1) {
            let middleDistance = (distance[segment] + distance[segment + 1]) / 2
            let middleTime = (time[segment] + time[segment + 1]) / 2
            while low < segment, distance[low + 1] <= middleDistance - stretchMetres / 2,
                  time[low + 1] <= middleTime - stretchSeconds / 2 { low += 1 }
            high = max(high, segment + 1)
            while high < count - 1, distance[high] < middleDistance + stretchMetres / 2
                    || time[high] < middleTime + stretchSeconds / 2 { high += 1 }
            let span = time[high] - time[low]
            speeds.append(span > 0 ? (distance[high] - distance[low]) / span : nil)
        }
        return speeds
    }

    /// Colour steps between the median and each end. Default 16.
    public static let steps = 16.0

    /// The `fraction` percentile of sorted values, interpolated between the nearest ranks.
    static func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
        let rank = fraction * Double(sorted.count - 1)
        let low = Int(rank.rounded(.down)), high = Int(rank.rounded(.up))
        return sorted[low] + (sorted[high] - sorted[low]) * (rank - Double(low))
    }
}
