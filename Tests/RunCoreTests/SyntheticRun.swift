import Foundation
@testable import RunCore

/// A simulated run: the true path and the noisy fixes a phone would send.
struct SyntheticRun {
    var truth: [Coordinate]
    var fixes: [Fix]

    /// The true length, measured geodesically along the true path.
    var trueLength: Double {
        zip(truth, truth.dropFirst()).reduce(0) { $0 + Geodesy.distance(from: $1.0, to: $1.1) }
    }

    static let origin = Coordinate(latitude: 51.5, longitude: -0.12)
    static let startTime = 1_700_000_000.0

    /// Converts local metres around `origin` to a coordinate (flat approximation, fine for a simulation).
    static func coordinate(east: Double, north: Double, origin: Coordinate = origin) -> Coordinate {
        let scale = LocalScale(latitude: origin.latitude)
        return Coordinate(latitude: origin.latitude + north / scale.metresPerDegreeNorth,
                          longitude: origin.longitude + east / scale.metresPerDegreeEast)
    }

    /// A run of `length` metres at `speed` m/s, one fix per `interval` seconds, along a street-like path
    /// (straights, 90° corners, gentle bends), with AR(1) noise of per-axis sigma drawn from `sigmas`.
    static func run(seed: UInt64, length: Double = 5000, speed: Double = 3, interval: Double = 1,
                    sigmas: ClosedRange<Double> = 3...5, correlation: Double = 0.95,
                    origin: Coordinate = origin) -> SyntheticRun {
        var rng = SeededRandom(seed: seed)
        let sigma = sigmas.lowerBound + (sigmas.upperBound - sigmas.lowerBound) * rng.uniform()
        var noise = CorrelatedGPSNoise(sigma: sigma, correlation: correlation, random: &rng)
        var east = 0.0, north = 0.0, heading = 2 * .pi * rng.uniform()
        var turnLeft = 0.0, turnRate = 0.0, bend = 0.0
        var truth: [Coordinate] = [], fixes: [Fix] = []
        let steps = Int((length / (speed * interval)).rounded())
        for step in 0...steps {
            let position = coordinate(east: east, north: north, origin: origin)
            truth.append(position)
            let error = noise.next(&rng)
            let noisy = coordinate(east: east + error.east, north: north + error.north, origin: origin)
            let accuracy = 1.5 * sigma * (0.9 + 0.2 * rng.uniform())
            fixes.append(Fix(latitude: noisy.latitude, longitude: noisy.longitude, accuracy: accuracy,
                             timestamp: startTime + Double(step) * interval))
            // Steering: now and then a corner (90° over about 5 s), otherwise a slowly wandering bend.
            if turnLeft <= 0, rng.uniform() < interval / 60 {
                turnLeft = .pi / 2
                turnRate = (rng.uniform() < 0.5 ? -1 : 1) * (.pi / 2) / 5
            }
            bend = 0.98 * bend + 0.002 * rng.gaussian()
            var turn = bend * interval
            if turnLeft > 0 {
                turn += turnRate * interval
                turnLeft -= abs(turnRate * interval)
            }
            heading += turn
            east += speed * interval * sin(heading)
            north += speed * interval * cos(heading)
        }
        return SyntheticRun(truth: truth, fixes: fixes)
    }

    /// A runner standing still at `origin` for `duration` seconds, with AR(1) jitter of per-axis `sigma`.
    static func standing(seed: UInt64, duration: Double = 600, sigma: Double = 4, correlation: Double = 0.95)
        -> SyntheticRun {
        var rng = SeededRandom(seed: seed)
        var noise = CorrelatedGPSNoise(sigma: sigma, correlation: correlation, random: &rng)
        var fixes: [Fix] = []
        for step in 0...Int(duration) {
            let error = noise.next(&rng)
            let noisy = coordinate(east: error.east, north: error.north)
            fixes.append(Fix(latitude: noisy.latitude, longitude: noisy.longitude, accuracy: 1.5 * sigma,
                             timestamp: startTime + Double(step)))
        }
        return SyntheticRun(truth: [origin], fixes: fixes)
    }
}

extension RunTracker {
    /// Feeds fixes as if each arrived the moment it was taken; returns the outcomes.
    @discardableResult
    mutating func feed(_ fixes: [Fix]) -> [FixOutcome] {
        fixes.map { add($0, now: $0.timestamp) }
    }
}

/// The accepted progress of an outcome, nil for a rejection.
extension FixOutcome {
    var progress: RunProgress? {
        if case .accepted(let progress) = self { return progress }
        return nil
    }

    var rejection: FixRejection? {
        if case .rejected(let reason) = self { return reason }
        return nil
    }

    var isHeld: Bool {
        if case .held = self { return true }
        return false
    }
}

