import Foundation
import RunCore

/// `moonrunner bench core [fixes] [interval]`: nanoseconds per fix of the whole RunCore pipeline (filter,
/// Kalman smoothing, geodesy, live metrics, splits and badges) on a synthetic noisy run, 1,000,000 fixes by
/// default, one a second. A shorter interval (say 0.001) replays the same fixes flat out, as a backlog or a
/// hostile client would send them. Returns the process exit status.
func runCoreBenchmark(arguments: [String]) -> Int32 {
    let count = arguments.first.flatMap { Int($0) } ?? 1_000_000
    let interval = arguments.dropFirst().first.flatMap { Double($0) } ?? 1
    guard count > 0, interval > 0, interval.isFinite else {
        print("usage: moonrunner bench core [fixes] [interval seconds]")
        return 2
    }
    let fixes = benchmarkFixes(count: count, interval: interval)
    var tracker = RunTracker()
    var accepted = 0, awards = 0, splits = 0
    let clock = ContinuousClock()
    let cpuStarted = threadCPUSeconds()
    let started = clock.now
    for fix in fixes {
        switch tracker.add(fix, now: fix.timestamp) {
        case .accepted(let progress):
            accepted += 1
            awards += progress.awards.count
            splits += progress.splits.count
        case .rejected:
            break
        }
    }
    let elapsed = clock.now - started
    let cpuSeconds = threadCPUSeconds() - cpuStarted
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    let distance = tracker.snapshot?.distance ?? 0
    print("fixes: \(count) (accepted \(accepted), awards \(awards), splits \(splits), distance \(Int(distance)) m)")
    print(String(format: "total: %.3f s", seconds))
    print(String(format: "per fix: %.0f ns (CPU time of this thread: %.0f ns, unaffected by other load)",
                 seconds * 1e9 / Double(count), cpuSeconds * 1e9 / Double(count)))
    return 0
}

/// CPU time consumed by the calling thread, seconds.
private func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

/// A reproducible noisy run at 3 m/s, one fix a second, around a 2 km loop (so it stays near its start
/// however long it is), with GPS error correlated from fix to fix (per-axis 4 m) and a spike now and then.
private func benchmarkFixes(count: Int, interval: Double) -> [Fix] {
    var seed: UInt64 = 0x5EED
    func uniform() -> Double {  // SplitMix64
        seed &+= 0x9E37_79B9_7F4A_7C15
        var z = seed
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Double((z ^ (z >> 31)) >> 11) * 0x1p-53
    }
    func gaussian() -> Double { (-2 * log(max(uniform(), 1e-300))).squareRoot() * cos(2 * .pi * uniform()) }
    let radius = 2000 / (2 * Double.pi), metresPerDegree = 111_250.0
    let latitude = 51.5, longitude = -0.12, start = 1_700_000_000.0
    let eastScale = metresPerDegree * cos(latitude * .pi / 180)
    var errorEast = 0.0, errorNorth = 0.0
    var fixes: [Fix] = []
    fixes.reserveCapacity(count)
    for second in 0..<count {
        let angle = 3 * Double(second) / radius
        errorEast = 0.95 * errorEast + 4 * 0.312 * gaussian()
        errorNorth = 0.95 * errorNorth + 4 * 0.312 * gaussian()
        let spike = second % 997 == 500 ? 150.0 : 0
        let east = radius * sin(angle) + errorEast + spike, north = radius * (1 - cos(angle)) + errorNorth
        fixes.append(Fix(latitude: latitude + north / metresPerDegree, longitude: longitude + east / eastScale,
                         accuracy: 6 * (0.9 + 0.2 * uniform()), timestamp: start + Double(second) * interval))
    }
    return fixes
}
