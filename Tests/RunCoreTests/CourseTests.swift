import Foundation
import Testing
@testable import RunCore

/// Building a course: distances along it, where its named points go (the pass the file's order gives), and the
/// errors a bad file gets.
@Suite struct CourseTests {
    /// A coordinate `east`/`north` metres from the test origin.
    static func at(_ east: Double, _ north: Double) -> Coordinate { SyntheticRun.coordinate(east: east, north: north) }

    @Test func theTwelveKilometreCourseMeasuresAndPlacesItsPoints() throws {
        let course = try SyntheticCourse.twelveK()
        #expect(abs(course.length - 12_000) < 1, "\(course.length)")
        #expect(course.distances.first == 0 && course.distances.count == course.coordinates.count)
        #expect(zip(course.distances, course.distances.dropFirst()).allSatisfy { $0 < $1 })
        #expect(course.points.map(\.name) == SyntheticCourse.twelveKPoints.map(\.name))
        for (point, expected) in zip(course.points, SyntheticCourse.twelveKPoints) {
            // The same spot (the spur's aid station, the crossing) is placed on the pass the order says.
            #expect(abs(point.along - expected.along) < 1, "\(point.name): \(point.along), expected \(expected.along)")
        }
        #expect(course.points.map(\.index) == Array(0..<course.points.count))
    }

    @Test func coordinateAtAlongWalksThePath() throws {
        let course = try SyntheticCourse.twelveK()
        for (along, east, north) in [(0.0, 0.0, 0.0), (1234, 1234, 0), (2500, 2000, 500), (3500, 2000, 500),
                                     (9200, 2800, 0), (12_000, 4500, -1100), (20_000, 4500, -1100)] {
            let distance = Geodesy.distance(from: course.coordinate(at: along), to: Self.at(east, north))
            #expect(distance < 0.5, "\(along) m along is \(distance) m from \(east),\(north)")
        }
    }

