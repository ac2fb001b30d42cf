/// A constant-velocity Kalman filter on east/north metres with a fixed-lag Rauch–Tung–Striebel smoother.
///
/// Each axis has state (position, velocity). Both axes share one transition, one process noise and one
/// (isotropic) measurement variance, so their covariances are identical and are computed once.
/// The smoother keeps the steps not yet committed; `smooth()` runs the backward pass over them, and the
/// tracker reads them in place (`withWindow`).
struct KalmanSmoother: Sendable {
    /// A symmetric 2×2 covariance.
    struct Covariance: Sendable, Hashable {
        var pp: Double, pv: Double, vv: Double
    }

    /// One filtered step still inside the lag window.
    struct Step: Sendable {
        /// Unix time of the measurement.
        var timestamp: Double
        /// Reported accuracy of the measurement, metres.
        var accuracy: Double
        /// Filtered state (east position, east velocity, north position, north velocity).
        var filtered: SIMD4<Double>
        /// The prediction of this step from the previous one (equal to `filtered` for a first step).
        var predicted: SIMD4<Double>
        /// RTS gain from this step back to the previous one: C = P(prev|prev) Fᵀ P(this|prev)⁻¹,
        /// stored column-major (c00, c10, c01, c11), so each half is a column and the backward pass works on
        /// (position, velocity) pairs. Zero for the first step after a reset.
        var backGain: SIMD4<Double>
        /// Smoothed state, valid after `smooth()`.
        var smoothed: SIMD4<Double>
        /// True when this step restarted the filter (no link to the step before it).
        var startsSegment: Bool
        /// Index in the tracker's track of the still/moving gate's past point for this step (see ``GatePass``),
        /// set once by the tracker when the step is added: it depends only on timestamps.
        var gatePast = 0
    }

    /// Acceleration noise spectral density at and above ``fullNoiseSpeed``, m²/s³.
    let accelerationNoise: Double
    /// Acceleration noise spectral density at a standstill, m²/s³.
    let slowAccelerationNoise: Double
    /// Filtered speed from which the full acceleration noise applies, m/s.
    let fullNoiseSpeed: Double
    /// Reported accuracy / per-axis standard deviation.
    let accuracyRatio: Double
    /// Prior standard deviation of the velocity at a (re)start, m/s.
    let initialSpeedDeviation: Double = 4

    /// Steps inside the lag window, oldest first, from `head` on (older ones are dropped in batches, so
    /// committing a step does not shift the whole window every time).
    private var steps: [Step] = []
    private var head = 0
    private var state = SIMD4<Double>.zero
    private var covariance = Covariance(pp: 0, pv: 0, vv: 0)
    private var lastTimestamp: Double?
    /// Recent normalised innovations squared (two axes: 2 when the filter's model fits), averaged over a
    /// couple of steps.
    private var surprise = 2.0
    /// Above this recent normalised innovation the filter uses the full process noise (see ``update``).
    let surpriseLimit = 4.0
    /// Across a gap of more than a second, a step whose own normalised innovation exceeds this is a change of
    /// course between the fixes, and takes the process noise grown with the gap (see ``update``). 4.5 (two
    /// axes: exceeded by chance on about a tenth of the steps under the model) keeps the sparse rows of
    /// PaceTableTests within 2% and most of them within 1%: 3 grew the noise on too many straight steps
    /// (+2.3% on average at 2.5 m/s under independent noise), 9 let the smoother cut the corners (2–3% short).
    let sparseTurnLimit = 4.5

    init(_ configuration: TrackerConfiguration) {
        accelerationNoise = configuration.accelerationNoise
        slowAccelerationNoise = min(configuration.slowAccelerationNoise, configuration.accelerationNoise)
        fullNoiseSpeed = max(configuration.fullNoiseSpeed, 1e-9)
        accuracyRatio = configuration.accuracyRatio
    }

