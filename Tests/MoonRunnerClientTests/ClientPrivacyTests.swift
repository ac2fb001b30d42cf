import Broadcaster
import Foundation
import MoonRunnerClient
import MoonRunnerTestSupport
import Testing
import Wire

/// A private runner and a share link through the client library.
@Suite(.mayBlock) struct ClientPrivacyTests {
    @Test func aFriendWithTheShareLinkSeesThePrivateRunUntilItIsRevoked() async throws {
        try await withServer { server in
            let runner = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            let friend = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            let stranger = MoonRunnerClient(host: "127.0.0.1", port: server.port)
            defer { [runner, friend, stranger].forEach { $0.close() } }
            let heard = EventRecorder(friend)
            let unheard = EventRecorder(stranger)
            try await runner.join(name: "ann")
            try await runner.setPrivate(true)
            try await runner.setPrivacyZone(100)
            let link = try await runner.share(seconds: 3_600)
            #expect(link.token.count == 32 && link.expires.hasSuffix("Z"))
            try friend.watch("ann", token: link.token)
            try stranger.watch("ann")
            #expect(throws: MoonRunnerClientError.self) { try friend.watch("ann", token: "nope") }
            try await heard.first("ok:watch") { if case .ok(let ok) = $0 { ok.what == "watch" } else { false } }
            try await unheard.first("ok:watch") { if case .ok(let ok) = $0 { ok.what == "watch" } else { false } }
            for fix in straightFixes(count: 40, speed: 4) { try runner.send(fix) }
            let pace = try await heard.first("a pace") { $0.kind == "pace" }
            guard case .pace(let first) = pace else { return }
            #expect(first.latitude == nil, "inside the privacy zone: no position for the friend")
            #expect(try await runner.unshare() == 1)
            try await heard.first("revoked") { if case .error(let error) = $0 { "\(error)".contains("revoked") } else { false } }
            _ = try await runner.stop()
            // A ping answered after the end: the stranger heard nothing of ann all along.
            _ = try await stranger.leaders()
            #expect(!unheard.events.contains { $0.runner == "ann" })
        }
    }
}
