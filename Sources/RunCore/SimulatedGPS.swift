import Foundation

/// SplitMix64: a tiny seeded generator, so simulated runs (tests, `moonrunner simulate --seed`, the core
/// benchmark) are reproducible. Not for anything that needs unpredictability (keys use the system generator).
public struct SeededRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    public mutating func uniform() -> Double { Double(next() >> 11) * 0x1p-53 }

    /// A standard normal draw (Box–Muller).
    public mutating func gaussian() -> Double {
        let u1 = max(uniform(), 1e-300), u2 = uniform()
        return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}

/// GPS error correlated from fix to fix, as a phone's receiver wanders: a first-order autoregressive process
/// per axis (east, north) whose stationary standard deviation is `sigma`.
public struct CorrelatedGPSNoise: Sendable {
    /// Per-axis standard deviation, metres (3–5 m for a phone in the open).
    public let sigma: Double
    /// Correlation between consecutive fixes (0.9 at 1 Hz: the error drifts over ~10 s).
    public let correlation: Double
    private var east: Double
    private var north: Double

    /// Starts the process at a random error drawn from its stationary distribution.
    public init(sigma: Double, correlation: Double, random: inout SeededRandom) {
        self.sigma = sigma
        self.correlation = correlation
        east = sigma * random.gaussian()
        north = sigma * random.gaussian()
    }

    /// The next error, metres east and north.
    public mutating func next(_ random: inout SeededRandom) -> (east: Double, north: Double) {
        let innovation = sigma * (1 - correlation * correlation).squareRoot()
        east = correlation * east + innovation * random.gaussian()
        north = correlation * north + innovation * random.gaussian()
        return (east, north)
    }
}
