import ClusterBus
import Foundation
import MoonRunnerTestSupport
import Testing

/// Leases on a real Redis: one holder at a time, renewed only by it, taken by another once it expires.
@Suite(.mayBlock, .enabled(if: RedisTestServer.isAvailable, Comment(rawValue: RedisTestServer.skipReason)))
struct LeaseTests {
    @Test func aLeaseHasOneHolderWhoAloneRenewsItUntilItExpiresAndAnotherTakesIt() throws {
        let redis = try RedisTestServer.shared()
        let name = "ann-" + UUID().uuidString
        let a = try ClusterLease(url: redis.url, node: "a"), b = try ClusterLease(url: redis.url, node: "b")
        defer { a.close(); b.close() }

        #expect(try a.holder(of: name) == nil)
        #expect(try a.take(name, ttl: 30))
        #expect(try !b.take(name, ttl: 30), "held by a")
        #expect(try !a.take(name, ttl: 30), "taking is not renewing")
        #expect(try b.holder(of: name)?.node == "a")
        #expect(try !b.renew(name, ttl: 30), "b cannot renew a's lease")
        #expect(try !b.release(name), "nor give it up")
        #expect(try a.holder(of: name)?.node == "a")

        // Renewed to a short TTL, then not renewed: it runs out and b takes it.
        #expect(try a.renew(name, ttl: 0.3))
        let remaining = try #require(try a.holder(of: name)).remaining
        #expect(remaining > 0 && remaining <= 0.3)
        let renewedAt = Date()
        let deadline = Date(timeIntervalSinceNow: 10)
        var taken = false
        while !taken && Date() < deadline {
            taken = try b.take(name, ttl: 30)
            if !taken { usleep(20_000) }  // polling a TTL: the expiry itself is what is waited for
        }
        #expect(taken)
        #expect(Date().timeIntervalSince(renewedAt) >= 0.25, "not before the TTL ran out")
        #expect(try a.holder(of: name)?.node == "b")
        #expect(try !a.renew(name, ttl: 30), "a lost it: its renewal must fail")
        #expect(try !a.release(name), "and must not drop b's")
        #expect(try b.holder(of: name)?.node == "b")
        #expect(try b.release(name))
        #expect(try a.holder(of: name) == nil)
        #expect(try a.take(name, ttl: 30), "free again")
    }

    @Test func aLeaseCallWithRedisDownThrowsAConnectionErrorAndTheNextOneReconnects() throws {
        let redis = try RedisTestServer.start()
        defer { redis.stop() }
        let lease = try ClusterLease(url: redis.url, node: "a", connectTimeout: 1, commandTimeout: 2)
        defer { lease.close() }
        let name = "bob"
        #expect(try lease.take(name, ttl: 30))
        redis.kill()
        #expect(throws: BusError.self) { try lease.renew(name, ttl: 30) }
        do {
            _ = try lease.renew(name, ttl: 30)
            Issue.record("renewing with Redis down worked")
        } catch {
            #expect(error.kind == .connection)
        }
        try redis.restart()
        #expect(try !lease.renew(name, ttl: 30), "a Redis without persistence forgot the lease")
        #expect(try lease.take(name, ttl: 30))
        lease.close()
        #expect(throws: BusError(.closed, "the lease connection to \(lease.endpoint) is closed")) {
            try lease.take(name, ttl: 1)
        }
    }
}
