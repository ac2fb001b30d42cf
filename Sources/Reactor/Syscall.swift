import CEpoll
import Glibc

/// The single place where the Reactor talks to the kernel.
///
/// Every wrapper follows the same rules, so the rest of the module never looks at `errno`:
/// - `EINTR` is retried **in a loop** (the call is simply reissued), except for `close`, which must
///   never be retried on Linux because the descriptor is already gone when it reports `EINTR`.
/// - `EAGAIN`/`EWOULDBLOCK` becomes ``IOResult/wouldBlock`` for the calls that can legitimately
///   would-block (read, send, accept, eventfd/signalfd reads); for every other call it is an error.
/// - Any other failure throws an ``IOError`` naming the call.
enum Syscall {
    // MARK: Error plumbing

    /// Runs `body` until it does not fail with `EINTR`; maps `-1` to `.wouldBlock` or a thrown error.
    @inline(__always)
    static func nonBlocking<T: BinaryInteger>(_ operation: String, _ body: () -> T) throws(IOError) -> IOResult<T> {
        while true {
            let result = body()
            if result >= 0 { return .processed(result) }
            let code = Glibc.errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            default: throw IOError(operation: operation, errno: code)
            }
        }
    }

    /// Runs `body` until it does not fail with `EINTR`; any other failure (including `EAGAIN`) throws.
    @inline(__always)
    @discardableResult
    static func blocking<T: BinaryInteger>(_ operation: String, _ body: () -> T) throws(IOError) -> T {
        while true {
            let result = body()
            if result >= 0 { return result }
            let code = Glibc.errno
            if code == EINTR { continue }
            throw IOError(operation: operation, errno: code)
        }
    }

    // MARK: Descriptors

    /// Closes `fd`. Not retried on `EINTR`: on Linux the descriptor is released even then, and a
    /// retry could close a descriptor another thread has just been given.
    static func close(_ fd: Int32) throws(IOError) {
        if Glibc.close(fd) == -1, Glibc.errno != EINTR {
            throw IOError(operation: "close", errno: Glibc.errno)
        }
    }

    /// Reads into `buffer`; `.processed(0)` means end of file.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(IOError) -> IOResult<Int> {
        try nonBlocking("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Opens a file read-only with `O_CLOEXEC` (used for `/proc` files).
    static func openForReading(_ path: String) throws(IOError) -> Int32 {
        try blocking("open") { Glibc.open(path, O_RDONLY | O_CLOEXEC) }
    }

    /// Reads or changes `O_NONBLOCK`.
    static func setNonBlocking(_ fd: Int32, _ nonBlocking: Bool) throws(IOError) {
        let flags = try blocking("fcntl") { Glibc.fcntl(fd, F_GETFL) }
        let wanted = nonBlocking ? flags | O_NONBLOCK : flags & ~O_NONBLOCK
        if wanted != flags { try blocking("fcntl") { Glibc.fcntl(fd, F_SETFL, wanted) } }
    }

    // MARK: Sockets

    /// Creates a TCP/IPv4 socket with `SOCK_CLOEXEC` (and `SOCK_NONBLOCK` if asked).
    static func tcpSocket(nonBlocking: Bool) throws(IOError) -> Int32 {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        return try blocking("socket") { Glibc.socket(AF_INET, type, 0) }
    }

    /// Sends with `MSG_NOSIGNAL`, so a dead peer yields `EPIPE` instead of killing the process.
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(IOError) -> IOResult<Int> {
        try nonBlocking("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Sends several buffers in one call (`sendmsg`, the gathering `writev` with `MSG_NOSIGNAL`: a plain `writev`
    /// would raise SIGPIPE on a dead peer). Takes at most `IOV_MAX` (1024) vectors.
    static func send(_ fd: Int32, vectors: UnsafeBufferPointer<iovec>) throws(IOError) -> IOResult<Int> {
        var message = msghdr()
        message.msg_iov = UnsafeMutablePointer(mutating: vectors.baseAddress)
        message.msg_iovlen = vectors.count
        return try nonBlocking("sendmsg") { Glibc.sendmsg(fd, &message, Int32(MSG_NOSIGNAL)) }
    }

    /// Accepts one connection as a non-blocking, close-on-exec socket, with the peer's address as the kernel
    /// gave it (nil for a family other than IPv4 and IPv6): asked here, it costs no `getpeername` later, and it
    /// is known even once the peer has reset the connection.
    ///
    /// `ECONNABORTED` (the peer gave up while queued) is retried like `EINTR`: it says nothing
    /// about the listener, and the next queued connection may be fine.
    static func accept(_ fd: Int32) throws(IOError) -> IOResult<(Int32, SocketAddress?)> {
        let flags = Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        var storage = sockaddr_storage()
        while true {
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            do throws(IOError) {
                let result = try withUnsafeMutablePointer(to: &storage) { pointer throws(IOError) in
                    try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(IOError) in
                        guard let accept4 = accept4Function else {
                            return try acceptThenConfigure(fd, raw, &length)
                        }
                        return try nonBlocking("accept4") { accept4(fd, raw, &length, flags) }
                    }
                }
                guard case .processed(let accepted) = result else { return .wouldBlock }
                let address = withUnsafePointer(to: &storage) { pointer in
                    pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
                }
                return .processed((accepted, address))
            } catch where error.errno == ECONNABORTED {
                continue
            }
        }
    }

    private typealias Accept4 = @convention(c) (
        Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
    ) -> Int32

    /// glibc declares `accept4` only under `_GNU_SOURCE`, which the Swift Glibc module is not built
    /// with, so it is looked up once at run time (present in every glibc since 2.10).
    private static let accept4Function: Accept4? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "accept4") else { return nil }
        return unsafeBitCast(symbol, to: Accept4.self)
    }()

    /// Fallback for a libc without `accept4`: plain `accept`, then set the flags (two more calls).
    private static func acceptThenConfigure(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>,
                                            _ length: UnsafeMutablePointer<socklen_t>) throws(IOError) -> IOResult<Int32> {
        guard case .processed(let accepted) = try nonBlocking("accept", { Glibc.accept(fd, address, length) }) else {
            return .wouldBlock
        }
        do {
            try setNonBlocking(accepted, true)
            try blocking("fcntl") { Glibc.fcntl(accepted, F_SETFD, FD_CLOEXEC) }
        } catch {
            try? close(accepted)
            throw error
        }
        return .processed(accepted)
    }

    /// Binds `fd` to an IPv4 address.
    static func bind(_ fd: Int32, _ address: sockaddr_in) throws(IOError) {
        var address = address
        _ = try withUnsafePointer(to: &address) { pointer throws(IOError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw throws(IOError) in
                try blocking("bind") { Glibc.bind(fd, raw, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
    }

    /// Starts listening with the given backlog.
    static func listen(_ fd: Int32, backlog: Int32) throws(IOError) {
        try blocking("listen") { Glibc.listen(fd, backlog) }
    }

    /// Connects a *blocking* socket.
    ///
    /// `connect` must not simply be reissued after `EINTR` (the attempt continues in the kernel and a
    /// second call reports `EALREADY`), so after `EINTR` we wait for writability with `poll` and
    /// read the outcome from `SO_ERROR`.
    static func connect(_ fd: Int32, _ address: sockaddr_in) throws(IOError) {
        var address = address
        let result = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                Glibc.connect(fd, raw, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        if result == 0 { return }
        let code = Glibc.errno
        guard code == EINTR || code == EINPROGRESS else { throw IOError(operation: "connect", errno: code) }
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        try blocking("poll") { Glibc.poll(&descriptor, 1, -1) }
        let pending: Int32 = try socketOption(fd, SOL_SOCKET, SO_ERROR)
        if pending != 0 { throw IOError(operation: "connect", errno: pending) }
    }

    /// Sets an integer socket option.
    static func setSocketOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(IOError) {
        var value = value
        try blocking("setsockopt") {
            Glibc.setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size))
        }
    }

    /// Reads an integer socket option.
    static func socketOption(_ fd: Int32, _ level: Int32, _ name: Int32) throws(IOError) -> Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        try blocking("getsockopt") { Glibc.getsockopt(fd, level, name, &value, &length) }
        return value
    }

    /// Binds `fd` to an IPv4 or IPv6 address.
    static func bind(_ fd: Int32, _ address: SocketAddress) throws(IOError) {
        let result = address.withSockaddr { raw, length in Glibc.bind(fd, raw, length) }
        if result == -1 { throw IOError(operation: "bind", errno: Glibc.errno) }
    }

    /// The local or remote (`peer`) address of a socket, IPv4 or IPv6.
    static func socketAddress(_ fd: Int32, peer: Bool) throws(IOError) -> SocketAddress {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                peer ? Glibc.getpeername(fd, raw, &length) : Glibc.getsockname(fd, raw, &length)
            }
        }
        if result == -1 { throw IOError(operation: peer ? "getpeername" : "getsockname", errno: Glibc.errno) }
        let address = withUnsafePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
        }
        guard let address else { throw IOError(operation: "getsockname", errno: EAFNOSUPPORT) }
        return address
    }

    /// Shuts down one or both directions (`SHUT_WR`, `SHUT_RDWR`).
    static func shutdown(_ fd: Int32, _ how: Int32) throws(IOError) {
        try blocking("shutdown") { Glibc.shutdown(fd, how) }
    }

    // MARK: Names and connecting over IPv4 or IPv6 (clients)

    /// `getaddrinfo` for TCP: every address of `host` at `port`, in the resolver's order. Its failures are
    /// not errnos, so they are mapped to the nearest one (`EHOSTUNREACH` for a name that does not resolve,
    /// `EAGAIN` for a temporary failure) with the host and the resolver's own words in the operation
    /// (`getaddrinfo: race.example.org: Name or service not known`).
    static func resolve(host: String, port: UInt16) throws(IOError) -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(host, String(port), &hints, &list)
        guard code == 0 else {
            let savedErrno = Glibc.errno
            let reason = String(cString: gai_strerror(code))
            let errno: Int32
            switch code {
            case EAI_AGAIN: errno = EAGAIN
            case EAI_MEMORY: errno = ENOMEM
            case EAI_SYSTEM: errno = savedErrno
            default: errno = EHOSTUNREACH
            }
            throw IOError(operation: "getaddrinfo: \(host): \(reason)", errno: errno)
        }
        defer { freeaddrinfo(list) }
        var addresses: [SocketAddress] = []
        var entry = list
        while let current = entry {
            if let raw = current.pointee.ai_addr,
               let address = SocketAddress(raw, length: current.pointee.ai_addrlen) {
                addresses.append(address)
            }
            entry = current.pointee.ai_next
        }
        return addresses
    }

    /// Creates a TCP socket of `family` (`AF_INET` or `AF_INET6`) with `SOCK_CLOEXEC` (and `SOCK_NONBLOCK`).
    static func tcpSocket(family: Int32, nonBlocking: Bool) throws(IOError) -> Int32 {
        var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
        return try blocking("socket") { Glibc.socket(family, type, 0) }
    }

    /// Connects a *non-blocking* socket, waiting up to `timeoutMilliseconds` (`ETIMEDOUT` after that).
    static func connect(_ fd: Int32, _ address: SocketAddress, timeoutMilliseconds: Int32) throws(IOError) {
        let result = address.withSockaddr { raw, length in Glibc.connect(fd, raw, length) }
        if result == 0 { return }
        let code = Glibc.errno
        guard code == EINTR || code == EINPROGRESS else { throw IOError(operation: "connect", errno: code) }
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        let ready = try blocking("poll") { Glibc.poll(&descriptor, 1, timeoutMilliseconds) }
        if ready == 0 { throw IOError(operation: "connect", errno: ETIMEDOUT) }
        let pending: Int32 = try socketOption(fd, SOL_SOCKET, SO_ERROR)
        if pending != 0 { throw IOError(operation: "connect", errno: pending) }
    }

    /// Waits until `fd` has one of `events` (`POLLIN`, `POLLOUT`) or an error or hang-up, at most
    /// `timeoutMilliseconds` (-1: no limit); false when the time ran out. For a client thread that owns a
    /// non-blocking socket (the cluster bus's connections), never for an event loop. `EINTR` waits again with
    /// the same time, so a signal can lengthen the wait; the callers' timeouts are ceilings, not measurements.
    static func poll(_ fd: Int32, events: Int16, timeoutMilliseconds: Int32) throws(IOError) -> Bool {
        var descriptor = pollfd(fd: fd, events: events, revents: 0)
        return try blocking("poll") { Glibc.poll(&descriptor, 1, timeoutMilliseconds) } > 0
    }

    // MARK: epoll

    /// Creates a close-on-exec epoll instance.
    static func epollCreate() throws(IOError) -> Int32 {
        try blocking("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
    }

    /// Adds, modifies or removes a registration (`EPOLL_CTL_ADD` / `_MOD` / `_DEL`).
    static func epollControl(_ epollFD: Int32, _ operation: Int32, _ fd: Int32, events: UInt32, data: UInt64) throws(IOError) {
        var event = epoll_event()
        event.events = events
        event.data.u64 = data
        try blocking("epoll_ctl") { epoll_ctl(epollFD, operation, fd, &event) }
    }

    /// Waits for events; `EINTR` returns zero events (the loop turn then simply finds nothing to do).
    static func epollWait(_ epollFD: Int32, _ events: UnsafeMutablePointer<epoll_event>, capacity: Int32, timeoutMilliseconds: Int32) throws(IOError) -> Int {
        let count = epoll_wait(epollFD, events, capacity, timeoutMilliseconds)
        if count >= 0 { return Int(count) }
        if Glibc.errno == EINTR { return 0 }
        throw IOError(operation: "epoll_wait", errno: Glibc.errno)
    }

    // MARK: eventfd, signalfd

    /// Creates a non-blocking, close-on-exec eventfd used to wake the loop.
    static func eventFD() throws(IOError) -> Int32 {
        try blocking("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
    }

    /// Adds one to an eventfd counter. `.wouldBlock` only if the counter is saturated, which for a
    /// wake-up flag means "already awake" and can be ignored.
    static func signalEventFD(_ fd: Int32) throws(IOError) -> IOResult<Int> {
        var one: UInt64 = 1
        return try nonBlocking("write(eventfd)") { Glibc.write(fd, &one, MemoryLayout<UInt64>.size) }
    }

    /// Resets an eventfd counter to zero; `.wouldBlock` if it was already zero.
    static func drainEventFD(_ fd: Int32) throws(IOError) -> IOResult<UInt64> {
        var value: UInt64 = 0
        switch try nonBlocking("read(eventfd)", { Glibc.read(fd, &value, MemoryLayout<UInt64>.size) }) {
        case .processed: return .processed(value)
        case .wouldBlock: return .wouldBlock
        }
    }

    /// Blocks `signals` in the calling thread (threads created later inherit the mask).
    static func blockSignals(_ signals: [Int32]) throws(IOError) -> sigset_t {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        let result = pthread_sigmask(SIG_BLOCK, &set, nil)
        if result != 0 { throw IOError(operation: "pthread_sigmask", errno: result) }
        return set
    }

    /// Creates a non-blocking, close-on-exec signalfd for `set`.
    static func signalFD(_ set: sigset_t) throws(IOError) -> Int32 {
        var set = set
        return try blocking("signalfd") { signalfd(-1, &set, Int32(SFD_NONBLOCK | SFD_CLOEXEC)) }
    }

    /// Reads one pending signal from a signalfd.
    static func readSignal(_ fd: Int32) throws(IOError) -> IOResult<Int32> {
        var info = signalfd_siginfo()
        let size = MemoryLayout<signalfd_siginfo>.size
        switch try nonBlocking("read(signalfd)", { Glibc.read(fd, &info, size) }) {
        case .processed: return .processed(Int32(bitPattern: info.ssi_signo))
        case .wouldBlock: return .wouldBlock
        }
    }

    // MARK: Limits and clocks

    /// The soft and hard `RLIMIT_NOFILE` limits.
    static func openFileLimit() throws(IOError) -> rlimit {
        var limit = rlimit()
        try blocking("getrlimit") { getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) }
        return limit
    }

    /// Sets `RLIMIT_NOFILE`.
    static func setOpenFileLimit(_ limit: rlimit) throws(IOError) {
        var limit = limit
        try blocking("setrlimit") { setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) }
    }

    /// Nanoseconds on the monotonic clock (immune to wall-clock changes; used for timers).
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
