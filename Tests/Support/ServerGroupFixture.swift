import Broadcaster
import RunStore

/// A server of `loops` event loops on ephemeral ports with an in-memory store, shut down when the body ends.
public func withServerGroup<T>(loops: Int, _ configure: (inout ServerConfiguration) -> Void = { _ in },
                               store: (any RunStore)? = nil, _ body: (ServerGroup) throws -> T) throws -> T {
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.httpPort = 0
    configure(&configuration)
    let group = try ServerGroup(configuration: configuration, store: store ?? MemoryRunStore(), loops: loops,
                                log: ServerLog(isEnabled: false))
    try group.start()
    defer { group.shutdown() }
    return try body(group)
}

extension ServerGroup {
    /// A runner name (`prefix`, then `prefix1`, `prefix2`…) that loop `index` owns.
    public func runnerName(ownedBy index: Int, prefix: String) -> String {
        var number = 0
        while true {
            let name = number == 0 ? prefix : "\(prefix)\(number)"
            if loopIndex(ofRunner: name) == index { return name }
            number += 1
        }
    }
}