    @Test func aMarkerBeforeAnOutAndBacksTurnGoesOnThePassItsOrderSays() throws {
        let path = SyntheticCourse.path([(0, 0), (0, 1000), (0, 0)])
        // 30 m before the turn, beside the road: both legs are as near; listed twice, once each way.
        let marker = Self.at(5, 970)
        let course = try Course(name: "spur", path: path, waypoints: [("Water", marker), ("Water again", marker)])
        #expect(abs(course.points[0].along - 970) < 1 && abs(course.points[1].along - 1030) < 1,
                "\(course.points.map(\.along))")
        // Listed once, it is the way out; a marker at the turn is the turn.
        let once = try Course(name: "spur", path: path, waypoints: [("Water", marker), ("Turn", Self.at(0, 1003))])
        #expect(abs(once.points[0].along - 970) < 1 && abs(once.points[1].along - 1000) < 1)
        // Listed again at one spot: the next pass, or the same place on a course that passes once.
        let twice = try Course(name: "spur", path: path, waypoints: [("A", Self.at(0, 500)), ("B", Self.at(2, 500))])
        #expect(abs(twice.points[0].along - 500) < 1 && abs(twice.points[1].along - 1500) < 1)
        let straight = try Course(name: "line", path: SyntheticCourse.path([(0, 0), (0, 1000)]),
                                  waypoints: [("Aid 3", Self.at(0, 500)), ("km 10", Self.at(3, 500))])
        #expect(abs(straight.points[0].along - 500) < 1 && abs(straight.points[1].along - 500) < 1)
    }

    /// An organiser's route is a few long segments: an out-and-back is two, its legs a few metres apart. The
    /// aid station listed again after the turn is the way back's pass, not "out of order".
    @Test func aRouteOfTwoLongSegmentsPassesItsAidStationOnEachLeg() throws {
        let path = [Self.at(0, 0), Self.at(0, 1000), Self.at(7, 0)]
        let aid = Self.at(0, 333)
        let course = try Course(name: "out", path: path, waypoints: [("Aid 1", aid), ("Turn", Self.at(0, 990)), ("Aid 1", aid)])
        let along = course.points.map(\.along)
        #expect(abs(along[0] - 333) < 1 && abs(along[1] - 990) < 1, "\(along)")
        #expect(abs(along[2] - (course.length - 333)) < 1, "the way back: \(along), of \(course.length)")
    }

    /// A track recorded every 3 m is searched as a few vertices a bend, within half a metre of the file's path,
    /// and its length is the file's.
    @Test func aDenseTrackIsThinnedWithinHalfAMetreAndKeepsItsLength() throws {
        let radius = 300.0
        let path = (0...2000).map { step -> Coordinate in
            let angle = Double(step) * 3 / radius
            return Self.at(radius * sin(angle), radius * (1 - cos(angle)))
        }
        var fileLength = 0.0
        for (a, b) in zip(path, path.dropFirst()) { fileLength += Geodesy.distance(from: a, to: b) }
        let course = try Course(name: "loops", path: path)
        #expect(course.coordinates.count < path.count / 5, "\(course.coordinates.count) of \(path.count)")
        #expect(abs(course.length - fileLength) < 0.01, "the distance along is the file's")
        for step in stride(from: 0, through: 2000, by: 7) {
            let along = Double(step) * 3 * fileLength / 6000
            let off = Geodesy.distance(from: course.coordinate(at: along), to: path[step])
            #expect(off < 0.6 + 0.01 * along / 1000, "\(off) m off at \(along) m")
        }
    }

    @Test func badFilesSayWhatIsWrong() {
        let path = SyntheticCourse.path([(0, 0), (1000, 0)])
        #expect(throws: CourseError.tooFewPoints(count: 1)) {
            try Course(name: "x", path: [Self.at(0, 0), Self.at(0, 0.1)])
        }
        #expect(throws: CourseError.tooFewPoints(count: 0)) { _ = try Course(name: "x", path: []) }
        #expect(throws: CourseError.invalidCoordinate(index: 1)) {
            _ = try Course(name: "x", path: [Self.at(0, 0), Coordinate(latitude: .nan, longitude: 0), Self.at(0, 500)])
        }
        do {
            _ = try Course(name: "x", path: [Self.at(0, 0), Self.at(50, 0)])
            Issue.record("a 50 m course was accepted")
        } catch {
            guard case .tooShort(let length, let minimum) = error else { Issue.record("\(error)"); return }
            #expect(abs(length - 50) < 0.1 && minimum == Course.minimumLength)
            #expect(error.description.contains("50 m long"))
        }
        do {
            _ = try Course(name: "x", path: path, waypoints: [("Aid", Self.at(500, 20)), ("Car park", Self.at(500, 400))])
            Issue.record("a waypoint 400 m off was accepted")
        } catch {
            guard case .waypointOffCourse(let name, let distance, _) = error else { Issue.record("\(error)"); return }
            #expect(name == "Car park" && abs(distance - 400) < 1)
            #expect(error.description.contains("\"Car park\" is 400 m from the course"))
        }
        #expect(throws: CourseError.waypointOutOfOrder(name: "Spur aid (out)", after: "Crossing")) {
            let points = SyntheticCourse.twelveKPoints
            _ = try Course(name: "x", path: SyntheticCourse.path(SyntheticCourse.twelveKCorners),
                       waypoints: [points[3], points[0]].map { ($0.name, Self.at($0.east, $0.north)) })
        }
    }

    @Test func thePaceModelAgainstValuesWorkedOutByHand() throws {
        // 6 km of 12 in 1800 s moving (0.3 s/m), 0.25 s/m recently: d = 0.5, d² = 0.25:
        // 0.75 · 0.3 + 0.25 · 0.25 = 0.2875 s/m.
        let pace = try #require(CoursePace.secondsPerMetre(along: 6000, length: 12_000, moving: 1800, recentPace: 0.25))
        #expect(abs(pace - 0.2875) < 1e-12)
        // A target of 0.28 s/m counts as 5% of the course (600 m) run at it: base (1800 + 168) / 6600 = 0.298182;
        // 0.75 · 0.298182 + 0.0625 = 0.286136.
        let targeted = try #require(CoursePace.secondsPerMetre(along: 6000, length: 12_000, moving: 1800,
                                                               recentPace: 0.25, targetPace: 0.28))
        #expect(abs(targeted - 0.286_136_36) < 1e-6)
        // Too early: nothing, or the target.
        #expect(CoursePace.secondsPerMetre(along: 150, length: 12_000, moving: 50, recentPace: 0.3) == nil)
        #expect(CoursePace.secondsPerMetre(along: 150, length: 12_000, moving: 50, recentPace: 0.3, targetPace: 0.28) == 0.28)
    }
}
