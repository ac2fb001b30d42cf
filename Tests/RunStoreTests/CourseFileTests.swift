import Foundation
import RunCore
import Testing
@testable import RunStore

/// A course's GPX file as organisers publish it: a route or a track, named waypoints for the aid stations.
@Suite struct CourseFileTests {
    func read(_ body: String, namespace: String = "http://www.topografix.com/GPX/1/1") throws -> CourseFile {
        try CourseFile.read(Data("""
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="test" xmlns="\(namespace)">
            \(body)
            </gpx>
            """.utf8))
    }

    @Test func aRouteWithItsWaypointsInTheFilesOrder() throws {
        let file = try read("""
            <wpt lat="52.52" lon="13.40"><name>Aid 1</name></wpt>
            <wpt lat="52.53" lon="13.41"><name>Turn</name><sym>Flag</sym></wpt>
            <wpt lat="52.52" lon="13.40"><name>Aid 1</name></wpt>
            <wpt lat="52.54" lon="13.42"><desc>no name: not a course point</desc></wpt>
            <rte><name>Berlin</name>
              <rtept lat="52.51" lon="13.39"/><rtept lat="52.53" lon="13.41"/><rtept lat="52.50" lon="13.38"/>
            </rte>
            <trk><trkseg><trkpt lat="1" lon="1"/><trkpt lat="2" lon="2"/></trkseg></trk>
            """)
        #expect(file.source == .route && file.otherPaths == 1 && file.skipped == 1)
        #expect(file.path == [Coordinate(latitude: 52.51, longitude: 13.39), Coordinate(latitude: 52.53, longitude: 13.41),
                              Coordinate(latitude: 52.50, longitude: 13.38)])
        #expect(file.points.map(\.name) == ["Aid 1", "Turn", "Aid 1"], "an out-and-back's second pass stays")
        #expect(file.points[1].coordinate == Coordinate(latitude: 52.53, longitude: 13.41))
    }

    @Test func aTrackOfSeveralSegmentsWithoutTimesInGPX10() throws {
        let file = try read("""
            <trk><trkseg><trkpt lat="45.0" lon="7.0"><ele>200</ele></trkpt><trkpt lat="45.001" lon="7.0"/></trkseg>
            <trkseg><trkpt lat="45.002" lon="7.0"/><trkpt lat="91" lon="7.0"/><trkpt lat="x" lon="7.0"/></trkseg></trk>
            """, namespace: "http://www.topografix.com/GPX/1/0")
        #expect(file.source == .track && file.path.count == 3 && file.skipped == 2 && file.points.isEmpty)
    }

    @Test func whatIsNoCourseIsSaidSo() throws {
        #expect(throws: StoreError.invalidInput("no route (<rte>) or track (<trk>) with two points or more: a course needs its path")) {
            try read(#"<rte><rtept lat="1" lon="1"/></rte><wpt lat="1" lon="1"><name>A</name></wpt>"#)
        }
        let notGPX = #expect(throws: StoreError.self) { try CourseFile.read(Data("<kml/>".utf8)) }
        #expect(notGPX?.kind == .invalidInput && notGPX?.message.contains("not a GPX document") == true)
        let broken = #expect(throws: StoreError.self) { try CourseFile.read(Data("<gpx><rte>".utf8)) }
        #expect(broken?.kind == .invalidInput)
    }
}
