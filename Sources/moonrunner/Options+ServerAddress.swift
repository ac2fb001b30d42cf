import MoonRunnerClient
import ToolSupport

extension Options {
    /// `--host` and `--port` of a client tool, defaulting to the client library's (the server's) address.
    mutating func serverAddress() throws(UsageError) -> (host: String, port: UInt16) {
        let defaults = ClientConfiguration()
        return (string("host") ?? defaults.host, try number("port", default: defaults.port))
    }
}
