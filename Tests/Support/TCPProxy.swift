import Foundation
import Reactor
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A TCP relay between clients and a real server that a test can cut, to drop connections the way a phone
/// losing its network does: the server sees the runner vanish (its run stays open for resuming), and the
/// client sees its connection end. New connections after a cut are relayed again.
public final class TCPProxy: @unchecked Sendable {
    private let listener: ListeningSocket
    private let upstreamPort: UInt16
    private let state = Mutex<(pairs: [(StreamSocket, StreamSocket)], stopped: Bool, accepted: Int)>(([], false, 0))
    private let finished = DispatchSemaphore(value: 0)

    /// The port clients connect to.
    public var port: UInt16 { listener.port }
    /// Connections accepted so far.
    public var acceptedCount: Int { state.withLock { $0.accepted } }

    /// Relays 127.0.0.1:`port` (ephemeral) to 127.0.0.1:`upstreamPort`.
    public init(to upstreamPort: UInt16) throws {
        self.upstreamPort = upstreamPort
        listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let thread = Thread { [self] in relay() }
        thread.name = "tcp-proxy"
        thread.start()
    }

    /// Closes every relayed connection (both sides); later connections are relayed again.
    public func cut() {
        let pairs = state.withLock { state -> [(StreamSocket, StreamSocket)] in
            defer { state.pairs = [] }
            return state.pairs
        }
        for (client, server) in pairs {
            client.close()
            server.close()
        }
    }

    /// Cuts and stops relaying.
    public func stop() {
        state.withLock { $0.stopped = true }
        finished.wait()
        cut()
        listener.close()
    }

    /// One thread polls the listener and every pair, copying bytes both ways.
    private func relay() {
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !state.withLock({ $0.stopped }) {
            let pairs = state.withLock { $0.pairs }.filter { $0.0.isOpen && $0.1.isOpen }
            var descriptors = [pollfd(fd: listener.fileDescriptor, events: Int16(POLLIN), revents: 0)]
            for (client, server) in pairs {
                descriptors.append(pollfd(fd: client.fileDescriptor, events: Int16(POLLIN), revents: 0))
                descriptors.append(pollfd(fd: server.fileDescriptor, events: Int16(POLLIN), revents: 0))
            }
            _ = poll(&descriptors, nfds_t(descriptors.count), 20)
            if descriptors[0].revents != 0, case .processed(let client)? = try? listener.accept(),
               let server = try? StreamSocket.connect(host: "127.0.0.1", port: upstreamPort) {
                try? server.setBlocking(false)
                state.withLock {
                    $0.pairs.append((client, server))
                    $0.accepted += 1
                }
            }
            for (index, (client, server)) in pairs.enumerated() {
                for (from, to, slot) in [(client, server, 1 + 2 * index), (server, client, 2 + 2 * index)]
                where descriptors[slot].revents != 0 {
                    let result = try? buffer.withUnsafeMutableBytes { try from.read(into: $0) }
                    switch result {
                    case .processed(let count)? where count > 0:
                        var offset = 0
                        while offset < count {
                            let written = try? buffer.withUnsafeBytes {
                                try to.write(UnsafeRawBufferPointer(rebasing: $0[offset..<count]))
                            }
                            if case .processed(let n)? = written { offset += n } else if written == nil { break }
                        }
                    case .wouldBlock?:
                        break
                    default:
                        client.close()
                        server.close()
                    }
                }
            }
        }
        finished.signal()
    }
}