    /// The acceleration noise for a step from a state moving at this speed: at walking speeds the GPS error
    /// is a larger share of each step, so the filter trusts its motion model more. It rises with the cube of
    /// the speed, so walking paces (0.5–1.3 m/s) are smoothed hard and running ones hardly less than at full.
    @inline(__always)
    private func accelerationNoise(atSpeed speed: Double) -> Double {
        let share = min(speed / fullNoiseSpeed, 1)
        return slowAccelerationNoise + (accelerationNoise - slowAccelerationNoise) * share * share * share
    }

    /// Per-axis measurement variance for a reported accuracy (floored so a 0 m claim cannot freeze the filter).
    private func measurementVariance(_ accuracy: Double) -> Double {
        let sigma = max(accuracy / accuracyRatio, 0.5)
        return sigma * sigma
    }

    /// Adds a measurement; `restart` drops the link to earlier steps (first fix, or a re-anchor).
    mutating func update(east: Double, north: Double, accuracy: Double, timestamp: Double, restart: Bool) {
        let r = measurementVariance(accuracy)
        guard !restart, let last = lastTimestamp else {
            state = SIMD4(east, 0, north, 0)
            covariance = Covariance(pp: r, pv: 0, vv: initialSpeedDeviation * initialSpeedDeviation)
            surprise = 2
            lastTimestamp = timestamp
            steps.append(Step(timestamp: timestamp, accuracy: accuracy, filtered: state, predicted: state,
                               backGain: .zero, smoothed: state, startsSegment: true))
            return
        }
        let dt = timestamp - last
        let p = covariance
        // Predict: x' = F x, P' = F P Fᵀ + Q with F = [1 dt; 0 1] and white-acceleration Q.
        let predicted = SIMD4(state[0] + dt * state[1], state[1], state[2] + dt * state[3], state[3])
        let speed = (state[1] * state[1] + state[3] * state[3]).squareRoot()
        // Innovations far beyond what the filter expects (a runner setting off from a stop, which the slow
        // model cannot follow) switch to the full process noise until they are explained.
        let surprised = surprise > surpriseLimit
        let density = surprised ? accelerationNoise : accelerationNoise(atSpeed: speed)
        @inline(__always) func predict(_ q: Double) -> Covariance {
            Covariance(pp: p.pp + 2 * dt * p.pv + dt * dt * p.vv + q * dt * dt * dt / 3,
                       pv: p.pv + dt * p.vv + q * dt * dt / 2,
                       vv: p.vv + q * dt)
        }
        let innovationEast = east - predicted[0], innovationNorth = north - predicted[2]
        let squaredInnovation = innovationEast * innovationEast + innovationNorth * innovationNorth
        // Sparse fixes. A process noise grown with the square of every gap (as this filter once had) let each
        // sparse fix's noise through nearly unsmoothed, and the polyline of noisy points is longer than the
        // truth (+7% with a fix every 5 s, independent 4 m error, at 2.5 m/s). Between turns a runner's speed
        // and heading wander no more from one sparse fix to the next than over a second (the density at 1 Hz
        // allows for corners as well), so across a gap the velocity takes one second's worth of noise: the
        // density over the gap. But a corner takes a few seconds, which that spreads too thin over a long gap:
        // when this fix says the runner turned (an innovation beyond ``sparseTurnLimit``), the step takes the
        // density grown with the square of the gap instead.
        let gap = max(dt, 1)
        var pred = predict(density / gap)
        var s = pred.pp + r
        var normalised = squaredInnovation / s
        if gap > 1, normalised > sparseTurnLimit {
            pred = predict(density * gap * gap)
            s = pred.pp + r
            normalised = squaredInnovation / s
        }
        let a00 = p.pp + dt * p.pv, a01 = p.pv, a10 = p.pv + dt * p.vv, a11 = p.vv
        let det = pred.pp * pred.vv - pred.pv * pred.pv
        let i00 = pred.vv / det, i01 = -pred.pv / det, i11 = pred.pp / det
        let gain = SIMD4(a00 * i00 + a01 * i01, a10 * i00 + a11 * i01,
                         a00 * i01 + a01 * i11, a10 * i01 + a11 * i11)
        // Update with a position measurement on each axis.
        let kp = pred.pp / s, kv = pred.pv / s
        surprise = 0.5 * surprise + 0.5 * normalised
        state = SIMD4(predicted[0] + kp * innovationEast, predicted[1] + kv * innovationEast,
                      predicted[2] + kp * innovationNorth, predicted[3] + kv * innovationNorth)
        covariance = Covariance(pp: (1 - kp) * pred.pp, pv: (1 - kp) * pred.pv, vv: pred.vv - kv * pred.pv)
        lastTimestamp = timestamp
        steps.append(Step(timestamp: timestamp, accuracy: accuracy, filtered: state, predicted: predicted,
                           backGain: gain, smoothed: state, startsSegment: false))
    }

