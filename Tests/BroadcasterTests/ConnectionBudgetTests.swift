import Broadcaster
import Testing

/// Fitting the two connection limits within the open-file limit at start (a pure function: no sockets).
@Suite struct ConnectionBudgetTests {
    @Test func limitsThatFitAreLeftAsTheyAre() {
        let budget = ConnectionBudget.fit(lineLimit: 20_000, httpLimit: 20_000, reserve: 100, available: 1_048_576)
        #expect(budget == ConnectionBudget(line: 20_000, http: 20_000, total: nil))
        #expect(!budget.isLowered)
        let exact = ConnectionBudget.fit(lineLimit: 400, httpLimit: 500, reserve: 100, available: 1_000)
        #expect(exact == ConnectionBudget(line: 400, http: 500, total: nil))
    }

    @Test func theDefaultsOnAMachineOf20000DescriptorsShareEveryOneTheReserveLeaves() {
        // The black-box finding: 20,000 + 20,000 in a process allowed 20,000 descriptors.
        let budget = ConnectionBudget.fit(lineLimit: 20_000, httpLimit: 20_000, reserve: 83, available: 20_000)
        #expect(budget.isLowered)
        #expect(budget.total == 20_000 - 83)
        // Either kind may take all but a tenth of the pool: 10,000 spectators on the line protocol still fit.
        #expect(budget.line == 19_917 - 1_991 && budget.http == 19_917 - 1_991)
        #expect(budget.line >= 10_000)
    }

    @Test func aSmallLimitKeepsItsValueAndTheOtherMayUseTheRest() {
        #expect(ConnectionBudget.fit(lineLimit: 30_000, httpLimit: 500, reserve: 64, available: 4_064)
                == ConnectionBudget(line: 3_600, http: 500, total: 4_000))
        #expect(ConnectionBudget.fit(lineLimit: 3, httpLimit: 20_000, reserve: 67, available: 20_000)
                == ConnectionBudget(line: 3, http: 19_930, total: 19_933))
    }

    @Test func withHTTPOffTheLineProtocolTakesEverything() {
        let budget = ConnectionBudget.fit(lineLimit: 20_000, httpLimit: 0, reserve: 64, available: 1_024)
        #expect(budget == ConnectionBudget(line: 960, http: 0, total: 960))
    }

    @Test func aReserveAsLargeAsTheLimitLeavesNothing() {
        #expect(ConnectionBudget.fit(lineLimit: 10, httpLimit: 10, reserve: 64, available: 64)
                == ConnectionBudget(line: 0, http: 0, total: 0))
        #expect(ConnectionBudget.fit(lineLimit: 10, httpLimit: 10, reserve: 100, available: 64)
                == ConnectionBudget(line: 0, http: 0, total: 0))
    }

    @Test func noFittedLimitIsAboveTheOneAskedForOrThePool() {
        for (line, http) in [(1, 1_000_000), (999_999, 1), (3, 7), (0, 5)] {
            for available in [0, 1, 2, 10, 65, 100, 1_000] {
                let budget = ConnectionBudget.fit(lineLimit: line, httpLimit: http, reserve: 64, available: available)
                #expect(budget.line <= line && budget.http <= http)
                #expect(budget.line >= 0 && budget.http >= 0)
                if let total = budget.total {
                    #expect(total == max(0, available - 64) && budget.line <= total && budget.http <= total)
                }
            }
        }
    }

    @Test func limitsNearIntMaxDoNotTrap() {
        let budget = ConnectionBudget.fit(lineLimit: .max, httpLimit: .max, reserve: 64, available: 1_064)
        #expect(budget == ConnectionBudget(line: 900, http: 900, total: 1_000))
    }
}
