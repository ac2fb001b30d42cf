import Broadcaster
import RunStore

/// `withServer` for async test bodies (the client library's calls are async): a server on an ephemeral port
/// with an in-memory store (or `store`), shut down when the body ends.
public func withServer<T>(_ configure: (inout ServerConfiguration) -> Void = { _ in },
                          store: (any RunStore)? = nil,
                          _ body: (Server) async throws -> T) async throws -> T {
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.httpPort = 0
    configure(&configuration)
    let server = try Server(configuration: configuration, store: store ?? MemoryRunStore(),
                            log: ServerLog(isEnabled: false))
    try server.start()
    do {
        let result = try await body(server)
        server.shutdown()
        return result
    } catch {
        server.shutdown()
        throw error
    }
}
