@testable import LiveCore
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// A runner on a course, decided by the hub without sockets: the reply to `course:`, where along the course
/// every pace says the runner is, `point:` as the aid station is passed, and coaches told of a detour.
@Suite(.mayBlock) struct CourseHubTests {
    let output = RecordingOutput()
    let store = MemoryRunStore()
    let runner = ConnectionID(1), spectator = ConnectionID(2), coach = ConnectionID(3)
    let start = 1_700_000_000.0
    static let metresPerDegree = 111_229.0

    /// 1 km due north of Regent's Park and back, its aid station passed each way.
    static func outAndBack() throws -> Course {
        let at = { (north: Double, east: Double) in
            Coordinate(latitude: 51.5 + north / metresPerDegree, longitude: -0.12 + east / (metresPerDegree * 0.6225))
        }
        return try Course(name: "park", path: [at(0, 0), at(1000, 0), at(0, 7)],
                          waypoints: [("Aid 1", at(333, 0)), ("Turn", at(990, 0)), ("Aid 1", at(333, 0))])
    }

    func hub() throws -> HubDriver {
        let hub = HubDriver(configuration: ServerConfiguration(), store: store, output: output)
        for id in [runner, spectator, coach] { hub.connected(id, now: start) }
        hub.learnedCourse(try Self.outAndBack(), named: "park")
        hub.received(.watch(.runner("ann")), from: spectator, now: start)
        hub.received(.coach(.runner("ann")), from: coach, now: start)
        hub.received(.identify(name: "ann", key: nil), from: runner, now: start)
        return hub
    }

    /// A fix `north` metres up the course (`east` metres off it) at `second` seconds.
    func fix(north: Double, east: Double = 0, at second: Int) -> Command {
        .location(LocationCommand(latitude: 51.5 + north / Self.metresPerDegree,
                                  longitude: -0.12 + east / (Self.metresPerDegree * 0.6225), accuracy: 5,
                                  timestamp: start + Double(second), timestampText: String(Int(start) + second)))
    }

    func lines(to id: ConnectionID, _ kind: String) -> [String] {
        output.lines.filter { $0.0 == id && $0.1.hasPrefix(kind + ":") }.map(\.1)
    }

    @Test func theReplySaysTheCourseAndAnUnknownOneIsNotFound() throws {
        let hub = try hub()
        hub.received(.course(name: "nowhere"), from: runner, now: start)
        hub.received(.course(name: "park"), from: runner, now: start)
        hub.received(.course(name: nil), from: runner, now: start)
        hub.received(.course(name: "park"), from: spectator, now: start)
        let replies = output.lines.filter { $0.1.hasPrefix("ok:course") || $0.1.hasPrefix("err:") }.map(\.1)
        try #require(replies.count == 4, "\(replies)")
        #expect(replies[0].hasPrefix("err:not_found \"no course nowhere"))
        let length = try Self.outAndBack().length
        #expect(replies[1] == "ok:course name=park dist=\(String(format: "%.2f", length)) points=3")
        #expect(replies[2] == "ok:course cleared=yes")
        #expect(replies[3].hasPrefix("err:not_identified"), "a spectator has no course of its own")
    }

    @Test func paceSaysWhereAlongAndTheAidStationIsAPoint() throws {
        let hub = try hub()
        hub.received(.course(name: "park"), from: runner, now: start)
        for second in 0...200 { hub.received(fix(north: 3.3 * Double(second), at: second), from: runner, now: start + Double(second)) }
        let paces = try lines(to: spectator, "pace").map { try PaceEvent(line: $0) }
        let last = try #require(paces.last)
        let course = try #require(last.course, "\(last)")
        let length = try Self.outAndBack().length
        #expect(abs(course.along - 660) < 15 && abs(course.togo - (length - course.along)) < 0.01, "\(course)")
        #expect(course.nextPoint == "Turn" && course.nextPointETA != nil)
        // Every point ahead, from the next: Turn at 990 m and Aid 1 again on the way back, 990 + 657 m.
        #expect(course.pointETAs.count == 2 && course.pointETAs.first == course.nextPointETA, "\(course.pointETAs)")
        if course.pointETAs.count == 2, let turn = course.pointETAs[0], let back = course.pointETAs[1] {
            #expect(abs((back - turn) - 657 / 3.3) < 15, "the second point's ETA is the first's plus 657 m at 3.3 m/s")
        }
        #expect(last.forecast?.eta != nil && last.forecast?.finish != nil, "the finish predicted along the course")
        let points = try lines(to: spectator, "point").map { try PointEvent(line: $0) }
        #expect(points.count == 1 && points.first?.name == "Aid 1", "\(points)")
        if let point = points.first {
            #expect(abs(point.elapsed - 333 / 3.3) < 5 && abs(point.timestamp - (start + point.elapsed)) <= 0.51, "ts is whole seconds")
        }
        #expect(lines(to: coach, "point").count == 1, "coaches hear of points too")
    }

