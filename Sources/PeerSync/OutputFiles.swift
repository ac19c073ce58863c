import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Output that is whole or absent: a file written beside its name and renamed into place,
/// standard output written with every write checked. For exports and backups: a full disk
/// must never leave a file that looks complete.
public enum OutputFiles {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Writes `text` to `path`: a temporary file beside it (mode `mode`), fsynced, renamed into
    /// place, the directory fsynced. On failure the temporary file is removed and `path` is
    /// as it was.
    public static func writeAtomically(_ text: String, to path: String, mode: mode_t = 0o600) throws {
        let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
        let name = path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
        let temporary = (directory.isEmpty ? "" : directory + "/") + ".\(name).\(getpid()).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))") }
        do {
            try writeAll(Array(text.utf8), to: fd, what: path)
            guard fsync(fd) == 0 else { throw Failure(description: "cannot write \(path): \(String(cString: strerror(errno)))") }
            close(fd)
        } catch {
            close(fd)
            unlink(temporary)
            throw error
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw Failure(description: "cannot write \(path): \(reason)")
        }
        let dirFD = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_CLOEXEC)
        if dirFD >= 0 { fsync(dirFD); close(dirFD) }
    }

    /// Writes `text` to standard output, every byte or a failure in words.
    public static func writeToStandardOutput(_ text: String) throws {
        try writeAll(Array(text.utf8), to: STDOUT_FILENO, what: "standard output")
    }

    private static func writeAll(_ bytes: [UInt8], to fd: CInt, what: String) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(
                    description: "could not write to \(what): \(String(cString: strerror(errno))) "
                        + "(\(offset) of \(bytes.count) bytes written: the output is incomplete)")
            }
            offset += written
        }
    }
}
