/// A constant-speed Kalman filter on the distance along a course: position and speed from the matched
/// positions, so the `along` a spectator sees moves at the runner's pace instead of shaking with the GPS error
/// projected on the course (3–5 m, correlated over ~20 s).
///
/// Why its own small filter, not ``KalmanSmoother``: along a course the state is one dimension, the course
/// already says where the road goes, and a shortcut or a lost stretch must restart it (``restart(at:time:)``).
struct AlongFilter: Sendable, Hashable {
    /// Metres along the course at ``time``.
    private(set) var position: Double
    /// Metres per second along the course.
    private(set) var speed: Double
    /// Time of the last measurement.
    private(set) var time: Double
    /// Variance of the position, m².
    private var pp: Double
    /// Covariance of position and speed, m²/s.
    private var ps: Double
    /// Variance of the speed, m²/s².
    private var ss: Double
    /// Measurement variance, m².
    private let noise: Double
    /// Acceleration spectral density, m²/s³.
    private let acceleration: Double

    /// Starting variance of the speed (m²/s²): any running speed is plausible at first.
    private static let speedVariance = 9.0

    /// A filter starting at `position` at `time`, standing.
    init(position: Double, time: Double, noise: Double, acceleration: Double) {
        self.position = position
        self.time = time
        self.noise = noise * noise
        self.acceleration = acceleration
        speed = 0
        pp = self.noise
        ps = 0
        ss = Self.speedVariance
    }

    /// The expected position at `time` (no measurement).
    func predicted(at time: Double) -> Double { position + speed * max(0, time - self.time) }

    /// Folds in a matched position.
    mutating func update(_ measured: Double, at time: Double) {
        let dt = max(0, time - self.time)
        // Predict: x += v·dt; P = F P Fᵀ + Q for white acceleration noise.
        position += speed * dt
        let q = acceleration
        pp += dt * (2 * ps + dt * ss) + q * dt * dt * dt / 3
        ps += dt * ss + q * dt * dt / 2
        ss += q * dt
        // Update with the measured position.
        let innovation = measured - position, s = pp + noise
        let gainPosition = pp / s, gainSpeed = ps / s
        position += gainPosition * innovation
        speed += gainSpeed * innovation
        let (oldPP, oldPS) = (pp, ps)
        pp -= gainPosition * oldPP
        ps -= gainPosition * oldPS
        ss -= gainSpeed * oldPS
        self.time = time
    }

    /// Starts again at `position`, keeping the speed (still the runner's) but not trusting it much.
    mutating func restart(at position: Double, time: Double) {
        self.position = position
        self.time = time
        pp = noise
        ps = 0
        ss = max(ss, Self.speedVariance / 4)
    }
}
