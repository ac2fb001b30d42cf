import Glibc
import Reactor
import Testing

/// Socket behaviour without a loop: the syscall layer's contract seen through the public API.
@Suite struct SocketTests {
    @Test func ioErrorDescribesOperationAndErrno() {
        let error = IOError(operation: "read", errno: ECONNRESET)
        #expect(error.description == "read: Connection reset by peer (errno 104)")
    }

    @Test(arguments: ["127.0.0.1", "0.0.0.0", "localhost"])
    func listensOnAnEphemeralPort(host: String) throws {
        let listener = try ListeningSocket(host: host, port: 0)
        #expect(listener.port != 0)
        let client = try StreamSocket.connect(host: "127.0.0.1", port: listener.port)
        #expect(client.peerDescription == "127.0.0.1:\(listener.port)")
    }

    @Test(arguments: ["moon", "256.0.0.1", ""])
    func rejectsHostsThatAreNotIPv4(host: String) {
        #expect(throws: IOError.self) { try ListeningSocket(host: host, port: 0) }
        do {
            _ = try StreamSocket.connect(host: host, port: 1)
            Issue.record("connect to \(host) should fail")
        } catch {
            #expect(error.errno == EINVAL)
        }
    }

    @Test func acceptWouldBlockWithNothingPending() throws {
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        guard case .wouldBlock = try listener.accept() else {
            Issue.record("accept on an idle listener must be .wouldBlock")
            return
        }
    }

    @Test func readWithNoDataIsWouldBlockNotAnError() throws {
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let (client, server) = try connectedPair(listener)
        defer { client.close() }  // keeps the client alive (and the connection open) until the end
        var buffer = [UInt8](repeating: 0, count: 16)
        let result = try buffer.withUnsafeMutableBytes { try server.read(into: $0) }
        #expect(result == .wouldBlock)
        #expect(server.peerDescription.hasPrefix("127.0.0.1:"))
        #expect(server.peerDescription != "127.0.0.1:\(listener.port)")
    }

    @Test func readAfterPeerCloseReturnsZero() throws {
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let (client, server) = try connectedPair(listener)
        try writeAll(client, Array("last words".utf8))
        client.close()
        #expect(!client.isOpen)
        #expect(wait(for: POLLIN, on: server.fileDescriptor))
        var buffer = [UInt8](repeating: 0, count: 64)
        let first = try buffer.withUnsafeMutableBytes { try server.read(into: $0) }
        #expect(first == .processed(10))
        let second = try buffer.withUnsafeMutableBytes { try server.read(into: $0) }
        #expect(second == .processed(0))
    }

    @Test func shutdownWriteSendsEOFButKeepsReading() throws {
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let (client, server) = try connectedPair(listener)
        client.shutdownWrite()
        #expect(wait(for: POLLIN, on: server.fileDescriptor))
        var buffer = [UInt8](repeating: 0, count: 64)
        #expect(try buffer.withUnsafeMutableBytes { try server.read(into: $0) } == .processed(0))
        try writeAll(server, Array("still here".utf8))
        let reply = try buffer.withUnsafeMutableBytes { try client.read(into: $0) }  // client is blocking
        #expect(reply == .processed(10))
        #expect(Array(buffer[..<10]) == Array("still here".utf8))
    }

    @Test func writingToAClosedPeerThrowsInsteadOfRaisingSIGPIPE() throws {
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let (client, server) = try connectedPair(listener)
        client.close()
        let chunk = [UInt8](repeating: 1, count: 4096)
        var failure: IOError?
        // The first write may still succeed (the RST only arrives in reply to it); a later one fails.
        for _ in 0..<100 where failure == nil {
            do {
                _ = try chunk.withUnsafeBytes { try server.write($0) }
                _ = wait(for: POLLIN, on: server.fileDescriptor, milliseconds: 50)
            } catch let error as IOError {
                failure = error
            }
        }
        #expect(failure?.errno == EPIPE || failure?.errno == ECONNRESET)
    }

    @Test func connectionRefusedIsAnIOError() throws {
        // A bound but non-listening socket owns the port, so nobody else can be listening on it.
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        try #require(bound)
        do {
            _ = try StreamSocket.connect(host: "127.0.0.1", port: UInt16(bigEndian: address.sin_port))
            Issue.record("connect should have been refused")
        } catch {
            #expect(error.errno == ECONNREFUSED)
            #expect(error.operation == "connect")
        }
    }

    @Test func closedSocketsRefuseIOAndCloseIsIdempotent() throws {
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let (client, _) = try connectedPair(listener)
        client.close()
        client.close()
        #expect(client.peerDescription == "closed")
        var buffer = [UInt8](repeating: 0, count: 4)
        do {
            _ = try buffer.withUnsafeMutableBytes { try client.read(into: $0) }
            Issue.record("read on a closed socket should throw")
        } catch let error as IOError {
            #expect(error.errno == EBADF)
        }
        listener.close()
        listener.close()
    }

