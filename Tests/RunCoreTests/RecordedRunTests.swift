import Foundation
import Testing
@testable import RunCore

/// The trackpoints of a GPX fixture of this target (see ``RealRuns/fixes(ofFile:)``).
func readGPX(_ name: String) throws -> [Fix] {
    let url = try #require(Bundle.module.url(forResource: "Fixtures/\(name)", withExtension: "gpx"))
    return try RealRuns.fixes(ofFile: url.path)
}

@Suite("Recorded run")
struct RecordedRunTests {
    @Test("a real Strava run measures plausibly against the raw sum")
    func stravaRun() throws {
        let fixes = try readGPX("strava-run-1")
        #expect(fixes.count == 1181)
        var raw = 0.0
        for (a, b) in zip(fixes, fixes.dropFirst()) { raw += Geodesy.distance(from: a.coordinate, to: b.coordinate) }
        var tracker = RunTracker()
        // Replayed as if live: each fix arrives a second after it was taken.
        let outcomes = fixes.map { tracker.add($0, now: $0.timestamp + 1) }
        let summary = tracker.finish()
        let accepted = outcomes.filter { $0.progress != nil }.count
        #expect(accepted >= fixes.count - 5)
        // Recorded tracks are already cleaned by the watch, so smoothing should trim a little, not a lot.
        #expect(summary.distance > 0.97 * raw && summary.distance <= 1.01 * raw,
                "smoothed \(summary.distance) m vs raw \(raw) m")
        #expect(summary.elapsed == fixes.last!.timestamp - fixes.first!.timestamp)
        #expect(summary.movingTime <= summary.elapsed && summary.movingTime > 0.8 * summary.elapsed)
        #expect(summary.splits.filter { $0.unit == .kilometre }.count == Int(summary.distance / 1000))
        let pace = try #require(summary.averagePace)
        #expect(pace > 180 && pace < 600)
        print("strava-run-1: raw \(raw) m, measured \(summary.distance) m, moving \(summary.movingTime) s of \(summary.elapsed) s")
    }
}