extension SyntheticRun {
    /// A noise-free run due north-east, one fix per second, at a speed per stretch: `[(seconds, m/s)]`.
    static func clean(_ stretches: [(seconds: Int, speed: Double)], accuracy: Double = 3,
                      startTime: Double = startTime, origin: Coordinate = origin) -> SyntheticRun {
        var along = 0.0, time = startTime
        var truth = [coordinate(east: 0, north: 0, origin: origin)]
        var fixes = [Fix(latitude: truth[0].latitude, longitude: truth[0].longitude, accuracy: accuracy, timestamp: time)]
        for stretch in stretches {
            for _ in 0..<stretch.seconds {
                along += stretch.speed
                time += 1
                let point = coordinate(east: along * 0.6, north: along * 0.8, origin: origin)
                truth.append(point)
                fixes.append(Fix(latitude: point.latitude, longitude: point.longitude, accuracy: accuracy, timestamp: time))
            }
        }
        return SyntheticRun(truth: truth, fixes: fixes)
    }
}

extension SyntheticRun {
    /// Seconds from the first fix until the true path reached `distance` metres (fixes paired with truth).
    func trueElapsed(at distance: Double) -> Double? {
        var covered = 0.0
        for index in 1..<truth.count {
            let step = Geodesy.distance(from: truth[index - 1], to: truth[index])
            if covered + step >= distance {
                let a = fixes[index - 1].timestamp, b = fixes[index].timestamp
                return a + (distance - covered) / step * (b - a) - fixes[0].timestamp
            }
            covered += step
        }
        return nil
    }
}

extension SyntheticRun {
    /// A street-like route (as ``run(seed:length:speed:interval:sigmas:correlation:origin:)``) run at a speed per
    /// stretch, `[(seconds, m/s)]` (0 m/s is a stop), one fix per `interval` seconds, under AR(1) noise of per-axis
    /// `sigma` metres (`correlation` 0: independent from fix to fix); `movingTime` is the true time spent at a
    /// speed above zero. Not `winding`: one straight line, without corners or bends (what the smoothing does at a
    /// corner is then left out).
    static func route(seed: UInt64, stretches: [(seconds: Double, speed: Double)], interval: Double = 1,
                      sigma: Double, correlation: Double = 0.95,
                      winding: Bool = true) -> (run: SyntheticRun, movingTime: Double) {
        var rng = SeededRandom(seed: seed)
        var noise = CorrelatedGPSNoise(sigma: sigma, correlation: correlation, random: &rng)
        var east = 0.0, north = 0.0, heading = 2 * .pi * rng.uniform()
        var turnLeft = 0.0, turnRate = 0.0, bend = 0.0
        var truth: [Coordinate] = [], fixes: [Fix] = []
        var time = 0.0, movingTime = 0.0
        var stretch = 0, stretchEnd = stretches.first?.seconds ?? 0
        let duration = stretches.reduce(0) { $0 + $1.seconds }
        while true {
            truth.append(coordinate(east: east, north: north))
            let error = noise.next(&rng)
            let noisy = coordinate(east: east + error.east, north: north + error.north)
            let accuracy = 1.5 * sigma * (0.9 + 0.2 * rng.uniform())
            fixes.append(Fix(latitude: noisy.latitude, longitude: noisy.longitude, accuracy: accuracy,
                             timestamp: startTime + time))
            guard time + interval <= duration + 1e-9 else { break }
            // The speed over the next interval, integrated across stretch boundaries.
            var covered = 0.0, from = time
            let to = time + interval
            while from < to - 1e-9 {
                while stretch < stretches.count - 1, from >= stretchEnd - 1e-9 {
                    stretch += 1
                    stretchEnd += stretches[stretch].seconds
                }
                let until = min(to, stretchEnd)
                covered += stretches[stretch].speed * (until - from)
                if stretches[stretch].speed > 0 { movingTime += until - from }
                from = until
            }
            // The same draws either way, so a straight route has the same noise as its winding twin.
            if turnLeft <= 0, rng.uniform() < interval / 60 {
                turnLeft = .pi / 2
                turnRate = (rng.uniform() < 0.5 ? -1 : 1) * (.pi / 2) / 5
            }
            bend = 0.98 * bend + 0.002 * rng.gaussian()
            var turn = bend * interval
            if turnLeft > 0 {
                turn += turnRate * interval
                turnLeft -= abs(turnRate * interval)
            }
            if winding { heading += turn }
            east += covered * sin(heading)
            north += covered * cos(heading)
            time = to
        }
        return (SyntheticRun(truth: truth, fixes: fixes), movingTime)
    }

    /// The run with a share of its fixes (never the first) thrown `30...80` m off in a random direction, each
    /// reporting a plausible accuracy of `8...15` m, as a phone does after a bad reflection.
    func withJumps(share: Double, seed: UInt64) -> SyntheticRun {
        var rng = SeededRandom(seed: seed)
        var fixes = self.fixes
        let scale = LocalScale(latitude: Self.origin.latitude)
        for index in fixes.indices.dropFirst() where rng.uniform() < share {
            let distance = 30 + 50 * rng.uniform(), direction = 2 * .pi * rng.uniform()
            fixes[index].latitude += distance * cos(direction) / scale.metresPerDegreeNorth
            fixes[index].longitude += distance * sin(direction) / scale.metresPerDegreeEast
            fixes[index].accuracy = 8 + 7 * rng.uniform()
        }
        return SyntheticRun(truth: truth, fixes: fixes)
    }
}
