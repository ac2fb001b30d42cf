import Broadcaster
import Foundation
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// The SVG and GeoJSON exports draw what the run page draws: the same points (the measured track of
/// `/api/runs/ID`, not the raw fixes) in the same colours (PaceColours over those points, as `common.js`).
@Suite(.mayBlock) struct ExportColourTests {
    /// `loc:` lines of a steady 3 m/s run, a fix a second, along a gently bending street, under a phone's
    /// correlated GPS noise (4 m per axis, drifting over about ten seconds).
    static func noisySteadyRun(seconds: Int, seed: UInt64, start: Double) -> [String] {
        var random = SeededRandom(seed: seed)
        var noise = CorrelatedGPSNoise(sigma: 4, correlation: 0.9, random: &random)
        let metresPerDegreeNorth = 111_229.0, metresPerDegreeEast = 111_229.0 * cos(51.5 * .pi / 180)
        var east = 0.0, north = 0.0
        return (0..<seconds).map { second in
            let error = noise.next(&random)
            let latitude = 51.5 + (north + error.north) / metresPerDegreeNorth
            let longitude = -0.12 + (east + error.east) / metresPerDegreeEast
            let heading = 0.8 * sin(Double(second) / 90)
            east += 3 * sin(heading)
            north += 3 * cos(heading)
            return "loc:\(String(format: "%.7f", latitude)),\(String(format: "%.7f", longitude)),6,\(start + Double(second))"
        }
    }

    /// Each drawn segment's stroke, in order: a polyline of n points draws n - 1 segments.
    static func svgSegmentColours(_ svg: String) -> [String] {
        svg.split(separator: "\n").filter { $0.contains("<polyline") }.flatMap { line -> [String] in
            func attribute(_ name: String) -> Substring {
                guard let range = line.range(of: "\(name)=\"") else { return "" }
                return line[range.upperBound...].prefix { $0 != "\"" }
            }
            let points = attribute("points").split(separator: " ").count
            return Array(repeating: String(attribute("stroke")), count: max(points - 1, 0))
        }
    }

    @Test func aSteadyNoisyRunIsExportedAsThePageDrawsIt() async throws {
        try await onItsOwnThread {
            try withServer(store: MemoryRunStore()) { server in
                let (ann, _) = try connectRunner("ann", to: server)
                for line in Self.noisySteadyRun(seconds: 600, seed: 24, start: Date().timeIntervalSince1970 - 1) {
                    try ann.send(line)
                }
                try ann.send("stop:")
                let end = try RunEndedEvent(event: Event.parse(ann.expect("end:ann", timeout: 20)))
                #expect(end.saved && end.filtered.isEmpty, "every fix accepted: \(end.line)")
                let client = try HTTPTestClient(port: try #require(server.httpPort))

                // What the page draws: the points of /api/runs/ID, coloured by the rule over their dist and time.
                let run = try JSONSerialization.jsonObject(with: Data(client.get("/api/runs/\(end.runID)").body)) as? [String: Any]
                let points = try #require(run?["points"] as? [[Double]])
                #expect(points.count == 600)
                let page = PaceColours.colours(distances: points.map { $0[2] }, times: points.map { $0[3] })

                let geoJSON = try JSONSerialization.jsonObject(with: Data(client.get("/runs/\(end.runID).geojson").body))
                let features = try #require((geoJSON as? [String: Any])?["features"] as? [[String: Any]])
                let route = features.filter { ($0["properties"] as? [String: Any])?["kind"] as? String == "route" }
                let strokes = route.map { ($0["properties"] as? [String: Any])?["stroke"] as? String ?? "" }
                #expect(route.count == points.count - 1, "one segment between each two of the page's points")
                // The same points: each segment joins two consecutive points of the page's track.
                var placed = 0
                for (index, segment) in route.enumerated() where index + 1 < points.count {
                    let ends = (segment["geometry"] as? [String: Any])?["coordinates"] as? [[Double]] ?? []
                    let expected = [[points[index][1], points[index][0]], [points[index + 1][1], points[index + 1][0]]]
                    if ends.count == 2, zip(ends, expected).allSatisfy({ abs($0[0] - $1[0]) < 1e-6 && abs($0[1] - $1[1]) < 1e-6 }) {
                        placed += 1
                    }
                }
                #expect(placed == route.count, "\(placed) of \(route.count) segments on the page's points")

                let svg = Self.svgSegmentColours(try client.get("/runs/\(end.runID).svg").text)
                #expect(svg == strokes, "the SVG and the GeoJSON colour each segment alike")
                // The same colours as the page, but for rounding at a step's edge (the page reads centimetres).
                let same = zip(strokes, page.map(\.hex)).filter { $0 == $1 }.count
                #expect(same * 100 >= page.count * 99, "\(same) of \(page.count) segments coloured as on the page")

                // A steady run is not confetti: hardly a segment at the legend's "slow" red (its pace 10% or
                // more below the median). Drawn from the raw fixes, 30 of these 599 were.
                let red = strokes.filter { $0 == PaceColours.red.hex }.count
                #expect(red * 20 <= strokes.count, "\(red) of \(strokes.count) segments red")
            }
        }
    }
}
