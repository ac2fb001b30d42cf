import Foundation
import RunCore
import MoonRunnerTestSupport
import Testing
@testable import RunStore

/// A fixture file's bytes.
func fixture(_ name: String) throws -> Data {
    let url = try #require(Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Fixtures"))
    return try Data(contentsOf: url)
}

@Suite(.mayBlock) struct GPXImportTests {
    @Test func stravaRun() throws {
        let data = try fixture("strava-run-1.gpx")
        let tracks = try GPXImport.tracks(from: data)
        #expect(tracks.count == 1)
        let points = String(decoding: data, as: UTF8.self).components(separatedBy: "<trkpt ").count - 1
        #expect(tracks.first?.count == points)
        let first = try #require(tracks.first?.first)
        #expect(first == Fix(latitude: 53.8395390, longitude: -1.7758230, accuracy: 5, timestamp: 1_620_838_516,
                             altitude: 74.2))
        // The Garmin extension elements inside each point are ignored; times increase.
        let times = tracks[0].map(\.timestamp)
        #expect(times == times.sorted())
    }

    @Test func byteOrderMarkAndWaypointsOnly() throws {
        // The file starts with a UTF-8 BOM and has a waypoint but no track: no tracks, no error.
        #expect(try GPXImport.tracks(from: fixture("gpxpy-unicode_with_bom.gpx")).isEmpty)
    }

    @Test func emptySegmentIsSkipped() throws {
        let tracks = try GPXImport.tracks(from: fixture("gpxpy-track-with-empty-segment.gpx"))
        #expect(tracks.map(\.count) == [9])
        #expect(tracks[0].last?.timestamp == 1_373_131_662)
    }

    @Test func gpx10WithHDOPAndZonelessTime() throws {
        let tracks = try GPXImport.tracks(from: fixture("gpxpy-gpx1.0_with_all_fields.gpx"))
        // Route points and waypoints are not track points; the empty segment and empty track are skipped.
        #expect(tracks == [[Fix(latitude: 10.1, longitude: -20.2, accuracy: 505, timestamp: 1_357_041_604,
                                altitude: 11.1)]])
    }

    @Test func trackWithoutTimesIsAClearError() {
        let gpx = """
            <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>
            <trkpt lat="1" lon="2"><ele>3</ele></trkpt>
            </trkseg></trk></gpx>
            """
        let error = #expect(throws: StoreError.self) { try GPXImport.tracks(from: Data(gpx.utf8)) }
        #expect(error?.kind == .invalidInput)
        #expect(error?.description == "line 2: track point without a <time>; a run needs the time of its points")
    }

    @Test func aFileOverLibxml2sTenMegabyteLookupLimitIsRead() throws {
        // Handed over whole, libxml2 refused anything over 10 MB as "huge input" (error 1), and so a 12-hour run
        // at 1 Hz, or our own export of it, could not be imported.
        let point = #"<trkpt lat="51.5000000" lon="-0.1200000"><time>2024-06-01T07:00:00Z</time></trkpt>"# + "\n"
        let count = 140_000
        var gpx = #"<gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>"# + "\n"
        gpx.reserveCapacity(point.utf8.count * count + 100)
        for _ in 0..<count { gpx += point }
        gpx += "</trkseg></trk></gpx>\n"
        #expect(gpx.utf8.count > 11_000_000)
        let activities = try GPXImport.activities(from: Data(gpx.utf8))
        #expect(activities.map(\.pointCount) == [count])
    }

    @Test func aHugeNameIsCut() throws {
        let gpx = #"<gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1"><trk><name>"#
            + String(repeating: "B", count: 100_000)
            + #"</name><trkseg><trkpt lat="1" lon="2"><time>2024-06-01T07:00:00Z</time></trkpt></trkseg></trk></gpx>"#
        let activities = try GPXImport.activities(from: Data(gpx.utf8))
        #expect(activities.map { $0.name?.count } == [200])
    }

    @Test func aTrackWithoutTimesBesideRecordedOnesIsSkippedAndCounted() throws {
        // A planned route saved as a track next to two recorded ones: the recorded ones are imported.
        let gpx = """
            <gpx version="1.1" xmlns="http://www.topografix.com/GPX/1/1">
            <trk><trkseg><trkpt lat="1" lon="2"><time>2024-06-01T07:00:00Z</time></trkpt></trkseg></trk>
            <trk><trkseg><trkpt lat="1" lon="2"/><trkpt lat="1.1" lon="2"/><trkpt lat="91" lon="2"/></trkseg></trk>
            <trk><trkseg><trkpt lat="3" lon="4"><time>2024-06-02T07:00:00Z</time></trkpt></trkseg></trk>
            </gpx>
            """
        let activities = try GPXImport.activities(from: Data(gpx.utf8))
        #expect(activities.map(\.fixes.first?.latitude) == [1, 3])
        #expect(activities.map(\.pointsWithoutTime) == [0, 2] && activities.map(\.pointsWithoutPosition) == [0, 1])
    }

    @Test func prefixedNamespacesCommentsCDATAAndEntities() throws {
        let gpx = """
            <?xml version="1.0"?>
            <!DOCTYPE gpx>
            <g:gpx xmlns:g="http://www.topografix.com/GPX/1/1" xmlns:x="urn:x">
            <!-- a <trkpt> in a comment is not a point -->
            <g:trk><g:name>A &amp; B &#x1F3C3;</g:name><g:trkseg>
            <g:trkpt lat='51.5' lon="-0.1"><g:time><![CDATA[2020-01-01T00:00:00.5+01:00]]></g:time>
              <g:extensions><x:time>not a time</x:time><x:hdop>99</x:hdop></g:extensions><g:hdop>2</g:hdop></g:trkpt>
            <g:trkpt lat="51.6" lon="-0.2"/>
            </g:trkseg></g:trk></g:gpx>
            """
        // The second point has no time: it is skipped and counted, the rest imports.
        let activities = try GPXImport.activities(from: Data(gpx.utf8))
        #expect(activities.map(\.segments) == [[[Fix(latitude: 51.5, longitude: -0.1, accuracy: 10, timestamp: 1_577_833_200.5)]]])
        #expect(activities.first?.pointsWithoutTime == 1)
        #expect(activities.first?.name == "A & B \u{1F3C3}")
    }

    @Test(arguments: [
        ("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time></trkseg></trk></gpx>",
         "line 1: not well-formed XML (an end tag does not match its start tag)"),
        ("<gpx><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>yesterday</time></trkpt></trkseg></trk></gpx>",
         "line 1: cannot read the time \"yesterday\""),
        ("<gpx><trk>", "line 1: not well-formed XML (the document ends early, or has more after its root element)"),
        ("<kml></kml>", "line 1: not a GPX or TCX document (the root element is <kml>)"),
        ("<gpx>&nbsp;</gpx>", "line 1: not well-formed XML (an undeclared entity)"),
        ("", "the file is empty"),
        // The fuzzer crashed libxml2 with broken UTF-7: such encodings are refused before parsing.
        ("<?xml version=\"1.0\" encoding=\"UTF-7\"?>\n<gpx></gpx>",
         "line 1: the file declares encoding \"UTF-7\"; GPX and TCX files are read in UTF-8, UTF-16, ASCII, ISO-8859 or Windows code pages"),
        ("<?xml version=\"1.0\" encoding=\"UTF-7\"?\u{1}<gpx></gpx>",
         "line 1: the file declares encoding \"UTF-7\"; GPX and TCX files are read in UTF-8, UTF-16, ASCII, ISO-8859 or Windows code pages"),
        ("<?xml version='1.0' encoding = 'iso-2022-jp' ?><gpx></gpx>",
         "line 1: the file declares encoding \"iso-2022-jp\"; GPX and TCX files are read in UTF-8, UTF-16, ASCII, ISO-8859 or Windows code pages"),
    ])
    func malformedDocumentsAreErrorsNamingTheLine(gpx: String, message: String) {
        let error = #expect(throws: StoreError.self) { try ActivityFile.read(Data(gpx.utf8)) }
        #expect(error?.kind == .invalidInput)
        #expect(error?.message == message)
    }

    @Test(arguments: ["UTF-8", "utf-8", "ISO-8859-1", "windows-1252", "US-ASCII"])
    func commonEncodingsAreRead(encoding: String) throws {
        let gpx = "<?xml version=\"1.0\" encoding=\"\(encoding)\"?><gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\">"
            + "<trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time></trkpt>"
            + "<trkpt lat=\"1.0001\" lon=\"2\"><time>2020-01-01T00:00:05Z</time></trkpt></trkseg></trk></gpx>"
        let tracks = try GPXImport.tracks(from: Data(gpx.utf8))
        #expect(tracks.first?.count == 2)
    }

    @Test func utf16FilesAreReadAndTheirDeclaredEncodingChecked() throws {
        func utf16LE(_ text: String) -> Data {
            Data([0xFF, 0xFE] + text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        }
        let body = "<gpx version=\"1.1\" xmlns=\"http://www.topografix.com/GPX/1/1\"><trk><trkseg>"
            + "<trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time></trkpt>"
            + "<trkpt lat=\"1.0001\" lon=\"2\"><time>2020-01-01T00:00:05Z</time></trkpt></trkseg></trk></gpx>"
        let tracks = try GPXImport.tracks(from: utf16LE("<?xml version=\"1.0\" encoding=\"UTF-16\"?>" + body))
        #expect(tracks.first?.count == 2)
        let error = #expect(throws: StoreError.self) {
            try ActivityFile.read(utf16LE("<?xml version=\"1.0\" encoding=\"UTF-7\"?>" + body))
        }
        #expect(error?.message.contains("declares encoding \"UTF-7\"") == true)
    }

    /// Found by the fuzzer: three NULs before `<?xml` made libxml2 guess UCS-4, and XMLParser crashed.
    @Test(arguments: [[0, 0, 0], [0, 0, 0xFE, 0xFF, 0, 0, 0], [0x3C, 0, 0, 0]] as [[UInt8]])
    func fourByteEncodingsAreRefusedNotCrashedOn(start: [UInt8]) throws {
        let gpx = "<?xml version=\"1.0\" encoding=\"utf-8\"?><gpx version=\"1.1\"><trk><trkseg>"
            + "<trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time></trkpt></trkseg></trk></gpx>"
        let error = #expect(throws: StoreError.self) { try ActivityFile.read(Data(start + Array(gpx.utf8))) }
        #expect(error?.message.contains("UCS-4") == true, "\(String(describing: error))")
    }

    /// Found by the fuzzer: `<?xm?>` (a processing instruction without data) crashed FoundationXML's parser.
    @Test(arguments: ["<?xm?>", "<?x ?>", "<?pi\n?>"])
    func processingInstructionsWithoutDataAreRefusedNotCrashedOn(instruction: String) throws {
        let body = "<gpx version=\"1.1\"><trk><trkseg><trkpt lat=\"1\" lon=\"2\"><time>2020-01-01T00:00:00Z</time>"
            + "</trkpt></trkseg></trk></gpx>"
        let error = #expect(throws: StoreError.self) { try ActivityFile.read(Data((instruction + "\n" + body).utf8)) }
        #expect(error?.message.contains("processing instruction without data") == true, "\(String(describing: error))")
        // One with data is fine.
        let fine = "<?xml version=\"1.0\"?><?pi some data?>\n" + body
        #expect(try ActivityFile.read(Data(fine.utf8)).activities.count == 1)
    }

    @Test func pointsWithoutAValidPositionAreSkippedAndCounted() throws {
        let gpx = """
            <gpx><trk><trkseg>
            <trkpt lat="x" lon="2"><time>2020-01-01T00:00:00Z</time></trkpt>
            <trkpt lat="91" lon="2"><time>2020-01-01T00:00:01Z</time></trkpt>
            <trkpt lat="0x33" lon="2"><time>2020-01-01T00:00:01.5Z</time></trkpt>
            <trkpt lat="inf" lon="2"><time>2020-01-01T00:00:01.6Z</time></trkpt>
            <trkpt lat="1e1" lon="2"><time>2020-01-01T00:00:01.7Z</time></trkpt>
            <trkpt lat=" 1 " lon="2"><time>2020-01-01T00:00:02Z</time></trkpt>
            </trkseg></trk></gpx>
            """
        // Hex, infinity and exponents are no xsd:decimal (Double(String) took `0x33` as 51); spaces around are.
        let activity = try #require(try GPXImport.activities(from: Data(gpx.utf8)).first)
        #expect(activity.pointsWithoutPosition == 5)
        #expect(activity.fixes == [Fix(latitude: 1, longitude: 2, accuracy: 5, timestamp: 1_577_836_802)])
    }

    @Test(arguments: [
        ("2021-05-12T16:55:16Z", 1_620_838_516.0),
        ("2021-05-12T16:55:16.250Z", 1_620_838_516.25),
        ("2021-05-12T16:55:16", 1_620_838_516),
        ("2021-05-12T18:55:16+02:00", 1_620_838_516),
        ("2021-05-12T11:55:16-0500", 1_620_838_516),
        ("2021-05-12 16:55:16z", 1_620_838_516),
        ("2024-02-29T00:00:00Z", 1_709_164_800),
    ])
    func isoTimes(text: String, expected: Double) {
        // (February 29 of a leap year is a date: 2024-02-29T00:00:00Z below.)
        #expect(ISO8601.parse(text) == expected)
    }

    @Test(arguments: ["2021-13-12T16:55:16Z", "2021-05-12", "2021-05-12T16:55:16Q", "2021-05-12T16:55:16.",
                      "2023-02-30T10:00:00Z", "2021-04-31T10:00:00Z", "2023-02-29T10:00:00Z", "2023-11-14T22:13:20+25:99",
                      "2023-11-14T22:13:20+05:60"])
    func invalidISOTimes(text: String) {
        #expect(ISO8601.parse(text) == nil)
    }
}