    /// Number of steps in the window.
    var count: Int { steps.count - head }

    /// Timestamp of the step at `index` (read in place, without copying the step).
    func timestamp(at index: Int) -> Double { steps[head + index].timestamp }

    /// Smoothed state of the step at `index`.
    func smoothed(at index: Int) -> SIMD4<Double> { steps[head + index].smoothed }

    /// Steps held in storage (the window's, and dropped ones not yet removed from it).
    var storedCount: Int { steps.count }

    /// The gate's past point of the oldest step (the earliest any step reads), nil when the window is empty.
    var oldestGatePast: Int? { count > 0 ? steps[head].gatePast : nil }

    /// Records the gate's past point of the newest step.
    mutating func setNewestGatePast(_ index: Int) {
        steps[steps.count - 1].gatePast = index
    }

    /// Runs the backward RTS pass over the window, from the newest step (smoothed = filtered) back.
    ///
    /// Per axis the update is x̂ₖ = xₖ + C (x̂ₖ₊₁ − x̄ₖ₊₁) on the (position, velocity) pair, written on the
    /// gain's columns so each axis is two vector multiply-adds (the same operations, in the same order, as
    /// the scalar formula, so the result is bit-for-bit the same).
    mutating func smooth() {
        let head = self.head
        steps.withUnsafeMutableBufferPointer { steps in
            guard let base = steps.baseAddress, steps.count > head else { return }
            var index = steps.count - 1
            // The later step's smoothed state stays in registers: reading it back from memory would add a
            // store-to-load delay to every step of this serial recursion.
            var later = base[index].filtered
            base[index].smoothed = later
            while index > head {
                let startsSegment = base[index].startsSegment
                let c = base[index].backGain
                let d = later - base[index].predicted
                index -= 1
                let f = base[index].filtered
                if startsSegment {
                    later = f
                } else {
                    let column0 = c.lowHalf, column1 = c.highHalf
                    let east = f.lowHalf + column0 * d[0] + column1 * d[1]
                    let north = f.highHalf + column0 * d[2] + column1 * d[3]
                    later = SIMD4(lowHalf: east, highHalf: north)
                }
                base[index].smoothed = later
            }
        }
    }

    /// Calls `body` with the window's steps, oldest first, read in place.
    func withWindow<Result>(_ body: (UnsafeBufferPointer<Step>) throws -> Result) rethrows -> Result {
        try steps.withUnsafeBufferPointer { all in try body(UnsafeBufferPointer(rebasing: all[head...])) }
    }

    /// How many of the oldest steps have timestamps at or before `cutoff` (ready to commit).
    func committableCount(through cutoff: Double) -> Int {
        var count = 0
        while head + count < steps.count, steps[head + count].timestamp <= cutoff { count += 1 }
        return count
    }

    /// Forgets the oldest `count` steps once the caller has committed them.
    mutating func dropOldest(_ count: Int) {
        head += count
        // Batches of at least twice the window's size, so each step is copied at most half a time on average,
        // and at least 16, so storage stays small (a 1 Hz run's lag window holds about 10 steps of ~170 bytes;
        // 64 dropped ones beside them tripled its memory).
        if head >= max(16, 2 * (steps.count - head)) {
            steps.removeFirst(head)
            head = 0
        }
    }
}
