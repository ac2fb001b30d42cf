import Broadcaster
import Foundation
import MoonRunnerClient
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// Goals, alerts and the leaderboard through the client library, against the real server.
@Suite(.mayBlock) struct ClientRaceTests {
    @Test func aRunnersGoalReachesPacesAndACoachGetsCheckpointsAndTheLeaders() async throws {
        try await withServer { server in
            let runner = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            let coach = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            let everyone = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            defer { [runner, coach, everyone].forEach { $0.close() } }
            let coached = EventRecorder(coach)
            let watched = EventRecorder(everyone)
            let ran = EventRecorder(runner)
            try coach.coach("ann", every: 250)
            try everyone.watch(.everyone)
            try await coached.first("ok:coach") { if case .ok(let ok) = $0 { ok.what == "coach" } else { false } }
            try await watched.first("ok:watch") { if case .ok(let ok) = $0 { ok.what == "watch" } else { false } }
            #expect(throws: MoonRunnerClientError.self) { try coach.coach("ann", every: 10) }
            await #expect(throws: MoonRunnerClientError.self) { try await runner.setGoal(distance: 5_000) }

            try await runner.join(name: "ann")
            try await runner.setGoal(distance: 5_000, targetTime: 1_500)
            // 5 m/s for 160 s: 800 m, past three 250 m checkpoints.
            for fix in straightFixes(count: 160, speed: 5) { try runner.send(fix) }
            try await coached.first("the third checkpoint") {
                if case .alert(let alert) = $0 { alert.distance == 750 } else { false }
            }
            let checkpoints = coached.events.compactMap { if case .alert(let a) = $0, a.alert == "checkpoint" { a } else { nil } }
            #expect(checkpoints.map(\.distance) == [250, 500, 750])
            #expect(checkpoints.dropFirst().allSatisfy { abs(($0.pace ?? 0) - 200) < 10 }, "\(checkpoints.map(\.line))")
            let last = try await ran.first("a pace with a prediction") {
                if case .pace(let pace) = $0 { pace.forecast?.finish != nil } else { false }
            }
            guard case .pace(let pace) = last else { return }
            // The first prediction (~300 m in, 1000 s at this pace) still leans on the target's 1500 s.
            #expect((900...1_300).contains(pace.forecast?.finish ?? 0), "\(pace.line)")
            try await watched.first("ann on the board") {
                if case .rank(let rank) = $0 { rank.runner == "ann" && rank.standing.position == 1 } else { false }
            }
            let leaders = try await coach.leaders()
            #expect(leaders.map(\.runner) == ["ann"] && leaders.first?.standing.position == 1)
            #expect(try await coach.leaders(goal: 5_000).count == 1)
            #expect(try await coach.leaders(goal: 42_195).isEmpty)
            try await runner.clearGoal()
            _ = try await runner.stop()
            #expect(try await coach.leaders().isEmpty)
        }
    }

    /// A runner follows a course through the client; a spectator's typed events say where along it the runner
    /// is and when the aid station was passed. The course is in the store, as `moonrunner course add` left it:
    /// the server reads it at the first `course:` that names it.
    @Test func aRunnerFollowsACourseAndASpectatorSeesThePointPassed() async throws {
        let store = MemoryRunStore()
        let at = { (north: Double) in Coordinate(latitude: 51.5 + north / 111_229, longitude: -0.12) }
        store.submit(.course(StoredCourse(name: "park", path: [at(0), at(2000)],
                                          points: [NamedPlace(name: "Aid 1", coordinate: at(300))], created: 1)))
        try await withServer(store: store) { server in
            let runner = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            let spectator = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            defer { [runner, spectator].forEach { $0.close() } }
            let watched = EventRecorder(spectator)
            try spectator.watch(.runner("ann"))
            try await watched.first("ok:watch") { if case .ok(let ok) = $0 { ok.what == "watch" } else { false } }
            try await runner.join(name: "ann")
            await #expect(throws: MoonRunnerClientError.self) { try await runner.follow(course: "nowhere") }
            let followed = try await runner.follow(course: "park")
            #expect(abs(followed.length - 2000) < 1 && followed.points == 1)
            for fix in straightFixes(count: 150, speed: 3) { try runner.send(fix) }
            let passed = try await watched.first("Aid 1 passed") { if case .point = $0 { true } else { false } }
            guard case .point(let point) = passed else { return }
            #expect(point.runner == "ann" && point.name == "Aid 1" && abs(point.along - 300) < 1)
            let last = try await watched.first("a pace 400 m along") {
                if case .pace(let pace) = $0 { (pace.course?.along ?? 0) > 400 } else { false }
            }
            guard case .pace(let pace) = last, let course = pace.course else { return }
            #expect(abs(course.along + course.togo - 2000) < 1 && course.nextPoint == nil, "\(pace.line)")
            try await runner.leaveCourse()
            _ = try await runner.stop()
        }
    }
}
