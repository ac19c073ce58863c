import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The database file as the operating system sees it: which file it is (device and inode)
/// and whether it is whole (SQLite's header, and at least as many bytes as the header says
/// it has pages). Cheap — one `stat` and one 100-byte read — so the agent checks it every
/// second, and every open checks it before SQLite reads anything.
public struct DatabaseFile: Sendable, Equatable {
    public let path: String
    let device: UInt64
    let inode: UInt64

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
            "Stopped, so that nothing is written to or synced from a file that is not the household's. Put the file back, "
                + "or move it aside (`mv \(path) \(path).damaged`, with its -wal and -shm files) and run "
                + "`pulse-peer join CODE` in the same home with a code from another machine: it sends a whole copy."
        }
    }

    /// The file at `path` now, after checking it is whole.
    public static func check(_ path: String) throws(Problem) -> DatabaseFile {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .missing(path) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .missing(path) }
        var header = [UInt8](repeating: 0, count: 100)
        let read = header.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 100, 0) }
        if info.st_size == 0 {
            // A database SQLite has just created and not yet written: nothing to check.
            return DatabaseFile(path: path, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        }
        guard read == 100, header.starts(with: Array("SQLite format 3\0".utf8)) else {
            throw .damaged(path, reason: "its header is not SQLite's")
        }
        let rawPageSize = Int(header[16]) << 8 | Int(header[17])
        let pageSize = rawPageSize == 1 ? 65_536 : rawPageSize
        let pages = Int(header[28]) << 24 | Int(header[29]) << 16 | Int(header[30]) << 8 | Int(header[31])
        let counter = header[24..<28], validFor = header[92..<96]
        guard pageSize >= 512, pageSize.nonzeroBitCount == 1 else { throw .damaged(path, reason: "its page size is invalid") }
        // The page count is trustworthy only when written with the current change counter.
        if counter.elementsEqual(validFor), Int(info.st_size) < pages * pageSize {
            throw .damaged(path, reason: "it is \(info.st_size) bytes, shorter than its \(pages) pages of \(pageSize) bytes: truncated")
        }
        return DatabaseFile(path: path, device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Throws when the file at `path` is no longer this file, or is no longer whole.
    public func checkUnchanged() throws(Problem) {
        let now = try Self.check(path)
        guard now.device == device, now.inode == inode else { throw .replaced(path) }
    }
}
