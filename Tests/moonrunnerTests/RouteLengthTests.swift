import Foundation
@testable import moonrunner
import RunCore
import MoonRunnerTestSupport
import Testing

/// Each built-in route measures at least its name by our own engine, with and without simulate's GPS noise,
/// so the marathon wins Interstellar Space (42,195 m) and the 10k is 10 km.
@Suite(.mayBlock) struct RouteLengthTests {
    static func measured(_ route: BuiltInRoute, noise: Double, seed: UInt64) -> Double {
        var samples = BuiltInRoute.samples(along: route.path, speed: 1000 / 330)
        var random = SeededRandom(seed: seed)
        samples = addNoise(sigma: noise, to: samples, random: &random)
        var tracker = RunTracker()
        let start = 1_800_000_000.0
        for sample in samples {
            let fix = Fix(latitude: sample.latitude, longitude: sample.longitude, accuracy: sample.accuracy,
                          timestamp: start + sample.time)
            _ = tracker.add(fix, now: fix.timestamp)
        }
        return tracker.finish().distance
    }

    @Test(arguments: [BuiltInRoute.tenK, .marathon])
    func measuresAtLeastItsName(route: BuiltInRoute) throws {
        let name = try #require(route.distance)
        let exact = Self.measured(route, noise: 0, seed: 1)
        #expect(exact >= name, "\(route.rawValue) measures \(exact) m")
        for seed in UInt64(1)...4 {
            let noisy = Self.measured(route, noise: 4, seed: seed)
            #expect(noisy >= name, "\(route.rawValue) with 4 m noise (seed \(seed)) measures \(noisy) m")
        }
        // Not much more than its name either: the route is cut just past it.
        #expect(exact < name * 1.01)
    }
}
