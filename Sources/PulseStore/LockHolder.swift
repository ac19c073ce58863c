import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Who holds a database's write lock, in words a person can act on. In WAL mode SQLite's
/// write lock is a POSIX record lock on byte 120 of the `-shm` file (the unix VFS's
/// `UNIX_SHM_BASE` plus `WAL_WRITE_LOCK` = 0); `F_GETLK` names the process holding it.
enum LockHolder {
    static let writeLockOffset: off_t = 120

    /// "process 1234 (pulse-peer run --home …)", or nil when nobody holds it (or it cannot be told).
    static func describe(database path: String) -> String? {
        let fd = open(path + "-shm", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var lock = flock()
        lock.l_type = Int16(F_WRLCK)
        lock.l_whence = Int16(SEEK_SET)
        lock.l_start = writeLockOffset
        lock.l_len = 1
        guard fcntl(fd, F_GETLK, &lock) == 0, lock.l_type != Int16(F_UNLCK), lock.l_pid > 0 else { return nil }
        return "process \(lock.l_pid)" + (commandLine(of: lock.l_pid).map { " (\($0))" } ?? "")
    }

    /// The command line of `pid`, shortened, from /proc.
    static func commandLine(of pid: pid_t) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else { return nil }
        let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard let first = words.first else { return nil }
        let text = ([String(first.split(separator: "/").last ?? Substring(first))] + words.dropFirst())
            .joined(separator: " ").split(whereSeparator: \.isNewline).joined(separator: " ")
        return text.count > 80 ? String(text.prefix(79)) + "…" : text
    }
}
