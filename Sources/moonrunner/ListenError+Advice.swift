import Broadcaster

extension ListenError {
    /// What `serve` says when it cannot listen: for a port that is taken, which one and the flag that moves
    /// it (the system's `bind: Address already in use` named neither port nor way out); else the port and
    /// the system's reason.
    var advice: String {
        guard isPortTaken else { return "cannot listen: \(self)" }
        switch listener {
        case .http: return "HTTP port \(port) is taken: choose another with --http-port N, or --http-port off"
        case .line: return "port \(port) is taken: choose another with --port N"
        }
    }
}