    @Test func setBlockingTogglesTheMode() throws {
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let (client, server) = try connectedPair(listener)
        #expect(fcntl(server.fileDescriptor, F_GETFL) & O_NONBLOCK != 0)
        #expect(fcntl(client.fileDescriptor, F_GETFL) & O_NONBLOCK == 0)
        try client.setBlocking(false)
        #expect(fcntl(client.fileDescriptor, F_GETFL) & O_NONBLOCK != 0)
        try server.setBlocking(true)
        #expect(fcntl(server.fileDescriptor, F_GETFL) & O_NONBLOCK == 0)
        #expect(fcntl(server.fileDescriptor, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test func aReceiveBufferAskedForIsSetBeforeConnecting() throws {
        let listener = try ListeningSocket(host: "127.0.0.1", port: 0)
        let small = try StreamSocket.connect(host: "127.0.0.1", port: listener.port, receiveBufferSize: 4096)
        let usual = try StreamSocket.connect(host: "127.0.0.1", port: listener.port)
        func receiveBuffer(_ socket: StreamSocket) -> Int32 {
            var size: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(socket.fileDescriptor, SOL_SOCKET, SO_RCVBUF, &size, &length)
            return size
        }
        // The kernel doubles what it is asked for (its bookkeeping); left alone it starts at tcp_rmem's default.
        #expect(receiveBuffer(small) == 8192)
        #expect(receiveBuffer(usual) > 8192)
    }
}

/// Process limits used by the server at start-up. Serialized: resident memory is the whole process's, and one
/// of these tests hands freed memory back (malloc_trim) while the other measures growth.
@Suite(.serialized) struct ProcessLimitsTests {
    @Test func raisingTheOpenFileLimitNeverLowersIt() {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        let before = Int(clamping: limit.rlim_cur)
        #expect(ProcessLimits.raiseOpenFileLimit(to: 16) == before)
        let raised = ProcessLimits.raiseOpenFileLimit(to: 4_096)
        #expect(raised >= min(4_096, Int(clamping: limit.rlim_max)))
        #expect(raised >= before)
    }

    @Test func residentMemoryGrowsWhenPagesAreTouched() {
        // The other suites allocate and free alongside in the same process (a suite's end can hand tens of MiB
        // back while this touches its pages): a few tries, each with fresh pages.
        var tries: [String] = []
        for _ in 0..<3 {
            let before = ProcessLimits.residentMemoryBytes()
            #expect(before > 1_000_000)
            let size = 64 << 20
            let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 4096)
            defer { block.deallocate() }
            block.initializeMemory(as: UInt8.self, repeating: 7, count: size)
            let after = ProcessLimits.residentMemoryBytes()
            if after >= before + size / 2 { return }
            tries.append("\(before >> 20) -> \(after >> 20) MiB")
        }
        Issue.record("resident memory did not grow by 32 MiB with 64 MiB touched, in 3 tries: \(tries)")
    }

    /// Under AddressSanitizer or ThreadSanitizer malloc is theirs, and glibc's trimming has nothing to give back.
    static let mallocIsGlibcs = dlsym(nil, "__asan_init") == nil && dlsym(nil, "__tsan_init") == nil

    @Test(.enabled(if: mallocIsGlibcs, "the sanitizers' malloc replaces glibc's"))
    func freedMemoryGoesBackToTheSystemWhenAsked() {
        // The process's resident size is shared with every suite running alongside (one finishing can touch or
        // free tens of MiB meanwhile), so this looks at the freed blocks' own pages instead, with mincore(2).
        // 48 MiB in small blocks, then one more that pins the heap's top: freeing the rest leaves their pages
        // resident (malloc only gives back a free top of the heap by itself) until it is asked to return them.
        // A server in another suite may trim malloc itself (every few seconds) between the frees and the first
        // look: that try proves nothing, and another is made.
        var tries: [String] = []
        for _ in 0..<3 {
            let blocks = (0..<196_608).map { _ in UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 16) }
            for block in blocks { block.initializeMemory(as: UInt8.self, repeating: 1, count: 256) }
            let pin = UnsafeMutableRawPointer.allocate(byteCount: 256, alignment: 16)
            defer { pin.deallocate() }
            let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
            let pages = Array(Set(blocks.map { Int(bitPattern: $0) & ~(pageSize - 1) })).sorted()
            for block in blocks { block.deallocate() }
            let residentBefore = Self.residentCount(of: pages, pageSize: pageSize)
            guard residentBefore > pages.count * 9 / 10 else {
                tries.append("\(residentBefore) of \(pages.count) pages resident before asking")
                continue
            }
            #expect(ProcessLimits.returnFreeMemory())
            // Another thread may share the arena and take some freed blocks back meanwhile: most pages, not all.
            let residentAfter = Self.residentCount(of: pages, pageSize: pageSize)
            #expect(residentAfter < pages.count / 2, "\(residentAfter) of \(pages.count) pages still resident")
            return
        }
        Issue.record("freed pages were not resident before malloc was asked, in 3 tries: \(tries)")
    }

    /// How many of these page addresses are resident now; a page no longer mapped counts as not resident.
    static func residentCount(of pages: [Int], pageSize: Int) -> Int {
        var resident = 0
        var vector: UInt8 = 0
        for page in pages {
            guard let address = UnsafeMutableRawPointer(bitPattern: page) else { continue }
            if mincore(address, pageSize, &vector) == 0, vector & 1 == 1 { resident += 1 }
        }
        return resident
    }
}
