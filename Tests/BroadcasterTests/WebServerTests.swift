import Broadcaster
import Foundation
import MoonRunnerTestSupport
import RunCore
import RunStore
import Testing
import Wire

/// HTTP on the server's loop, over the wire: pages, the JSON API, cheers, metrics, health and the limits.
@Suite(.mayBlock) struct WebServerTests {
    func http(_ server: Server) throws -> HTTPTestClient { try HTTPTestClient(port: try #require(server.httpPort)) }

    @Test func pagesAndAssetsAreServedWithTheirTypes() async throws {
        try await onItsOwnThread {
            try withServer { server in
                let client = try http(server)
                for (path, type) in [("/", "text/html"), ("/runners/ann", "text/html"), ("/runners/ann/badges", "text/html"),
                                     ("/runs/3", "text/html"), ("/assets/app.css", "text/css"), ("/assets/common.js", "text/javascript")] {
                    let response = try client.get(path)
                    #expect(response.status == 200, "\(path)")
                    #expect(response.header("Content-Type")?.hasPrefix(type) == true, "\(path): \(response)")
                }
                #expect(try client.get("/nowhere").status == 404)
                #expect(try client.get("/runners/bad%20name").status == 404)
                let post = try client.post("/", body: "x")
                #expect(post.status == 405 && post.header("Allow") == "GET, HEAD")
                // Still the same keep-alive connection.
                #expect(try client.get("/healthz").text == "ok\n")
            }
        }
    }

    @Test func malformedRequestsGet400AndAreClosedWithoutHarmingOthers() async throws {
        try await onItsOwnThread {
            try withServer { server in
                let bad = try http(server)
                try bad.send("GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n")
                #expect(try bad.response().status == 400)
                #expect(try bad.awaitClose())
                let huge = try http(server)
                try huge.send("GET / HTTP/1.1\r\nHost: a\r\nX-Pad: \(String(repeating: "a", count: 9000))\r\n\r\n")
                #expect(try huge.response().status == 431)
                let big = try http(server)
                #expect(try big.post("/runners/ann/cheers", body: String(repeating: "b", count: 17_000)).status == 413)
                let good = try http(server)
                #expect(try good.get("/healthz").status == 200)
            }
        }
    }

    @Test func aRequestThatNeverEndsTimesOutWith408() async throws {
        try await onItsOwnThread {
            try withServer({ $0.httpHeaderTimeout = 1 }) { server in
                let slow = try http(server)
                try slow.send("GET / HTTP/1.1\r\nHost: a\r\n")  // the head never ends
                let response = try slow.response(timeout: 5)
                #expect(response.status == 408)
                #expect(try slow.awaitClose())
            }
        }
    }

    @Test func pastTheConnectionLimitANewcomerGets503() async throws {
        try await onItsOwnThread {
            try withServer({ $0.maximumHTTPConnections = 2 }) { server in
                let first = try http(server), second = try http(server)
                #expect(try first.get("/healthz").status == 200)
                #expect(try second.get("/healthz").status == 200)
                let third = try http(server)
                #expect(try third.response().status == 503)
            }
        }
    }

    @Test func aCheerFromThePageReachesTheRunnersConnection() async throws {
        try await onItsOwnThread {
            try withPureServer { server in
                let (ann, _) = try connectRunner("ann", to: server)
                for line in straightRun(count: 3) { try ann.send(line) }
                try ann.expect("pace:ann")
                let client = server.web()
                let sent = try client.post("/runners/ann/cheers", body: "text=Allez+Ann+%21", type: "application/x-www-form-urlencoded")
                #expect(sent.status == 202, "\(sent)")
                let cheer = try CheerEvent(event: Event.parse(ann.expect("msg:ann")))
                #expect(cheer.text == "Allez Ann !" && cheer.from == "anon")
                #expect(try client.post("/runners/ann/cheers", body: "plain text works too").status == 202)
                #expect(try CheerEvent(event: Event.parse(ann.expect("msg:ann"))).text == "plain text works too")
                #expect(try client.post("/runners/ann/cheers", body: String(repeating: "x", count: 281)).status == 422)
                #expect(try client.post("/runners/ann/cheers", body: "").status == 422)
                #expect(try client.post("/runners/nobody/cheers", body: "hi").status == 404)
            }
        }
    }

    @Test func aLiveRunShowsItsValuesSoFarOnTheWebAsOnTheLine() async throws {
        try await onItsOwnThread {
            try withPureServer { server in
                let (ann, _) = try connectRunner("ann", to: server)
                let lines = straightRun(count: 30)
                for line in lines { try ann.send(line) }
                let run = try RunStartedEvent(event: Event.parse(ann.expect("run:ann")))
                // Every fix stored: the web reads the store.
                let last = try #require(lines.last?.split(separator: ",").last)
                try ann.expect("ack:ann ts=\(last)")
                try ann.send("runs:ann")
                let item = try RunListItemEvent(event: Event.parse(ann.expect("item:ann")))
                #expect(item.distance > 10, "the line's answer has the values so far")
                let client = server.web()
                func object(_ path: String) throws -> [String: Any]? {
                    try JSONSerialization.jsonObject(with: Data(client.get(path).body)) as? [String: Any]
                }
                let summary = try #require(try object("/api/runs/\(run.runID)")?["summary"] as? [String: Any])
                #expect(summary["status"] as? String == "live")
                #expect((summary["dist"] as? Double ?? 0) > 10 && (summary["time"] as? Double ?? 0) > 20, "\(summary)")
                let runs = try #require(try object("/api/runners/ann/runs")?["runs"] as? [[String: Any]])
                #expect((runs.first?["dist"] as? Double).map { abs($0 - item.distance) < 0.01 } == true, "\(runs)")
            }
        }
    }

    @Test func theJSONAPIMatchesTheLineProtocol() async throws {
        try await onItsOwnThread {
            let store = MemoryRunStore()
            try withPureServer(store: store) { server in
                let (ann, _) = try connectRunner("ann", to: server)
                for line in straightRun(count: 300, speed: 3.7) { try ann.send(line) }
                try ann.send("stop:")
                let end = try RunEndedEvent(event: Event.parse(ann.expect("end:ann", timeout: 20)))
                let client = server.web()
                let run = try JSONSerialization.jsonObject(with: Data(client.get("/api/runs/\(end.runID)").body)) as? [String: Any]
                let summary = try #require(run?["summary"] as? [String: Any])
                #expect(summary["run"] as? Int == Int(end.runID) && summary["status"] as? String == "saved")
                #expect(abs((summary["dist"] as? Double ?? 0) - end.distance) < 0.01)
                #expect((run?["points"] as? [[Double]])?.count ?? 0 > 200)
                #expect((run?["badges"] as? [[String: Any]])?.contains { $0["id"] as? String == "atmosphere" } == true)
                let runs = try JSONSerialization.jsonObject(with: Data(client.get("/api/runners/ann/runs?limit=5").body)) as? [String: Any]
                #expect((runs?["runs"] as? [[String: Any]])?.first?["run"] as? Int == Int(end.runID))
                let board = try JSONSerialization.jsonObject(with: Data(client.get("/api/runners/ann/badges").body)) as? [String: Any]
                #expect((board?["badges"] as? [Any])?.count == 33 && board?["next"] as? String == "moon")
                let runner = try JSONSerialization.jsonObject(with: Data(client.get("/api/runners/ann").body)) as? [String: Any]
                #expect(runner?["live"] as? Bool == false && runner?["last_run"] as? Int == Int(end.runID))
                #expect(runner?["track"] is NSNull)
                #expect(runs?["limit"] as? Int == 5 && runs?["more"] as? Bool == false)
                #expect(try client.get("/api/runners/nobody").status == 404)
                #expect(try client.get("/api/runs/999").status == 404)
                #expect(try client.get("/api/runners/ann/runs?limit=0").status == 400)
                let catalogue = try JSONSerialization.jsonObject(with: Data(client.get("/api/badges").body)) as? [[String: Any]]
                #expect(catalogue?.count == 33 && catalogue?.first?["id"] as? String == "earth")
                for format in ["gpx", "geojson", "svg"] {
                    let export = try client.get("/runs/\(end.runID).\(format)")
                    #expect(export.status == 200 && export.header("Content-Disposition")?.contains("run-\(end.runID).\(format)") == true)
                }
            }
        }
    }

    /// The runner page's course choice of a course the loop has not read yet, over a real keep-alive connection:
    /// the server reads it off the loop, the hub decides the request again with it, and the connection's next
    /// request is answered after.
    @Test func thePagesCourseChoiceOfAnUnreadCourseIsReadFirst() async throws {
        try await onItsOwnThread {
            let store = MemoryRunStore()
            let path = [Coordinate(latitude: 51.5, longitude: -0.12), Coordinate(latitude: 51.51, longitude: -0.12)]
            store.submit(.course(StoredCourse(name: "park", path: path, points: [], created: 1)))
            try withServer(store: store) { server in
                let (_, key) = try connectRunner("ann", to: server)
                let client = try http(server)
                let form = "application/x-www-form-urlencoded"
                let chosen = try client.post("/runners/ann/course", body: "key=\(key)&course=park", type: form)
                #expect(chosen.status == 200 && chosen.text.hasPrefix(#"{"course":"park""#), "\(chosen)")
                #expect(try client.post("/runners/ann/course", body: "key=\(key)&course=nowhere", type: form).status == 404)
                #expect(try client.get("/healthz").text == "ok\n", "the same connection goes on")
            }
        }
    }

    @Test func metricsAndHealthSpeakPrometheusAndPlainText() async throws {
        try await onItsOwnThread {
            try withServer { server in
                let client = try http(server)
                _ = try client.get("/nowhere")
                let metrics = try client.get("/metrics")
                #expect(metrics.status == 200 && metrics.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
                for name in ["moonrunner_http_responses_total{code=\"404\"} 1", "# TYPE moonrunner_loop_turn_duration_seconds histogram",
                             "moonrunner_store_commit_duration_seconds_count", "moonrunner_event_streams 0"] {
                    #expect(metrics.text.contains(name), "\(name)")
                }
                #expect(try client.get("/healthz").text == "ok\n")
            }
        }
    }

    /// A locked database fails no batch (the writer waits and retries): writes waiting with nothing committed for
    /// `storeStallSeconds` make the health check 503, and it is 200 again once the store commits.
    @Test func healthIs503WhileWritesWaitAndNothingCommits() async throws {
        try await onItsOwnThread {
            let store = BackloggedStore()
            try withServer({ $0.storeStallSeconds = 1.5 }, store: store) { server in
                let client = try http(server)
                store.pretendBacklog(3)  // three writes waiting, and no commit comes
                #expect(try client.get("/healthz").status == 200, "a write waits a moment for its batch")
                let deadline = Date().addingTimeInterval(8)
                var answer = try client.get("/healthz")
                while answer.status == 200, Date() < deadline {
                    usleep(200_000)  // the check is looked at once a second; nothing to wait on but time
                    answer = try client.get("/healthz")
                }
                #expect(answer.status == 503)
                #expect(answer.text.hasPrefix("store stalled: nothing committed for ") && answer.text.hasSuffix(", 3 writes waiting\n"),
                        "\(answer.text)")
                store.pretendBacklog(nil)
                let (ann, _) = try connectRunner("ann", to: server)  // a claim is a write: a commit follows
                for line in straightRun(count: 5) { try ann.send(line) }
                try ann.expect("ack:ann")
                #expect(try client.get("/healthz").text == "ok\n")
            }
        }
    }

    /// `X-Content-Type-Options: nosniff` (and the referrer policy) on every answer, whatever made it: a page, the
    /// API, an error, an event stream's head, and the refusal of a connection past the limit.
    @Test func everyResponseSaysNosniff() async throws {
        try await onItsOwnThread {
            try withServer({ $0.maximumHTTPConnections = 2 }) { server in
                let client = try http(server)
                var answers: [(String, HTTPTestClient.Response)] = []
                for path in ["/", "/assets/app.css", "/api/overview", "/api/runs/9", "/runs/9.gpx", "/nowhere", "/metrics",
                             "/healthz"] {
                    answers.append((path, try client.get(path)))
                }
                answers.append(("POST /", try client.post("/", body: "x")))
                let stream = try http(server)
                answers.append(("/events", try stream.openStream("watch=ann")))
                let refused = try http(server)
                answers.append(("past the limit", try refused.response()))
                #expect(answers.last?.1.status == 503)
                for (what, answer) in answers {
                    #expect(answer.header("X-Content-Type-Options") == "nosniff", "\(what): \(answer)")
                    #expect(answer.header("Referrer-Policy") == "strict-origin-when-cross-origin", "\(what)")
                }
            }
        }
    }

    @Test func metricsAreCleanUnderPromtool() async throws {
        let promtool = "/usr/bin/promtool"
        guard FileManager.default.isExecutableFile(atPath: promtool) else {
            if ProcessInfo.processInfo.environment["CI"] != nil { Issue.record("CI must install prometheus (promtool)") }
            return
        }
        let text = try withServer { server in
            let (ann, _) = try connectRunner("ann", to: server)
            for line in straightRun(count: 20) { try ann.send(line) }
            try ann.expect("ack:ann")
            return try http(server).get("/metrics").text
        }
        let file = temporaryFolder().appendingPathComponent("metrics.txt")
        try text.write(to: file, atomically: true, encoding: .utf8)
        let check = try ChildProcess(executable: "/bin/sh", arguments: ["-c", "\(promtool) check metrics < '\(file.path)'"])
        let status = await exitStatus(check, timeout: 30)
        #expect(status == 0, "promtool: \(check.standardOutput) \(check.standardError)")
        #expect(check.standardOutput.isEmpty && !check.standardError.contains("problem"),
                "promtool found problems: \(check.standardOutput) \(check.standardError)")
    }
}
