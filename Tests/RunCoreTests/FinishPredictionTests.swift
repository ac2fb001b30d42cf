import RunCore
import Testing

/// Riegel's prediction against values worked out by hand.
@Suite struct FinishPredictionTests {
    @Test func riegelAloneWhenStanding() throws {
        // 5 km in 25:00 → 10 km: 1500 · 2^1.06 = 3127.40 s (the textbook example).
        let total = try #require(FinishPrediction.totalTime(toCover: 10_000, distance: 5_000, elapsed: 1_500,
                                                            moving: 1_500, currentPace: nil))
        #expect(abs(total - 3127.40) < 0.01)
        // Stops so far count: 100 s stopped are added to the moving prediction.
        let withStops = try #require(FinishPrediction.totalTime(toCover: 10_000, distance: 5_000, elapsed: 1_600,
                                                                moving: 1_500, currentPace: nil))
        #expect(abs(withStops - 3227.40) < 0.01)
    }

    @Test func theCurrentPaceWeighsAsMuchAsTheShareOfTheGoalDone() throws {
        // 10 km in 3000 s moving (3100 s elapsed), running 5:00/km now, goal a marathon:
        // Riegel's remaining 3000 · (42195/10000)^1.06 − 3000 = 10800.60 s; the current pace's 32.195 km · 300 =
        // 9658.50 s; 10000/42195 done: 3100 + 0.763 · 10800.60 + 0.237 · 9658.50 = 13629.93 s.
        let total = try #require(FinishPrediction.totalTime(toCover: 42_195, distance: 10_000, elapsed: 3_100,
                                                            moving: 3_000, currentPace: 300))
        #expect(abs(total - 13629.93) < 0.01)
    }

    @Test func noPredictionTooEarlyOrPastTheGoal() {
        #expect(FinishPrediction.totalTime(toCover: 42_195, distance: 150, elapsed: 50, moving: 50, currentPace: 300) == nil)
        #expect(FinishPrediction.totalTime(toCover: 42_195, distance: 300, elapsed: 50, moving: 50, currentPace: 300) == nil)
        #expect(FinishPrediction.totalTime(toCover: 5_000, distance: 5_000, elapsed: 1_500, moving: 1_500,
                                           currentPace: 300) == nil)
    }
}
