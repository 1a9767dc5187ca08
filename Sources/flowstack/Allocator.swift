// Which malloc serves the server: jemalloc, linked into this executable (Sources/CJemalloc).
import CJemalloc
import Foundation

/// The server's memory allocator. The executable links jemalloc, which then comes before glibc
/// in the dynamic linker's search order and serves every allocation of the process: Swift's
/// runtime, SQLite, libmicrohttpd. With glibc's malloc, an action cost about 15% more CPU
/// (BENCHMARKS.md, thirty-first session): an HTTP thread allocates a turn's objects and the writer
/// thread frees them, so each thread's cache of freed blocks is always empty on one side and
/// full on the other, and both take the same arena's lock for nearly every block (over one
/// futex call an action, against 0.2 with jemalloc, whose caches take blocks from any thread).
enum Allocator {
    /// jemalloc's version when it serves this process's `malloc`; nil when another allocator
    /// does (one given with `LD_PRELOAD`, or a link order that put glibc first).
    static func jemallocInUse() -> String? {
        var version: UnsafePointer<CChar>?
        var size = MemoryLayout<UnsafePointer<CChar>?>.size
        guard mallctl("version", &version, &size, nil, 0) == 0, let version else { return nil }
        // jemalloc counts the bytes each thread allocated through it: a block the Swift runtime
        // allocates (its `malloc`, the call every object and array makes) moves the count only
        // if that `malloc` is jemalloc's. (Not `malloc` called here: the optimizer drops a pair
        // of `malloc` and `free` whose block nothing reads.)
        guard let before = allocatedByThisThread() else { return nil }
        let block = UnsafeMutableRawPointer.allocate(byteCount: 4096, alignment: 16)
        let after = allocatedByThisThread()
        block.deallocate()
        guard let after, after >= before + 4096 else { return nil }
        return String(cString: version)
    }

    private static func allocatedByThisThread() -> UInt64? {
        var bytes: UInt64 = 0
        var size = MemoryLayout<UInt64>.size
        return mallctl("thread.allocated", &bytes, &size, nil, 0) == 0 ? bytes : nil
    }
}
