import Wire

/// How many cheers may go: per sending connection and source address (`msg:` and the page's cheer button need
/// no identity, so these are what stops a flood), and per runner cheered (what one runner's phone is asked to
/// take from everyone together). Each allows five seconds' worth at once. Loop thread only (the hub's).
struct CheerLimits {
    private var connections: TokenBuckets
    private var addresses: TokenBuckets
    private var runners: TokenBuckets

    init(_ configuration: ServerConfiguration) {
        connections = TokenBuckets(rate: configuration.cheersPerSecond, burst: 5 * configuration.cheersPerSecond)
        addresses = TokenBuckets(rate: configuration.cheersPerSecondPerAddress,
                                 burst: 5 * configuration.cheersPerSecondPerAddress)
        runners = TokenBuckets(rate: configuration.cheersPerSecondPerRunner,
                               burst: 5 * configuration.cheersPerSecondPerRunner)
    }

    /// Takes a cheer from a connection (nil: the page's button) at `address`; the reason it may not go now
    /// otherwise (nothing taken).
    mutating func admitSender(_ connection: ConnectionID?, address: String, now: Double) -> String? {
        let key = connection.map { String($0.value) }
        if let key, !connections.hasToken(key, now: now) {
            return "at most \(Self.rate(connections.rate)) cheers a second from a connection: "
                + "try again in \(Self.seconds(connections.wait(for: key, now: now)))"
        }
        if !addresses.hasToken(address, now: now) {
            return "at most \(Self.rate(addresses.rate)) cheers a second from one address: "
                + "try again in \(Self.seconds(addresses.wait(for: address, now: now)))"
        }
        if let key { connections.take(key, now: now) }
        addresses.take(address, now: now)
        return nil
    }

    /// Takes one of `runner`'s cheers; false when the runner has had its share for now.
    mutating func admit(to runner: String, now: Double) -> Bool {
        runners.take(runner, now: now)
    }

    /// Why a cheer to `runner` may not go now.
    func runnerRefusal(_ runner: String, now: Double) -> String {
        "\(runner) gets at most \(Self.rate(runners.rate)) cheers a second: "
            + "try again in \(Self.seconds(runners.wait(for: runner, now: now)))"
    }

    private static func rate(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }

    private static func seconds(_ value: Double) -> String {
        "\(max(1, Int(value.rounded(.up)))) s"
    }
}
