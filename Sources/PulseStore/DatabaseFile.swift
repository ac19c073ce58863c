import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The database file as the operating system sees it: which file it is (device and inode),
/// whether it is whole, and whether it is still there.
///
/// POSIX rule this type keeps: a process that has a SQLite connection to a file must never
/// open and close another descriptor of that file — the close drops every POSIX lock the
/// process holds on it, SQLite's too, and another process may then checkpoint and delete the
/// WAL under the open connection. So the header is read only before this process opens the
/// file with SQLite (``checkBeforeOpening(_:)``), and the watch uses `stat` alone.
public final class DatabaseFile: Sendable {
    public let path: String
    private let device: UInt64
    private let inode: UInt64
    /// The largest size seen: the file never shrinks (no VACUUM; checkpoints only grow it).
    private let largestSize: Mutex<Int64>

    /// What is wrong with the file, in words.
    public enum Problem: Error, Equatable, CustomStringConvertible {
        case missing(String)
        case replaced(String)
        case damaged(String, reason: String)

        public var description: String {
            switch self {
            case let .missing(path):
                "the household database \(path) was deleted (or moved) while in use. \(Self.recovery(path))"
            case let .replaced(path):
                "the household database \(path) was replaced by another file while in use. \(Self.recovery(path))"
            case let .damaged(path, reason):
                "the household database \(path) is damaged (\(reason)); it is not used, and nothing is synced from it. "
                    + Self.recovery(path)
            }
        }

        static func recovery(_ path: String) -> String {
            "Nothing more is written to it or synced from it. Put the file back, "
                + "or move it aside (`mv \(path) \(path).damaged`, with its -wal and -shm files) and run "
                + "`pulse-peer join CODE` in the same home with a code from another machine: it sends a whole copy."
        }
    }

    private init(path: String, info: stat) {
        self.path = path
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
        largestSize = Mutex(Int64(info.st_size))
    }

    /// Checks that an existing file is whole — SQLite's header, and at least as many bytes as
    /// the header says it has pages — before this process opens it with SQLite. A missing
    /// file passes (SQLite creates it).
    static func checkBeforeOpening(_ path: String) throws(Problem) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_size > 0 else { return }
        var header = [UInt8](repeating: 0, count: 100)
        let read = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 100, 0) }
        guard read == 100, header.starts(with: Array("SQLite format 3\0".utf8)) else {
            throw .damaged(path, reason: "its header is not SQLite's: not a pulse-peer database")
        }
        let rawPageSize = Int(header[16]) << 8 | Int(header[17])
        let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
        let pages = Int(header[28]) << 24 | Int(header[29]) << 16 | Int(header[30]) << 8 | Int(header[31])
        guard pageSize >= 512, pageSize.nonzeroBitCount == 1 else { throw .damaged(path, reason: "its page size is invalid") }
        // The page count is trustworthy only when written with the current change counter.
        if header[24..<28].elementsEqual(header[92..<96]), Int(info.st_size) < pages * pageSize {
            throw .damaged(path, reason: "it is \(info.st_size) bytes, shorter than its \(pages) pages of \(pageSize) bytes: truncated")
        }
    }

    /// The file now at `path` (after SQLite opened or created it), by `stat`.
    static func current(_ path: String) throws(Problem) -> DatabaseFile {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .missing(path) }
        return DatabaseFile(path: path, info: info)
    }

    /// Throws when the file at `path` is gone, is another file, or got shorter.
    public func checkUnchanged() throws(Problem) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw .missing(path) }
        guard UInt64(info.st_dev) == device, UInt64(info.st_ino) == inode else { throw .replaced(path) }
        let size = Int64(info.st_size)
        let shrunk = largestSize.withLock { largest -> Bool in
            if size < largest { return true }
            largest = size
            return false
        }
        if shrunk { throw .damaged(path, reason: "it got shorter while in use (\(size) bytes): truncated") }
    }
}
