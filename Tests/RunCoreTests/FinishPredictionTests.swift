import RunCore
import Testing

/// The finish prediction against values worked out by hand.
@Suite struct FinishPredictionTests {
    @Test func theFatigueTermPhasesInWithTheShareDoneWhenStanding() throws {
        // 5 km in 25:00 → 10 km, half done: exponent 1 + 0.06 · 0.5 = 1.03, 1500 · 2^1.03 = 3063.04 s (Riegel's
        // full 1.06 said 3127.40 s).
        let total = try #require(FinishPrediction.totalTime(toCover: 10_000, distance: 5_000, elapsed: 1_500,
                                                            moving: 1_500, currentPace: nil))
        #expect(abs(total - 3063.04) < 0.01)
        // Stops so far count: 100 s stopped are added to the moving prediction.
        let withStops = try #require(FinishPrediction.totalTime(toCover: 10_000, distance: 5_000, elapsed: 1_600,
                                                                moving: 1_500, currentPace: nil))
        #expect(abs(withStops - 3163.04) < 0.01)
    }

    @Test func theCurrentPaceWeighsAsMuchAsTheSquaredShareOfTheGoalDone() throws {
        // 10 km in 3000 s moving (3100 s elapsed), running 5:00/km now, goal a marathon; d = 10000/42195 = 0.237,
        // exponent 1.01422: the steady part's remaining 3000 · (42195/10000)^1.01422 − 3000 = 9920.32 s; the current
        // pace's 32.195 km · 300 = 9658.50 s; d² = 0.05617: 3100 + 0.94383 · 9920.32 + 0.05617 · 9658.50 = 13005.61 s.
        let total = try #require(FinishPrediction.totalTime(toCover: 42_195, distance: 10_000, elapsed: 3_100,
                                                            moving: 3_000, currentPace: 300))
        #expect(abs(total - 13005.61) < 0.01)
    }

    @Test func theTargetPaceCountsAsAShareOfTheGoalRunAtIt() throws {
        // As above with a target of 12600 s (298.61 s/km), counting as 5% of the goal (2109.75 m) run at it: the
        // base is 10000 · (3000 + 2109.75 · 0.29861) / 12109.75 = 2997.58 s, its remaining 9912.33 s:
        // 3100 + 0.94383 · 9912.33 + 0.05617 · 9658.50 = 12998.08 s (protocol.md's example).
        let total = try #require(FinishPrediction.totalTime(toCover: 42_195, distance: 10_000, elapsed: 3_100,
                                                            moving: 3_000, currentPace: 300,
                                                            targetPace: 12_600.0 / 42_195 * 1000))
        #expect(abs(total - 12998.08) < 0.01)
    }

    @Test func noPredictionTooEarlyOrPastTheGoal() {
        #expect(FinishPrediction.totalTime(toCover: 42_195, distance: 150, elapsed: 50, moving: 50, currentPace: 300) == nil)
        #expect(FinishPrediction.totalTime(toCover: 42_195, distance: 300, elapsed: 50, moving: 50, currentPace: 300) == nil)
        #expect(FinishPrediction.totalTime(toCover: 5_000, distance: 5_000, elapsed: 1_500, moving: 1_500,
                                           currentPace: 300) == nil)
    }
}
