// Opening a SQLite file: why it cannot be opened, in words, and the lock that makes its server
// the only one.
import FlowStore
import Foundation
import GRDB
#if canImport(Glibc)
import Glibc
#endif

extension SQLiteStore {
    /// Why the database at `path` cannot be opened for writing, from the file system: a
    /// missing folder, a path through a file, a folder given as the file, a read-only file or
    /// folder. Nil when nothing there explains a failure.
    ///
    /// ```swift
    /// SQLiteStore.openProblem(path: "./nope/x.sqlite")   // "the folder ./nope does not exist"
    /// ```
    public static func openProblem(path: String) -> String? {
        let folder = Self.folder(of: path)
        var info = stat()
        if stat(path, &info) == 0 {
            if info.st_mode & S_IFMT == S_IFDIR {
                return "it is a folder, not a file (give a file in it, such as \(path.hasSuffix("/") ? path : path + "/")flowstack.sqlite)"
            }
            if info.st_mode & S_IFMT != S_IFREG {
                return "it is not a regular file"
            }
            if access(path, R_OK | W_OK) != 0 {
                return "the file is read-only for this user (uid \(getuid()); the file's owner is uid \(info.st_uid), "
                    + "mode \(String(info.st_mode & 0o777, radix: 8))); flowstack writes to it"
            }
            if access(folder, W_OK | X_OK) != 0 {
                return "the folder \(folder) is not writable for this user (uid \(getuid())); "
                    + "SQLite creates \(path)-wal and \(path)-shm beside the file"
            }
            return nil
        }
        let code = errno
        switch code {
        case ENOENT:
            // The file is missing (it would be created): is its folder there and writable?
            var folderInfo = stat()
            if stat(folder, &folderInfo) != 0 {
                if errno == ENOTDIR { return Self.notAFolder(on: folder) }
                return "the folder \(folder) does not exist"
            }
            if folderInfo.st_mode & S_IFMT != S_IFDIR { return "\(folder) is not a folder" }
            if access(folder, W_OK | X_OK) != 0 {
                return "it does not exist and cannot be created: the folder \(folder) is not writable for this user (uid \(getuid()))"
            }
            return nil
        case ENOTDIR:
            return Self.notAFolder(on: folder)
        case EACCES:
            return "a folder on its path cannot be searched by this user (uid \(getuid()))"
        default:
            return String(cString: strerror(code))
        }
    }

    /// The folder that holds `path` ("." for a bare file name).
    static func folder(of path: String) -> String {
        let folder = (path as NSString).deletingLastPathComponent
        return folder.isEmpty ? "." : folder
    }

    /// The first component of `folder` that exists but is a file, named.
    static func notAFolder(on folder: String) -> String {
        var prefix = folder.hasPrefix("/") ? "/" : ""
        for component in folder.split(separator: "/") {
            prefix = prefix.isEmpty || prefix.hasSuffix("/") ? prefix + component : prefix + "/" + component
            var info = stat()
            if stat(prefix, &info) == 0, info.st_mode & S_IFMT != S_IFDIR { return "\(prefix) is a file, not a folder" }
        }
        return "\(folder) is not a folder"
    }

    /// The error of opening `path`, with its cause in words: the file system's (`openProblem`),
    /// else SQLite's own, said plainly for a file that is not a database.
    static func openError(path: String, _ error: any Error) -> StoreError {
        if let problem = openProblem(path: path) { return .cannotOpen(path: path, reason: problem) }
        if let error = error as? DatabaseError {
            switch error.resultCode {
            case .SQLITE_NOTADB:
                return .cannotOpen(path: path, reason: "it is not a SQLite database (SQLite: \(error.message ?? "file is not a database"))")
            case .SQLITE_CORRUPT:
                return .cannotOpen(path: path, reason: "the database is corrupt (SQLite: \(error.message ?? "malformed")); restore a backup")
            default:
                return .cannotOpen(path: path, reason: "SQLite error \(error.resultCode.rawValue): \(error.message ?? "\(error)")")
            }
        }
        return .cannotOpen(path: path, reason: "\(error)")
    }

    /// An exclusive lock on `PATH.lock` that says "this process serves PATH": held while the
    /// process runs, released by the kernel when it exits however it exits (kill -9 included),
    /// so a second server on the same file refuses to start (`StoreError.inUse`) instead of
    /// serving stale state from its memory. The file holds the holder's pid and start time, for
    /// the message. A lock (`flock`) on a file beside the database, not on it: SQLite's own
    /// locks on the database stay as they are.
    ///
    /// ```swift
    /// let lock = try SQLiteStore.OwnerLock(path: "./flowstack.sqlite")   // held until released or exit
    /// ```
    public final class OwnerLock: @unchecked Sendable {
        public let lockPath: String
        private var descriptor: Int32

        public init(path: String) throws(StoreError) {
            // The file's own name, symbolic links resolved: two spellings of one file share one lock.
            let resolved = realpath(path, nil).map { pointer in
                defer { free(pointer) }
                return String(cString: pointer)
            }
            lockPath = (resolved ?? path) + ".lock"
            let descriptor = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else {
                let cause = String(cString: strerror(errno))
                throw .cannotOpen(path: path, reason: SQLiteStore.openProblem(path: path)
                    ?? "cannot create its lock file \(lockPath): \(cause)")
            }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                let code = errno
                let holder = Self.holder(descriptor)
                Glibc.close(descriptor)
                if code == EWOULDBLOCK { throw .inUse(path: path, holder: holder, lockPath: lockPath) }
                throw .cannotOpen(path: path, reason: "cannot lock \(lockPath): \(String(cString: strerror(code)))")
            }
            self.descriptor = descriptor
            let started = ISO8601DateFormatter().string(from: Date())
            let text = Array("\(getpid()) \(started)\n".utf8)
            if ftruncate(descriptor, 0) == 0 {
                _ = text.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
            }
        }

        deinit { release() }

        /// Lets another process take the file (the kernel does it as well when this one exits).
        public func release() {
            guard descriptor >= 0 else { return }
            Glibc.close(descriptor)  // drops the flock
            descriptor = -1
        }

        /// "pid N, started T" from the lock file, as far as it can be read.
        static func holder(_ descriptor: Int32) -> String {
            var buffer = [UInt8](repeating: 0, count: 256)
            let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
            let words = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self).split(whereSeparator: \.isWhitespace)
            guard let pid = words.first, Int(pid) != nil else { return "pid unknown" }
            return words.count > 1 ? "pid \(pid), started \(words[1])" : "pid \(pid)"
        }
    }
}
