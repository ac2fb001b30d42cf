import Synchronization
import Wire

/// How many cheers may go: per sending connection and source address (`msg:` and the page's cheer button need
/// no identity, so these are what stops a flood), and per runner cheered from one address (what one runner's
/// phone is asked to take from one place, without one address using up everyone's share). Each allows five
/// seconds' worth at once. One per server, shared by the loops of a ``ServerGroup`` (a flood's connections
/// land on every loop), so any loop thread may use it.
package final class CheerLimits: Sendable {
    private struct Buckets {
        var connections: TokenBuckets
        var addresses: TokenBuckets
        var runners: TokenBuckets
    }

    private let buckets: Mutex<Buckets>

    package init(_ configuration: ServerConfiguration) {
        buckets = Mutex(Buckets(
            connections: TokenBuckets(rate: configuration.cheersPerSecond, burst: 5 * configuration.cheersPerSecond),
            addresses: TokenBuckets(rate: configuration.cheersPerSecondPerAddress,
                                    burst: 5 * configuration.cheersPerSecondPerAddress),
            runners: TokenBuckets(rate: configuration.cheersPerSecondPerRunner,
                                  burst: 5 * configuration.cheersPerSecondPerRunner)))
    }

    /// Takes a cheer from a connection (nil: the page's button) at `address`; the reason it may not go now
    /// otherwise (nothing taken).
    func admitSender(_ connection: ConnectionID?, address: String, now: Double) -> String? {
        buckets.withLock { buckets in
            let key = connection.map { String($0.value) }
            if let key, !buckets.connections.hasToken(key, now: now) {
                return "at most \(Self.rate(buckets.connections.rate)) \(Self.cheers(buckets.connections.rate)) a second from a connection: "
                    + "try again in \(Self.seconds(buckets.connections.wait(for: key, now: now)))"
            }
            if !buckets.addresses.hasToken(address, now: now) {
                return "at most \(Self.rate(buckets.addresses.rate)) \(Self.cheers(buckets.addresses.rate)) a second from one address: "
                    + "try again in \(Self.seconds(buckets.addresses.wait(for: address, now: now)))"
            }
            if let key { buckets.connections.take(key, now: now) }
            buckets.addresses.take(address, now: now)
            return nil
        }
    }

    /// Takes one of the cheers `runner` may get from `address`; false when that address had its share for now.
    func admit(to runner: String, from address: String, now: Double) -> Bool {
        buckets.withLock { $0.runners.take(runner + " " + address, now: now) }
    }

    /// Why a cheer to `runner` from `address` may not go now.
    func runnerRefusal(_ runner: String, from address: String, now: Double) -> String {
        buckets.withLock { buckets in
            "\(runner) gets at most \(Self.rate(buckets.runners.rate)) \(Self.cheers(buckets.runners.rate)) a second from one address: "
                + "try again in \(Self.seconds(buckets.runners.wait(for: runner + " " + address, now: now)))"
        }
    }

    private static func rate(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    private static func cheers(_ rate: Double) -> String {
        rate == 1 ? "cheer" : "cheers"
    }

    private static func seconds(_ value: Double) -> String {
        "\(max(1, Int(value.rounded(.up)))) s"
    }
}
