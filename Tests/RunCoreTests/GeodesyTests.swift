import Foundation
import Testing
@testable import RunCore

/// One line of the GeographicLib fixture.
struct GeodesicPair {
    var category: String
    var from: Coordinate
    var to: Coordinate
    var reference: Double
}

/// Reads Fixtures/geodesic-pairs.txt (made by tools/make-geodesic-fixture.py).
func loadGeodesicPairs() throws -> [GeodesicPair] {
    let url = try #require(Bundle.module.url(forResource: "Fixtures/geodesic-pairs", withExtension: "txt"))
    let text = try String(contentsOf: url, encoding: .utf8)
    return text.split(separator: "\n").compactMap { line in
        guard !line.hasPrefix("#") else { return nil }
        let f = line.split(separator: " ")
        guard f.count == 6, let a = Double(f[1]), let b = Double(f[2]), let c = Double(f[3]), let d = Double(f[4]),
              let s = Double(f[5]) else { return nil }
        return GeodesicPair(category: String(f[0]), from: Coordinate(latitude: a, longitude: b),
                            to: Coordinate(latitude: c, longitude: d), reference: s)
    }
}

@Suite("Geodesy")
struct GeodesyTests {
    @Test("every fixture pair agrees with GeographicLib within 1 mm")
    func agreesWithGeographicLib() throws {
        let pairs = try loadGeodesicPairs()
        #expect(pairs.count >= 1000)
        var worst = 0.0
        for pair in pairs {
            let d = Geodesy.distance(from: pair.from, to: pair.to)
            let error = abs(d - pair.reference)
            worst = max(worst, error)
            #expect(error < 0.001, "\(pair.category) \(pair.from) → \(pair.to): \(d) vs \(pair.reference)")
            let back = Geodesy.distance(from: pair.to, to: pair.from)
            #expect(abs(back - pair.reference) < 0.001, "reverse of \(pair.category) \(pair.from) → \(pair.to)")
        }
        print("geodesic fixture: \(pairs.count) pairs, worst error \(worst * 1000) mm")
    }

    @Test("the fixture covers every edge category")
    func fixtureCoversEdges() throws {
        let categories = Set(try loadGeodesicPairs().map(\.category))
        for needed in ["equator", "north-pole", "south-pole", "antimeridian", "coincident", "identical", "hundred-km"] {
            #expect(categories.contains(needed), "missing \(needed)")
        }
    }

    @Test("nearly antipodal points fall back without NaN")
    func antipodalFallback() {
        let d = Geodesy.distance(from: Coordinate(latitude: 0, longitude: 0), to: Coordinate(latitude: 0.5, longitude: 179.7))
        #expect(d.isFinite)
        #expect(abs(d - 19_944_127.421) < 50_000)
    }

    @Test("the short-distance approximation matches the geodesic over GPS-segment lengths")
    func shortDistanceMatches() throws {
        for pair in try loadGeodesicPairs() where pair.reference < 100 && abs(pair.from.latitude) < 89.9 {
            #expect(abs(Geodesy.shortDistance(from: pair.from, to: pair.to) - pair.reference) < 0.001)
        }
    }
}

@Suite("Segment meter")
struct SegmentMeterTests {
    @Test("the tracker's fast segment measure agrees with GeographicLib on short pairs")
    func agreesOnShortPairs() throws {
        var meter = SegmentMeter()
        var checked = 0
        for pair in try loadGeodesicPairs() where pair.reference < 500 && abs(pair.from.latitude) < 89.5 {
            #expect(abs(meter.distance(from: pair.from, to: pair.to) - pair.reference) < 0.001,
                    "\(pair.category) \(pair.from) → \(pair.to)")
            checked += 1
        }
        #expect(checked > 300)
    }

    @Test("moving the reference latitude gradually stays exact along a long north-south run")
    func gradualDrift() {
        var meter = SegmentMeter()
        for step in 0..<2000 {
            let a = Coordinate(latitude: 40 + Double(step) * 0.00005, longitude: 3)
            let b = Coordinate(latitude: a.latitude + 0.00003, longitude: 3.00004)
            #expect(abs(meter.distance(from: a, to: b) - Geodesy.distance(from: a, to: b)) < 0.0001)
        }
    }
}
