import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Who holds a database's write lock, in words a person can act on. In WAL mode SQLite's
/// write lock is a POSIX record lock on byte 120 of the `-shm` file (the unix VFS's
/// `UNIX_SHM_BASE` plus `WAL_WRITE_LOCK` = 0). It is read from `/proc/locks`, never by
/// opening the file: closing any descriptor of a file drops every POSIX lock this process
/// holds on it, SQLite's included (which would let another process delete the WAL under us).
package enum LockHolder {
    static let writeLockOffset = 120

    /// "process 1234 (pulse-peer run --home …)", or nil when it cannot be told.
    static func describe(database path: String) -> String? {
        var info = stat()
        guard stat(path + "-shm", &info) == 0,
            let locks = FileManager.default.contents(atPath: "/proc/locks")
        else { return nil }
        let inode = String(info.st_ino)
        for line in String(decoding: locks, as: UTF8.self).split(separator: "\n") {
            // "1: POSIX  ADVISORY  WRITE 29560 fe:00:16228507 120 120"
            let fields = line.split(separator: " ")
            guard fields.count >= 8, fields[1] == "POSIX", fields[3] == "WRITE",
                fields[5].split(separator: ":").last.map(String.init) == inode,
                let start = Int(fields[6]), let end = Int(fields[7]) ?? (fields[7] == "EOF" ? Int.max : nil),
                (start...end).contains(writeLockOffset),
                let pid = pid_t(fields[4]), pid != getpid()
            else { continue }
            return "process \(pid)" + (commandLine(of: pid).map { " (\($0))" } ?? "")
        }
        return nil
    }

    /// The process holding an exclusive `flock` on the file at `path` (the agent's home lock),
    /// from `/proc/locks`: the kernel's own record, there from the moment the lock is taken —
    /// before the holder has written its PID into the file (a loser of a start race read an
    /// empty file and could not name it).
    package static func flockHolder(of path: String) -> pid_t? {
        var info = stat()
        guard stat(path, &info) == 0, let locks = FileManager.default.contents(atPath: "/proc/locks") else { return nil }
        let inode = String(info.st_ino)
        for line in String(decoding: locks, as: UTF8.self).split(separator: "\n") {
            // "2: FLOCK  ADVISORY  WRITE 29560 fe:00:16228507 0 EOF"
            let fields = line.split(separator: " ")
            guard fields.count >= 6, fields[1] == "FLOCK", fields[3] == "WRITE",
                fields[5].split(separator: ":").last.map(String.init) == inode, let pid = pid_t(fields[4]), pid != getpid()
            else { continue }
            return pid
        }
        return nil
    }

    /// The command line of `pid`, shortened, from /proc.
    package static func commandLine(of pid: pid_t) -> String? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"), !data.isEmpty else { return nil }
        let words = data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
        guard let first = words.first else { return nil }
        let text = ([String(first.split(separator: "/").last ?? Substring(first))] + words.dropFirst())
            .joined(separator: " ").split(whereSeparator: \.isNewline).joined(separator: " ")
        return text.count > 80 ? String(text.prefix(79)) + "…" : text
    }
}
