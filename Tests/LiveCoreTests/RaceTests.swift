@testable import LiveCore
import Foundation
import RunCore
import RunStore
import MoonRunnerTestSupport
import Testing
import Wire

/// Goals, predicted finishes, coach alerts and the leaderboard, through the hub without sockets; the clock is
/// the fixes' own timestamps and the hub's `now`, both made up.
@Suite(.mayBlock) struct RaceTests {
    let output = RecordingOutput()
    let store = MemoryRunStore()
    let ann = ConnectionID(1), spectator = ConnectionID(2), coach = ConnectionID(3), bob = ConnectionID(4)
    let plainCoach = ConnectionID(5)
    let start = 1_700_000_000.0

    func hub(_ configure: (inout ServerConfiguration) -> Void = { _ in }) -> HubDriver {
        var configuration = ServerConfiguration()
        configure(&configuration)
        let hub = HubDriver(configuration: configuration, store: store, output: output)
        for id in [ann, spectator, coach, bob, plainCoach] { hub.connected(id, now: start) }
        return hub
    }

    /// A runner going north at `speeds[i]` m/s during second i (one fix a second).
    struct Course {
        var north = 0.0
        var second = 0
        let start: Double

        mutating func next(_ speed: Double) -> Command {
            north += speed
            second += 1
            return .location(LocationCommand(latitude: 51.5 + north / 111_229, longitude: -0.12, accuracy: 5,
                                             timestamp: start + Double(second),
                                             timestampText: String(Int(start) + second)))
        }
    }

    func lines(_ id: ConnectionID, _ kind: String) -> [String] {
        output.lines.filter { $0.0 == id && $0.1.hasPrefix(kind + ":") }.map(\.1)
    }

    func run(_ hub: HubDriver, _ id: ConnectionID, _ course: inout Course, seconds: Int, speed: Double) {
        for _ in 0..<seconds {
            let fix = course.next(speed)
            hub.received(fix, from: id, now: start + Double(course.second))
        }
    }