    @Test func aDetourAlertsCoachesAndTheReturnToo() throws {
        let hub = try hub()
        hub.received(.course(name: "park"), from: runner, now: start)
        var second = 0
        func run(north: Double, east: Double) {
            hub.received(fix(north: north, east: east, at: second), from: runner, now: start + Double(second))
            second += 1
        }
        for step in 0..<60 { run(north: 3.3 * Double(step), east: 0) }
        for step in 1...60 { run(north: 198, east: 3.3 * Double(step)) }  // 200 m east, off the road
        for step in (0..<60).reversed() { run(north: 198, east: 3.3 * Double(step)) }
        for step in 0..<40 { run(north: 198 + 3.3 * Double(step), east: 0) }
        let alerts = try lines(to: coach, "alert").map { try AlertEvent(line: $0) }
        #expect(alerts.map(\.alert) == ["off_course", "back_on_course"], "\(alerts)")
        #expect((alerts.first?.off ?? 0) > 50)
        #expect(lines(to: spectator, "alert").isEmpty, "alerts are the coaches'")
    }

    /// `leaders:course=NAME`: the runners on the course ranked by how far along it, the gap in metres and in
    /// seconds at the leader's pace; a runner on no course is not on the board.
    @Test func theCourseBoardRanksByAlong() throws {
        let hub = try hub()
        let bob = ConnectionID(4), cat = ConnectionID(5), asker = ConnectionID(6)
        for id in [bob, cat, asker] { hub.connected(id, now: start) }
        hub.received(.identify(name: "bob", key: nil), from: bob, now: start)
        hub.received(.identify(name: "cat", key: nil), from: cat, now: start)
        hub.received(.course(name: "park"), from: runner, now: start)
        hub.received(.course(name: "park"), from: bob, now: start)
        for second in 0...120 {
            let now = start + Double(second)
            hub.received(fix(north: 3.3 * Double(second), at: second), from: runner, now: now)
            hub.received(fix(north: 3.0 * Double(second), at: second), from: bob, now: now)
            hub.received(fix(north: 4.0 * Double(second), at: second), from: cat, now: now)
        }
        hub.received(.courseLeaders("park"), from: asker, now: start + 121)
        let leaders = try lines(to: asker, "leader").map { try LeaderEvent(line: $0) }
        try #require(leaders.map(\.runner) == ["ann", "bob"], "cat follows no course")
        let gap = leaders[1].standing.gap
        #expect(abs(leaders[0].standing.distance - 396) < 15 && abs(gap - 36) < 10, "\(leaders.map(\.line))")
        #expect(abs((leaders[1].standing.gapTime ?? 0) - gap / 3.3) < 3, "the gap at the leader's pace")
        #expect(lines(to: asker, "done") == ["done:leaders count=2 more=no"])
    }

    /// `s` metres along the park's out-and-back (north 1000 m, then back to 7 m east of the start).
    func fix(along s: Double, at second: Int) -> Command {
        s <= 1000 ? fix(north: s, at: second) : fix(north: max(0, 2000 - s), east: 7 * min(s - 1000, 1000) / 1000, at: second)
    }

    /// Both at the finish: the one there first leads (as `leaders:` breaks ties by time), whatever the names.
    @Test func atTheFinishTheFirstThereLeads() throws {
        let hub = try hub()
        let bob = ConnectionID(4), asker = ConnectionID(5)
        for id in [bob, asker] { hub.connected(id, now: start) }
        hub.received(.identify(name: "bob", key: nil), from: bob, now: start)
        for id in [runner, bob] { hub.received(.course(name: "park"), from: id, now: start) }
        let length = try Self.outAndBack().length
        for second in 0...800 {
            let now = start + Double(second)
            hub.received(fix(along: min(3.0 * Double(second), length), at: second), from: runner, now: now)
            hub.received(fix(along: min(3.5 * Double(second), length), at: second), from: bob, now: now)
        }
        hub.received(.courseLeaders("park"), from: asker, now: start + 801)
        let leaders = try lines(to: asker, "leader").map { try LeaderEvent(line: $0) }
        #expect(leaders.map(\.runner) == ["bob", "ann"], "\(leaders.map(\.line))")
        #expect(leaders.allSatisfy { abs($0.standing.distance - length) < 0.01 }, "both finished")
        let paces = try lines(to: spectator, "pace").map { try PaceEvent(line: $0) }
        let finished = try #require(paces.last?.forecast?.finish, "after the finish, the finish itself")
        #expect(abs(finished - length / 3.0) < 15, "\(finished) s")
    }

