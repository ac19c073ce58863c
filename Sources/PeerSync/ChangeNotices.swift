import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import PulseHousehold

/// The notice a writer on this machine (the CLI) gives the running agent after each commit:
/// one byte into `changed.fifo`, a named pipe (mode 0600) in the home directory that the
/// agent holds open for reading. A byte carries nothing the agent trusts: it only says "look
/// at the store", and what changed is read from the database. Bytes read together are one
/// notice. (The notice was a request on `control.sock`: a connection accepted, a JSON line
/// decoded and answered, ≈ 120 µs of a 660 µs propagation; a pipe costs a write and a read.
/// An agent of an earlier release has no pipe: ``AgentControl/notifyChanged(home:)`` then
/// sends the request.)
public enum ChangeNotices {
    public static func path(_ home: HouseholdHome) -> String {
        home.directory.appendingPathComponent("changed.fifo").path
    }

    /// Writer: one byte into the pipe, never blocking; false when no agent holds the pipe
    /// open (or there is none), and nothing was written. A full pipe holds notices already.
    public static func send(home: HouseholdHome) -> Bool {
        // O_NONBLOCK: with no reader the open fails (ENXIO) instead of waiting for one.
        let descriptor = open(path(home), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        // Whatever else may have taken the name (a plain file) is not written to.
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else { return false }
        return writeNotice(descriptor)
    }

    /// One byte into `descriptor`, a pipe's write end: true when written or when the pipe
    /// is full (a notice is waiting already). A reader gone between the open and the write
    /// (the agent stopped) would raise SIGPIPE and end the writer — after its commit, before
    /// it said so — so the signal is blocked for the write, a pending one taken back, and
    /// the thread's mask restored: EPIPE is just "no notice".
    static func writeNotice(_ descriptor: CInt) -> Bool {
        var pipeSignal = sigset_t(), previous = sigset_t()
        sigemptyset(&pipeSignal)
        sigaddset(&pipeSignal, SIGPIPE)
        pthread_sigmask(SIG_BLOCK, &pipeSignal, &previous)
        var byte: UInt8 = 1
        let written = write(descriptor, &byte, 1)
        let failure = errno
        if written < 0, failure == EPIPE, sigismember(&previous, SIGPIPE) == 0 {
            var pending = sigset_t()
            sigpending(&pending)
            if sigismember(&pending, SIGPIPE) == 1 {
                var now = timespec(tv_sec: 0, tv_nsec: 0)
                _ = sigtimedwait(&pipeSignal, nil, &now)
            }
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
        return written == 1 || failure == EAGAIN
    }

    /// Agent: makes the pipe afresh (a leftover of an agent killed is replaced, like the
    /// control socket) and opens it for reading. Read-write: the last writer closing it
    /// never ends the stream (Linux keeps a FIFO open both ways).
    static func openForReading(_ path: String) throws -> CInt {
        if unlink(path) != 0 && errno != ENOENT { throw NoticeError("cannot replace \(path): \(String(cString: strerror(errno)))") }
        guard mkfifo(path, 0o600) == 0 else { throw NoticeError("cannot make \(path): \(String(cString: strerror(errno)))") }
        let descriptor = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { throw NoticeError("cannot open \(path): \(String(cString: strerror(errno)))") }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFIFO, info.st_uid == getuid() else {
            close(descriptor)
            throw NoticeError("\(path) is not this user's pipe")
        }
        return descriptor
    }

    /// Agent: calls `changed` once per read of the pipe (`descriptor`, owned from here on)
    /// until cancelled.
    static func serve(_ descriptor: CInt, changed: @escaping @Sendable () async -> Void) async throws {
        let channel = try await DescriptorChannel.reading(descriptor)
        try await channel.executeThenClose { notices, _ in
            for try await _ in notices { await changed() }
        }
    }

    struct NoticeError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
