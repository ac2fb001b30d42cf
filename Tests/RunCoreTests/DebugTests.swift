import Foundation
import Testing
@testable import RunCore

@Test("debug") func debugRow() {
    let env = ProcessInfo.processInfo.environment
    guard let speed = Double(env["DBG_SPEED"] ?? "") else { return }
    let seed = UInt64(env["DBG_SEED"] ?? "1")!, sigma = Double(env["DBG_SIGMA"] ?? "3")!, seconds = Double(env["DBG_SECONDS"] ?? "1200")!
    var total = 0.0, totalMoving = 0.0, worst = 0.0, worstMoving = 0.0
    for seed in (env["DBG_SEEDS"] ?? "\(seed)").split(separator: ",").map({ UInt64($0)! }) {
    let stretches = env["DBG_STOPS"] != nil ? PaceTableTests.withStops(60) : env["DBG_RUNWALK"] != nil ? PaceTableTests.runWalk : [(seconds, speed)]
    var (run, moving) = SyntheticRun.route(seed: seed, stretches: stretches, interval: Double(env["DBG_INTERVAL"] ?? "1")!, sigma: sigma)
    if env["DBG_JUMPS"] != nil { run = run.withJumps(share: 0.05, seed: seed &+ 1000) }
    var configuration = TrackerConfiguration()
    if let value = Double(env["DBG_QSLOW"] ?? "") { configuration.slowAccelerationNoise = value }
    if let value = Double(env["DBG_Q"] ?? "") { configuration.accelerationNoise = value }
    if let value = Double(env["DBG_FULL"] ?? "") { configuration.fullNoiseSpeed = value }
    if let value = Double(env["DBG_R"] ?? "") { configuration.stayDeviations = value }
    if let value = Int(env["DBG_K"] ?? "") { configuration.stayCover = value }
    var tracker = RunTracker(configuration: configuration)
    tracker.feed(run.fixes)
    let summary = tracker.finish()
    print("DBG distance \(summary.distance) of \(run.trueLength), moving \(summary.movingTime) of \(moving)")
    if speed > 0 {
        let d = summary.distance / run.trueLength - 1, m = summary.movingTime / moving - 1
        total += d; totalMoving += m
        if abs(d) > abs(worst) { worst = d }
        if abs(m) > abs(worstMoving) { worstMoving = m }
    } else {
        worst = max(worst, summary.distance); worstMoving = max(worstMoving, summary.movingTime)
    }
    if env["DBG_SEEDS"] != nil { continue }
    let scale = LocalScale(latitude: SyntheticRun.origin.latitude)
    let xy = run.truth.map { (($0.longitude - SyntheticRun.origin.longitude) * scale.metresPerDegreeEast, ($0.latitude - SyntheticRun.origin.latitude) * scale.metresPerDegreeNorth) }
    var small = 0, smallest = Double.infinity
    if xy.count > 61 {
        for b in 60..<xy.count {
            let idx = [b - 60, b - 45, b - 30, b - 15, b]
            var spread = 0.0
            for i in idx { for j in idx { spread = max(spread, hypot(xy[i].0 - xy[j].0, xy[i].1 - xy[j].1)) } }
            if spread <= 12 { small += 1 }
            smallest = min(smallest, spread)
        }
    }
    print("DBG true intervals with spread <= 12: \(small), smallest \(smallest)")
    for (key, value) in tracker.settling.debugStats.sorted(by: { $0.key < $1.key }) { print("DBG \(key): \(value)") }
    }
    print("SUM worst \(worst) worstMoving \(worstMoving) mean \(total / 8) meanMoving \(totalMoving / 8)")
}