    /// `course:off` and the same course again in one run: it goes on where it was, and a point passed before
    /// is not passed again.
    @Test func leavingACourseAndFollowingItAgainGoesOn() throws {
        let hub = try hub()
        hub.received(.course(name: "park"), from: runner, now: start)
        for second in 0...250 {
            if second == 150 { hub.received(.course(name: nil), from: runner, now: start + 150) }
            if second == 171 { hub.received(.course(name: "park"), from: runner, now: start + 171) }
            hub.received(fix(north: 3.3 * Double(second), at: second), from: runner, now: start + Double(second))
        }
        let points = try lines(to: spectator, "point").map { try PointEvent(line: $0) }
        #expect(points.map(\.name) == ["Aid 1"], "\(points)")
        let last = try #require(try lines(to: spectator, "pace").last.map { try PaceEvent(line: $0) })
        let along = try #require(last.course?.along)
        #expect(abs(along - 3.3 * 250) < 25, "\(along) m: where the runner is, not a restart")
    }
}

/// What another loop or node knows of a runner on a course comes from its relayed events only: the points it
/// passed and when (`point:`), and every point ahead's ETA (`point_etas=`).
@Suite(.mayBlock) struct RemoteCourseProgressTests {
    /// Records what the owner's hub relays, as the bus would carry it.
    final class RelayingOutput: TestHubOutput {
        var relayed: [RelayedEvent] = []
        func send(_ line: [UInt8], to connection: ConnectionID, as role: LineRole) {}
        func close(_ connection: ConnectionID, reason: String) {}
        func answerFromStore(to connection: ConnectionID,
                             _ read: @escaping @Sendable (any RunStore) throws(StoreError) -> [[UInt8]]) {}
        func errorSent(to connection: ConnectionID) {}
        func log(_ message: String) {}
        func relay(_ news: HubNews) { if case .event(let event) = news { relayed.append(event) } }
    }

    @Test func anotherNodeKnowsThePointsPassedAndTheETAsAhead() throws {
        let start = 1_700_000_000.0, runner = ConnectionID(1)
        let ownerOutput = RelayingOutput()
        let owner = HubDriver(configuration: ServerConfiguration(), store: MemoryRunStore(), output: ownerOutput)
        var sequence: UInt64 = 0
        owner.sharedSequence = { sequence += 1; return sequence }
        let elsewhere = HubDriver(configuration: ServerConfiguration(), store: MemoryRunStore(), output: RecordingOutput())
        for hub in [owner, elsewhere] { hub.learnedCourse(try CourseHubTests.outAndBack(), named: "park") }
        owner.connected(runner, now: start)
        owner.received(.identify(name: "ann", key: nil), from: runner, now: start)
        owner.received(.course(name: "park"), from: runner, now: start)
        let fixes = CourseHubTests()
        for second in 0...200 {
            owner.received(fixes.fix(north: 3.3 * Double(second), at: second), from: runner, now: start + Double(second))
        }
        for event in ownerOutput.relayed { elsewhere.receiveRelayed(event, now: start + 200) }

        let here = try #require(owner.courseProgress(of: "ann"))
        let there = try #require(elsewhere.courseProgress(of: "ann"), "the other node sees the runner on its course")
        #expect(there.points.map(\.name) == ["Aid 1", "Turn", "Aid 1"])
        let passed = try #require(here.points.first?.passed)
        #expect(there.points.first?.passed == passed.rounded(), "the passing time of Aid 1, as point: says it (whole seconds)")
        #expect(there.points.dropFirst().allSatisfy { $0.passed == nil })
        for (mine, theirs) in zip(here.points.dropFirst(), there.points.dropFirst()) {
            let eta = try #require(mine.eta)
            #expect(theirs.eta.map { abs($0 - eta) <= 0.5 } == true, "\(theirs.name): \(String(describing: theirs.eta)) vs \(eta)")
        }
        #expect(abs(there.along - here.along) < 0.01 && there.nextPoint == "Turn")
        #expect(!there.isOffCourse)

        // 200 m east of the course for a minute: off course there too (from the owner's relayed alert), then back.
        ownerOutput.relayed.removeAll()
        for second in 201...260 {
            owner.received(fixes.fix(north: 660, east: 200, at: second), from: runner, now: start + Double(second))
        }
        for event in ownerOutput.relayed { elsewhere.receiveRelayed(event, now: start + 260) }
        #expect(owner.courseProgress(of: "ann")?.isOffCourse == true)
        #expect(elsewhere.courseProgress(of: "ann")?.isOffCourse == true, "the other node sees the detour")
        ownerOutput.relayed.removeAll()
        for second in 261...300 {
            owner.received(fixes.fix(north: 660 + 3.3 * Double(second - 261), at: second), from: runner,
                           now: start + Double(second))
        }
        for event in ownerOutput.relayed { elsewhere.receiveRelayed(event, now: start + 300) }
        #expect(elsewhere.courseProgress(of: "ann")?.isOffCourse == false, "and the return")
    }
}
