// The listening socket, and the one thread that accepts on it and hands each connection to libmicrohttpd.
import CMicroHTTPD
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The socket clients connect to, and a thread accepting on it.
///
/// libmicrohttpd can accept by itself, but its way to stop that, `MHD_quiesce_daemon`, races the
/// daemon's own worker threads (0.9.75, daemon.c:5531): both may take the socket out of a
/// worker's epoll set, and when the worker is first the stopping thread aborts the whole process
/// ("Failed to remove listen FD from epoll set"). So the daemon runs without a listening socket
/// (`MHD_USE_NO_LISTEN_SOCKET`) and this thread gives it each connection (`MHD_add_connection`
/// picks a worker with room and wakes it). To stop, `shutdown(2)` on the socket makes the kernel
/// refuse new clients at once and returns the blocked `accept`.
final class Listener: Sendable {
    let descriptor: Int32
    /// The port bound (the one picked, when 0 was asked for).
    let port: Int
    private let stopping = Atomic<Bool>(false)
    private let thread = Mutex<ThreadHandle?>(nil)

    /// Binds `address` and listens; throws when the address is taken or not one of this machine's.
    init(address: SocketAddress, backlog: Int) throws {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw HTTPServerError(description: "could not make a socket: \(String(cString: strerror(errno)))")
        }
        var on: Int32 = 1
        // As libmicrohttpd did: a restarted server binds at once although the last one's
        // connections are still in TIME_WAIT, and an IPv6 address serves IPv6 only.
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        if address.isIPv6 {
            _ = setsockopt(descriptor, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = address.withSockaddr { bind(descriptor, $0, address.length) }
        // Non-blocking: a client that left between `poll` and `accept` must not hold the thread.
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        guard bound == 0, listen(descriptor, Int32(clamping: max(1, backlog))) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw HTTPServerError(description: reason)
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        self.descriptor = descriptor
        self.port = named == 0 ? SocketAddress.port(of: storage) : 0
    }

    /// Starts accepting for `daemon`. While `isFull()` nothing is accepted, so new clients wait
    /// in the kernel's backlog (as with libmicrohttpd's own accepting) rather than being accepted
    /// and closed. `admitted()` is called for each connection the daemon took.
    func start(daemon: OpaquePointer, isFull: @escaping @Sendable () -> Bool, admitted: @escaping @Sendable () -> Void) throws {
        let handle = DaemonHandle(pointer: daemon)
        let loop = AcceptLoop { [self] in
            acceptUntilStopped(daemon: handle, isFull: isFull, admitted: admitted)
        }
        var started = pthread_t()
        let context = Unmanaged.passRetained(loop).toOpaque()
        let status = pthread_create(&started, nil, { context in
            guard let context else { return nil }
            let loop = Unmanaged<AcceptLoop>.fromOpaque(context).takeRetainedValue()
            pthread_setname_np(pthread_self(), "fs-accept")
            loop.body()
            return nil
        }, context)
        guard status == 0 else {
            Unmanaged<AcceptLoop>.fromOpaque(context).release()
            throw HTTPServerError(description: "could not start the accepting thread: \(String(cString: strerror(status)))")
        }
        thread.withLock { $0 = ThreadHandle(thread: started) }
    }

    /// Stops accepting: new clients are refused from here on. Waits for the accepting thread, so
    /// no connection reaches the daemon after this returns. Safe to call more than once.
    func stop() {
        guard !stopping.exchange(true, ordering: .sequentiallyConsistent) else { return }
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
        if let running = thread.withLock({ $0.take() }) {
            pthread_join(running.thread, nil)
        }
        close(descriptor)
    }

    private func acceptUntilStopped(daemon: DaemonHandle, isFull: () -> Bool, admitted: () -> Void) {
        var waiting = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        while !stopping.load(ordering: .acquiring) {
            // Wait for a client first and only then look at the limit, so that a client coming
            // while the server is full stays in the backlog. `stop`'s shutdown ends the wait.
            waiting.revents = 0
            let ready = poll(&waiting, 1, -1)
            if stopping.load(ordering: .acquiring) { break }
            if ready < 0 {
                if errno != EINTR { usleep(10_000) }
                continue
            }
            if isFull() {
                usleep(1_000)
                continue
            }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let client = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    accept(descriptor, $0, &length)
                }
            }
            if client >= 0 {
                // libmicrohttpd makes it non-blocking; a child process must not inherit it.
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                // On failure (the per-IP limit, no memory) libmicrohttpd closes the socket itself.
                let taken = withUnsafePointer(to: &storage) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        MHD_add_connection(daemon.pointer, client, $0, length)
                    }
                }
                if taken == .YES { admitted() }
                continue
            }
            switch errno {
            case EINTR, EAGAIN, ECONNABORTED, EPROTO, EPERM:
                continue  // this client is gone or was refused by a firewall: wait for the next
            default:
                // Out of descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM): wait for
                // connections to close, as libmicrohttpd did. After `stop` the socket is shut
                // down (EINVAL) and the loop ends at its check.
                usleep(10_000)
            }
        }
    }
}

/// The daemon pointer, handed to the accepting thread (`MHD_add_connection` may be called from any thread).
private struct DaemonHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

private struct ThreadHandle: @unchecked Sendable {
    let thread: pthread_t
}

/// What the accepting thread runs, passed to it through `pthread_create`'s context pointer.
private final class AcceptLoop {
    let body: () -> Void
    init(body: @escaping () -> Void) { self.body = body }
}