    @Test func aGoalPutsThePredictedFinishOnEveryPace() throws {
        let hub = hub()
        hub.received(.watch(.runner("ann")), from: spectator, now: start)
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        hub.received(.goal(GoalCommand(distance: 1_000)), from: ann, now: start)
        #expect(lines(ann, "ok").last == "ok:goal dist=1000.00 target=- pace=- margin=-")
        var course = Course(start: start)
        run(hub, ann, &course, seconds: 150, speed: 3)
        let paces = try lines(spectator, "pace").map { try PaceEvent(line: $0) }
        #expect(paces.count == 150 && paces.allSatisfy { $0.forecast != nil })
        // Nothing to predict from in the first 200 m; then Riegel blended with the current pace.
        #expect(paces.filter { $0.distance < FinishPrediction.minimumDistance }.allSatisfy { $0.forecast?.finish == nil })
        let last = try #require(paces.last)
        let finish = try #require(last.forecast?.finish)
        let expected = try #require(FinishPrediction.totalTime(toCover: 1_000, distance: last.distance,
                                                               elapsed: last.elapsed, moving: last.moving,
                                                               currentPace: last.current))
        #expect(abs(finish - expected) < 1, "\(last.line)")
        // 3 m/s: about 333 s for the kilometre, a little more by Riegel.
        #expect((330...360).contains(finish), "\(last.line)")
        let eta = try #require(last.forecast?.eta)
        #expect(abs(eta - (Double(last.timestamp)! + finish - last.elapsed)) <= 1)
        #expect(last.forecast?.nextETA != nil, "the next badge has a predicted time too")
        // Cleared: paces carry no prediction.
        hub.received(.goal(nil), from: ann, now: start + 151)
        #expect(lines(ann, "ok").last == "ok:goal cleared=yes")
        run(hub, ann, &course, seconds: 1, speed: 3)
        #expect(try PaceEvent(line: try #require(lines(spectator, "pace").last)).forecast == nil)
    }

    @Test func coachesAreAlertedAfterAMinuteOffPaceAndWhenBackOnIt() throws {
        let hub = hub()
        hub.received(.watch(.runner("ann")), from: spectator, now: start)
        hub.received(.coach(.runner("ann")), from: coach, now: start)
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        // 5 km in 1000 s: 200 s/km, on pace at 5 m/s; the margin 5% (190–210 s/km).
        hub.received(.goal(GoalCommand(distance: 5_000, targetTime: 1_000)), from: ann, now: start)
        #expect(lines(ann, "ok").last == "ok:goal dist=5000.00 target=1000.0 pace=200.0 margin=5.0")
        var course = Course(start: start)
        run(hub, ann, &course, seconds: 60, speed: 5)
        #expect(lines(coach, "alert").isEmpty, "on pace")
        // Slowing to 4 m/s (250 s/km): off pace once the current pace has been more than 5% off for 60 s.
        run(hub, ann, &course, seconds: 150, speed: 4)
        let offPace = try lines(coach, "alert").map { try AlertEvent(line: $0) }
        #expect(offPace.map(\.alert) == ["off_pace"], "\(offPace)")
        let paces = try lines(spectator, "pace").map { try PaceEvent(line: $0) }
        let firstOff = try #require(paces.first { ($0.current ?? 0) > 210 })
        let alert = try #require(offPace.first)
        #expect(abs(alert.elapsed - (firstOff.elapsed + 60)) <= 1, "raised 60 s after the pace went off: \(alert.line)")
        #expect(alert.target == 200 && (alert.off ?? 0) > 5 && (alert.pace ?? 0) > 210)
        // Back to 5 m/s: back on pace once the current pace has been within the margin for 60 s too.
        run(hub, ann, &course, seconds: 60, speed: 5)
        #expect(try lines(coach, "alert").map { try AlertEvent(line: $0).alert } == ["off_pace"], "not yet")
        run(hub, ann, &course, seconds: 60, speed: 5)
        let alerts = try lines(coach, "alert").map { try AlertEvent(line: $0) }
        #expect(alerts.map(\.alert) == ["off_pace", "back_on_pace"])
        let later = try lines(spectator, "pace").map { try PaceEvent(line: $0) }.filter { $0.elapsed > alert.elapsed }
        let firstBack = try #require(later.first { ($0.current ?? .infinity) <= 210 })
        let back = try #require(alerts.last)
        #expect(abs(back.elapsed - (firstBack.elapsed + 60)) <= 1, "60 s after the pace came back: \(back.line)")
        #expect(lines(spectator, "alert").isEmpty && lines(ann, "alert").isEmpty, "alerts are for coaches")
    }

    @Test func aCoachWithAnIntervalGetsACheckpointAtEachMultiple() throws {
        let hub = hub()
        hub.received(.coach(.runner("ann"), every: 100), from: coach, now: start)
        #expect(lines(coach, "ok").last == "ok:coach target=ann every=100")
        hub.received(.coach(.runner("ann")), from: plainCoach, now: start)
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        var course = Course(start: start)
        run(hub, ann, &course, seconds: 125, speed: 4)
        let checkpoints = try lines(coach, "alert").map { try AlertEvent(line: $0) }
        let paces = try lines(ann, "pace").map { try PaceEvent(line: $0) }
        let distance = try #require(paces.last?.distance)
        #expect(checkpoints.map(\.distance) == stride(from: 100.0, through: distance, by: 100).map { $0 })
        #expect(checkpoints.allSatisfy { $0.alert == "checkpoint" })
        // Each at the time the run's distance passed it, and the stretch's pace about 250 s/km.
        for alert in checkpoints {
            let after = try #require(paces.first { $0.distance >= alert.distance })
            #expect(alert.elapsed <= after.elapsed && alert.elapsed > after.elapsed - 1.01, "\(alert.line)")
        }
        #expect(checkpoints.dropFirst().allSatisfy { abs(($0.pace ?? 0) - 250) < 10 }, "\(checkpoints.map(\.line))")
        #expect(lines(plainCoach, "alert").isEmpty, "no interval, no checkpoints")
        // Joining mid-run: checkpoints from the next one on, the first without a pace (its stretch began unseen).
        hub.received(.coach(.everyone, every: 200), from: plainCoach, now: start + 126)
        run(hub, ann, &course, seconds: 60, speed: 4)
        let late = try lines(plainCoach, "alert").map { try AlertEvent(line: $0) }
        #expect(late.first?.distance == 600 && late.first?.pace == nil, "\(late.map(\.line))")
        // unwatch: ends them.
        hub.received(.unwatch(.runner("ann")), from: coach, now: start + 200)
        let count = lines(coach, "alert").count
        run(hub, ann, &course, seconds: 60, speed: 4)
        #expect(lines(coach, "alert").count == count)
    }

    @Test func theLeaderboardRanksLiveRunsAndWatchersSeeEveryChange() throws {
        let hub = hub()
        hub.received(.watch(.everyone), from: spectator, now: start)
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        hub.received(.identify(name: "bob", key: nil), from: bob, now: start)
        hub.received(.goal(GoalCommand(distance: 42_195)), from: bob, now: start)
        var annCourse = Course(start: start), bobCourse = Course(start: start)
        // ann leads at first, bob (faster) passes her.
        for second in 0..<120 {
            hub.received(annCourse.next(3), from: ann, now: start + Double(second))
            hub.received(bobCourse.next(second < 10 ? 1 : 4), from: bob, now: start + Double(second))
            hub.tick(now: start + Double(second) + 0.5)
        }
        // Each change once, at the tick after it: both join, then bob passes ann (once: no swap back).
        let ranks = try lines(spectator, "rank").map { try RankEvent(line: $0) }
        #expect(ranks.map { "\($0.runner) \($0.previous.map(String.init) ?? "-")→\($0.standing.position)" }
            == ["ann -→1", "bob -→2", "bob 2→1", "ann 1→2"], "\(ranks.map(\.line))")
        // A late spectator of everyone gets the board as it stands.
        hub.received(.watch(.everyone), from: plainCoach, now: start + 121)
        let board = try lines(plainCoach, "rank").map { try RankEvent(line: $0) }
        #expect(board.map { "\($0.runner) \($0.previous ?? 0)→\($0.standing.position)" } == ["bob 1→1", "ann 2→2"])
        hub.received(.leaders(goal: nil), from: coach, now: start + 121)
        let answer = lines(coach, "leader").compactMap { try? LeaderEvent(line: $0) }
        #expect(answer.map(\.runner) == ["bob", "ann"] && answer.map(\.standing.position) == [1, 2])
        let gap = answer[0].standing.distance - answer[1].standing.distance
        #expect(abs(answer[1].standing.gap - gap) < 0.01 && (answer[1].standing.gapTime ?? 0) > 0)
        #expect(lines(coach, "done").last == "done:leaders count=2 more=no")
        hub.received(.leaders(goal: 42_195), from: coach, now: start + 121)
        #expect(lines(coach, "done").last == "done:leaders count=1 more=no")
        // bob ends: ann moves up.
        hub.received(.stop(save: true), from: bob, now: start + 122)
        hub.tick(now: start + 123)
        let last = try RankEvent(line: try #require(lines(spectator, "rank").last))
        #expect(last.runner == "ann" && last.previous == 2 && last.standing.position == 1 && last.standing.gap == 0)
        hub.received(.leaders(goal: nil), from: coach, now: start + 123)
        #expect(lines(coach, "done").last == "done:leaders count=1 more=no")
    }

    @Test func leadersOfAGoalFindItAsOkGoalShowedIt() throws {
        let hub = hub()
        hub.received(.identify(name: "ann", key: nil), from: ann, now: start)
        hub.received(.goal(GoalCommand(distance: 100.004)), from: ann, now: start)
        #expect(lines(ann, "ok").last?.contains("dist=100.00") == true)
        var course = Course(start: start)
        run(hub, ann, &course, seconds: 20, speed: 3)
        // The goal as shown, or as typed: the same goal.
        for asked in [100, 100.004] {
            hub.received(.leaders(goal: asked), from: coach, now: start + 21)
            #expect(lines(coach, "done").last == "done:leaders count=1 more=no", "leaders:\(asked)")
        }
    }

    @Test func goalNeedsTheRunnersOwnConnection() {
        let hub = hub()
        hub.received(.goal(GoalCommand(distance: 1_000)), from: spectator, now: start)
        #expect(lines(spectator, "err").last?.hasPrefix("err:not_identified") == true)
    }
}
