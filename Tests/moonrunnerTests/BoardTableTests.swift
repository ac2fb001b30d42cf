import Foundation
@testable import moonrunner
import MoonRunnerClient
import MoonRunnerTestSupport
import Testing
import Wire

/// The badge board shows what is left to win, never a goal already won.
@Suite(.mayBlock) struct BoardTableTests {
    let formatter = RunFormatter(locale: Locale(identifier: "en_GB"), unit: .kilometres, timeZone: TimeZone(identifier: "UTC")!)

    func board(silver: String?, gold: String?, earned: String? = "2026-11-30T07:00:00Z", left: Double = 0) -> BoardEvent {
        BoardEvent(runner: "ann", badgeID: "moon", badgeName: "The Moon", distance: 1609.34, earned: earned,
                   silver: silver, gold: gold, best: earned == nil ? nil : 300, left: left,
                   silverPace: earned == nil ? nil : 303, goldPace: earned == nil ? nil : 289)
    }

    @Test func eachStageShowsOnlyWhatIsLeft() {
        #expect(leftToWin(board(silver: nil, gold: nil, earned: nil, left: 1200), formatter: formatter)
                == "1.20 km more to earn it")
        #expect(leftToWin(board(silver: nil, gold: nil), formatter: formatter) == "silver at 5:03 /km, gold at 4:49 /km")
        #expect(leftToWin(board(silver: "2026-11-30T08:00:00Z", gold: nil), formatter: formatter) == "gold at 4:49 /km")
        #expect(leftToWin(board(silver: "2026-11-30T08:00:00Z", gold: "2026-11-30T09:00:00Z"), formatter: formatter)
                == "all won")
    }

    @Test func tablesSayTheirTimeZone() {
        let table = boardTable([board(silver: nil, gold: nil)], formatter: formatter)
        #expect(table.hasPrefix("BADGE") && table.contains("EARNED (UTC)"))
        #expect(table.contains("2026-11-30 07:00"))
    }
}
