import Foundation
import RunCore
import Wire

/// One point of a simulated run: where, how accurate, and when (seconds after the start).
struct TrackSample: Sendable, Hashable {
    var latitude: Double
    var longitude: Double
    var accuracy: Double
    var time: Double
}

/// The routes `simulate` and `demo` know without a file: laps of a loop through real streets and parks,
/// cut at the route's distance. (The same routes are in tools/routes/*.gpx for people; `simulate --route R
/// --write-gpx FILE` regenerates them.)
enum BuiltInRoute: String, CaseIterable, Sendable {
    /// One lap of Regent's Park, London (4.5 km).
    case park
    /// 10 km of laps past the Tuileries, the Seine and the Invalides, Paris.
    case tenK = "10k"
    /// A marathon of laps of the Tiergarten, Berlin.
    case marathon

    /// Corners of the loop, degrees (first = last).
    var waypoints: [(Double, Double)] {
        switch self {
        case .park:
            return [(51.5240, -0.1530), (51.5262, -0.1468), (51.5308, -0.1452), (51.5350, -0.1475), (51.5374, -0.1540),
                    (51.5365, -0.1620), (51.5320, -0.1660), (51.5268, -0.1630), (51.5240, -0.1530)]
        case .tenK:
            return [(48.8635, 2.3275), (48.8656, 2.3212), (48.8625, 2.3128), (48.8566, 2.3126), (48.8560, 2.3220),
                    (48.8584, 2.3300), (48.8610, 2.3355), (48.8635, 2.3275)]
        case .marathon:
            return [(52.5145, 13.3501), (52.5163, 13.3777), (52.5096, 13.3760), (52.5094, 13.3600), (52.5115, 13.3420),
                    (52.5145, 13.3501)]
        }
    }

    /// The route's length in metres (nil: one lap, whatever it measures).
    var distance: Double? {
        switch self {
        case .park: return nil
        case .tenK: return 10_000
        case .marathon: return 42_195
        }
    }

    /// How much longer than its name the route is drawn: the smoother cuts the loop's corners by about 0.25%,
    /// so a route drawn at its name would measure short of it (the marathon would never win Interstellar
    /// Space). simulate's default noise adds about 1% more (SimulatedNoiseTests). RouteLengthTests checks it.
    static let overrun = 1.006

    /// The route as a polyline: laps of the loop cut just past the distance (see ``overrun``).
    var path: [Coordinate] {
        let loop = waypoints.map { Coordinate(latitude: $0.0, longitude: $0.1) }
        guard let named = distance else { return loop }
        let distance = named * Self.overrun
        let lap = Self.length(of: loop)
        var path = [loop[0]]
        var covered = 0.0
        while covered < distance {
            for index in 1..<loop.count {
                let step = Geodesy.distance(from: loop[index - 1], to: loop[index])
                if covered + step >= distance {
                    path.append(Self.interpolate(loop[index - 1], loop[index], (distance - covered) / step))
                    return path
                }
                covered += step
                path.append(loop[index])
            }
            if lap <= 0 { break }
        }
        return path
    }

    /// A polyline's length in metres.
    static func length(of path: [Coordinate]) -> Double {
        zip(path, path.dropFirst()).reduce(0) { $0 + Geodesy.distance(from: $1.0, to: $1.1) }
    }

    static func interpolate(_ a: Coordinate, _ b: Coordinate, _ fraction: Double) -> Coordinate {
        Coordinate(latitude: a.latitude + (b.latitude - a.latitude) * fraction,
                   longitude: a.longitude + (b.longitude - a.longitude) * fraction)
    }

    /// One sample per second along `path` at `speed` m/s (exact positions, accuracy `accuracy`), ending at the
    /// path's end.
    static func samples(along path: [Coordinate], speed: Double, accuracy: Double = 4) -> [TrackSample] {
        guard path.count > 1, speed > 0 else {
            return path.prefix(1).map { TrackSample(latitude: $0.latitude, longitude: $0.longitude, accuracy: accuracy, time: 0) }
        }
        var samples: [TrackSample] = []
        var segment = 1
        var segmentStart = 0.0  // distance at path[segment - 1]
        var segmentLength = Geodesy.distance(from: path[0], to: path[1])
        let total = length(of: path)
        var second = 0
        while true {
            let along = min(Double(second) * speed, total)
            while along > segmentStart + segmentLength, segment < path.count - 1 {
                segmentStart += segmentLength
                segment += 1
                segmentLength = Geodesy.distance(from: path[segment - 1], to: path[segment])
            }
            let fraction = segmentLength > 0 ? (along - segmentStart) / segmentLength : 0
            let point = interpolate(path[segment - 1], path[segment], min(max(fraction, 0), 1))
            samples.append(TrackSample(latitude: point.latitude, longitude: point.longitude, accuracy: accuracy,
                                       time: Double(second)))
            if along >= total { return samples }
            second += 1
        }
    }
}

/// Adds correlated GPS error (RunCore's AR(1) model, drifting over ~10 s) to samples, with a reported accuracy
/// of about 1.5 σ that varies a little, like a receiver's.
func addNoise(sigma: Double, to samples: [TrackSample], random: inout SeededRandom) -> [TrackSample] {
    guard sigma > 0 else { return samples }
    var error = CorrelatedGPSNoise(sigma: sigma, correlation: 0.9, random: &random)
    return samples.map { sample in
        let (east, north) = error.next(&random)
        var noisy = sample
        noisy.latitude += north / 111_320
        noisy.longitude += east / (111_320 * cos(sample.latitude * .pi / 180))
        noisy.accuracy = ((1.5 * sigma * (1 + 0.1 * random.gaussian())) * 10).rounded() / 10
        return noisy
    }
}

/// GPX 1.1 of samples, timed from `start` (for tools/routes and `--write-gpx`).
func gpxDocument(name: String, samples: [TrackSample], start: Double) -> String {
    var lines = [
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
        "<gpx version=\"1.1\" creator=\"moonrunner simulate\" xmlns=\"http://www.topografix.com/GPX/1/1\">",
        "  <trk><name>\(name)</name><trkseg>",
    ]
    for sample in samples {
        let time = ISODate.string(unixSeconds: start + sample.time)
        lines.append("    <trkpt lat=\"\(NumberFormat.string(sample.latitude, decimals: 7))\" "
            + "lon=\"\(NumberFormat.string(sample.longitude, decimals: 7))\"><time>\(time)</time></trkpt>")
    }
    lines.append("  </trkseg></trk>")
    lines.append("</gpx>")
    return lines.joined(separator: "\n") + "\n"
}
