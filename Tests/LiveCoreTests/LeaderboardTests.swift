@testable import LiveCore
import Testing

/// The board's order and the moves a rerank reports, without a hub.
@Suite struct LeaderboardTests {
    @Test func runsAreRankedByDistanceThenByTheShorterTime() {
        var board = Leaderboard()
        board.update("ann", distance: 1_000, elapsed: 300, moving: 300, goal: nil)
        board.update("bob", distance: 1_200, elapsed: 320, moving: 320, goal: 42_195)
        board.update("cid", distance: 1_000, elapsed: 290, moving: 290, goal: 42_195)
        let (standings, more) = board.standings(goal: nil, limit: 10)
        #expect(standings.map(\.0) == ["bob", "cid", "ann"] && !more)
        #expect(standings.map(\.1.position) == [1, 2, 3])
        // Gaps in metres, and in seconds at the leader's own pace (320 s for 1200 m).
        #expect(standings[2].1.gap == 200 && abs((standings[2].1.gapTime ?? 0) - 200 * 320.0 / 1200) < 1e-9)
        #expect(standings[0].1.gap == 0 && standings[0].1.gapTime == 0)
        // Only the runners with that goal distance, placed among themselves.
        let marathon = board.standings(goal: 42_195, limit: 1)
        #expect(marathon.standings.map(\.0) == ["bob"] && marathon.standings[0].1.position == 1 && marathon.more)
    }

    @Test func aRerankReportsWhoseplaceChangedSinceTheLastOne() {
        var board = Leaderboard()
        for name in ["ann", "bob", "cid"] { board.update(name, distance: 0, elapsed: 0, moving: 0, goal: nil) }
        #expect(board.rerank() == [.init(runner: "ann", from: nil, to: 1), .init(runner: "bob", from: nil, to: 2),
                                   .init(runner: "cid", from: nil, to: 3)])
        board.update("ann", distance: 10, elapsed: 5, moving: 5, goal: nil)
        #expect(board.rerank().isEmpty, "still first")
        // cid passes both; bob passes ann and falls back before the next rerank: only what differs counts.
        board.update("cid", distance: 20, elapsed: 5, moving: 5, goal: nil)
        board.update("bob", distance: 15, elapsed: 5, moving: 5, goal: nil)
        board.update("bob", distance: 8, elapsed: 6, moving: 6, goal: nil)
        #expect(Set(board.rerank()) == [.init(runner: "cid", from: 3, to: 1), .init(runner: "ann", from: 1, to: 2),
                                        .init(runner: "bob", from: 2, to: 3)])
        #expect(board.standing(of: "cid")?.position == 1 && board.standing(of: "bob")?.gap == 12)
    }

    @Test func aRunLeavingMovesEveryoneBehindUpWithinTheReportedPlaces() {
        var board = Leaderboard(reportedPlaces: 2)
        for (index, name) in ["a", "b", "c", "d"].enumerated() {
            board.update(name, distance: Double(100 - index), elapsed: 1, moving: 1, goal: nil)
        }
        _ = board.rerank()
        board.remove("a")
        // b, c, d move up; d's move (4 → 3) is beyond the 2 reported places.
        #expect(board.rerank() == [.init(runner: "b", from: 2, to: 1), .init(runner: "c", from: 3, to: 2)])
        #expect(board.count == 3 && board.standing(of: "d")?.position == 3 && board.standing(of: "a") == nil)
        // Moves far down the field are not reported either.
        board.update("zed", distance: 0, elapsed: 1, moving: 1, goal: nil)
        #expect(board.rerank().isEmpty)
        #expect(board.standing(of: "zed")?.position == 4)
    }
}
