import Broadcaster
import Testing

/// Fitting the two connection limits within the open-file limit at start (a pure function: no sockets).
@Suite struct ConnectionBudgetTests {
    @Test func limitsThatFitAreLeftAsTheyAre() {
        let budget = ConnectionBudget.fit(lineLimit: 20_000, httpLimit: 20_000, reserve: 100, available: 1_048_576)
        #expect(budget == ConnectionBudget(line: 20_000, http: 20_000, isLowered: false))
        let exact = ConnectionBudget.fit(lineLimit: 400, httpLimit: 500, reserve: 100, available: 1_000)
        #expect(exact == ConnectionBudget(line: 400, http: 500, isLowered: false))
    }

    @Test func theDefaultsOnAMachineOf20000DescriptorsAreHalvedAndUseEveryOneTheReserveLeaves() {
        // The black-box finding: 20,000 + 20,000 in a process allowed 20,000 descriptors.
        let budget = ConnectionBudget.fit(lineLimit: 20_000, httpLimit: 20_000, reserve: 83, available: 20_000)
        #expect(budget.isLowered)
        #expect(budget.line + budget.http == 20_000 - 83)
        #expect(budget.line == 9_958)
        #expect(budget.http == 9_959)
        #expect(budget == ConnectionBudget.fit(lineLimit: 50_000, httpLimit: 20_000, reserve: 83, available: 20_000))
    }

    @Test func theLargerIsLoweredFirstAndASmallLimitKeepsItsValue() {
        // 500 fits in half of the 4,000 left: kept; the line protocol gets the rest.
        #expect(ConnectionBudget.fit(lineLimit: 30_000, httpLimit: 500, reserve: 64, available: 4_064)
                == ConnectionBudget(line: 3_500, http: 500, isLowered: true))
        #expect(ConnectionBudget.fit(lineLimit: 3, httpLimit: 20_000, reserve: 67, available: 20_000)
                == ConnectionBudget(line: 3, http: 19_930, isLowered: true))
        // Both above half: half each.
        #expect(ConnectionBudget.fit(lineLimit: 30_000, httpLimit: 10_000, reserve: 64, available: 4_064)
                == ConnectionBudget(line: 2_000, http: 2_000, isLowered: true))
    }

    @Test func withHTTPOffTheLineProtocolTakesEverything() {
        let budget = ConnectionBudget.fit(lineLimit: 20_000, httpLimit: 0, reserve: 64, available: 1_024)
        #expect(budget == ConnectionBudget(line: 960, http: 0, isLowered: true))
    }

    @Test func aReserveAsLargeAsTheLimitLeavesNothing() {
        #expect(ConnectionBudget.fit(lineLimit: 10, httpLimit: 10, reserve: 64, available: 64)
                == ConnectionBudget(line: 0, http: 0, isLowered: true))
        #expect(ConnectionBudget.fit(lineLimit: 10, httpLimit: 10, reserve: 100, available: 64)
                == ConnectionBudget(line: 0, http: 0, isLowered: true))
    }

    @Test func noFittedLimitIsAboveTheOneAskedFor() {
        for (line, http) in [(1, 1_000_000), (999_999, 1), (3, 7), (0, 5)] {
            for available in [0, 1, 2, 10, 65, 100, 1_000] {
                let budget = ConnectionBudget.fit(lineLimit: line, httpLimit: http, reserve: 64, available: available)
                #expect(budget.line <= line && budget.http <= http)
                #expect(budget.line >= 0 && budget.http >= 0)
                #expect(budget.line + budget.http <= max(0, available - 64) || !budget.isLowered)
            }
        }
    }

    @Test func limitsNearIntMaxDoNotTrap() {
        let budget = ConnectionBudget.fit(lineLimit: .max, httpLimit: .max, reserve: 64, available: 1_064)
        #expect(budget.isLowered)
        #expect(budget.line + budget.http == 1_000)
    }
}
