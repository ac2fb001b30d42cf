import Foundation
import MoonRunnerTestSupport
import RunStore
import Testing
import Wire

/// README says the database may be used while the server runs: `moonrunner import` into a live server's file
/// must leave both the live runs and the imported one intact.
@Suite(.mayBlock) struct ImportBesideServerTests {
    @Test func importIntoALiveServersFileKeepsEveryRunIntact() async throws {
        let folder = temporaryFolder()
        let database = folder.appendingPathComponent("live.sqlite").path
        let server = try ChildProcess(["serve", "--port", "0", "--http-port", "0", "--db", database])
        defer { server.terminate() }
        let port = try server.listeningPort()
        let (ann, _) = try connectRunner(on: port, "ann")
        // Ann's first run, then the start of a second one (its id is taken before the import runs).
        for line in straightRun(count: 30) { try ann.send(line) }
        try ann.send("stop:")
        let firstRun = try RunEndedEvent(event: Event.parse(ann.expect("end:ann"))).runID

        let gpx = Bundle.module.url(forResource: "strava-run-1", withExtension: "gpx", subdirectory: "Fixtures")!.path
        let importer = try ChildProcess(["import", gpx, "--runner", "imp", "--db", database])
        #expect((await exitStatus(importer, timeout: 120)) == 0, "\(importer.standardError)")
        // The summary names the new run: `run 7 saved for imp`.
        let words = importer.standardOutput.split(whereSeparator: \.isWhitespace)
        let importedRun = try #require(zip(words, words.dropFirst()).first { $0.0 == "run" && Int64($0.1) != nil }
            .flatMap { Int64($0.1) }, "\(importer.standardOutput)")

        // A run the server starts after the import still gets a fresh id.
        for line in straightRun(count: 30, latitude: 48.85, longitude: 2.35) { try ann.send(line) }
        try ann.send("stop:")
        let secondRun = try RunEndedEvent(event: Event.parse(ann.expect("end:ann"))).runID
        #expect(Set([firstRun, importedRun, secondRun]).count == 3)

        let asker = try TestClient(port: port)
        try asker.send("runs:imp")
        let imported = try asker.lines(until: "done:runs") { $0.hasPrefix("done:runs") }
        #expect(imported.count == 2 && imported[0].hasPrefix("item:imp run=\(importedRun) "), "\(imported)")
        try asker.send("runs:ann")
        let anns = try asker.lines(until: "done:runs") { $0.hasPrefix("done:runs") }
        #expect(anns.compactMap { try? RunListItemEvent(event: Event.parse($0)).runID } == [secondRun, firstRun])
        try asker.send("run:\(secondRun)")
        let second = try asker.lines(until: "done:run") { $0.hasPrefix("done:run") }
        #expect(second.first?.hasPrefix("summary:ann run=\(secondRun) ") == true, "\(second)")
        #expect(second.filter { $0.hasPrefix("badge:") }.allSatisfy { $0.hasPrefix("badge:ann ") })
        try asker.send("run:\(importedRun)")
        let run = try asker.lines(until: "done:run") { $0.hasPrefix("done:run") }
        #expect(run.first?.hasPrefix("summary:imp run=\(importedRun) status=saved") == true, "\(run)")
        #expect(run.filter { $0.hasPrefix("badge:") }.allSatisfy { $0.hasPrefix("badge:imp ") })
    }

    func connectRunner(on port: UInt16, _ name: String) throws -> (TestClient, String) {
        let client = try TestClient(port: port)
        try client.send("iam:\(name)")
        let reply = try OkEvent(event: Event.parse(client.expect("ok:iam")))
        return (client, reply["key"] ?? "")
    }
}
