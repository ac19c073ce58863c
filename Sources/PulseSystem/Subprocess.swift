#if canImport(Glibc)
import Glibc
#endif

/// The one way this program starts another: `posix_spawn` with the child's standard streams
/// chosen, an **empty signal mask and default dispositions** (the agent blocks or ignores
/// SIGTERM, SIGINT and SIGPIPE to handle them itself, and a child inherits both: a hook or
/// `systemctl` must not), and always reaped.
public enum Subprocess {
    /// Where a standard stream of the child goes.
    public enum Stream: Sendable {
        case inherit
        case null
        /// This descriptor (dup'ed onto the stream in the child).
        case descriptor(Int32)
    }

    /// How a child ended.
    public enum Termination: Sendable, Equatable {
        case exited(Int32)
        case signalled(Int32)

        init(waitStatus status: Int32) {
            self = status & 0x7F == 0 ? .exited((status >> 8) & 0xFF) : .signalled(status & 0x7F)
        }

        /// The shell's convention: the exit code, or 128 + the signal.
        public var code: Int32 {
            switch self {
            case let .exited(code): code
            case let .signalled(signal): 128 + signal
            }
        }
    }

    /// Starts `program` (looked up on `PATH` unless it holds a "/"): the child's pid, or the
    /// `errno` of the failure. `closing`: descriptors of ours the child must not keep (the
    /// other ends of its pipes).
    public static func spawn(
        _ program: String, _ arguments: [String], stdin: Stream = .null, stdout: Stream = .inherit,
        stderr: Stream = .inherit, closing: [Int32] = []
    ) -> Result<pid_t, SpawnError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        // In the child, in this order: the descriptors given are dup'ed onto their streams,
        // ours it must not keep are closed (never a standard stream: a pipe made while our
        // fd 0 was closed is fd 0), then /dev/null is opened where asked.
        let streams = [(stdin, STDIN_FILENO, false), (stdout, STDOUT_FILENO, true), (stderr, STDERR_FILENO, true)]
        for case (.descriptor(let fd), let target, _) in streams { posix_spawn_file_actions_adddup2(&actions, fd, target) }
        for fd in closing where fd > STDERR_FILENO { posix_spawn_file_actions_addclose(&actions, fd) }
        for case (.null, let target, let writable) in streams {
            posix_spawn_file_actions_addopen(&actions, target, "/dev/null", writable ? O_WRONLY : O_RDONLY, 0)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([program] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let failed =
            program.contains("/")
            ? posix_spawn(&pid, program, &actions, &attributes, argv, environ)
            : posix_spawnp(&pid, program, &actions, &attributes, argv, environ)
        return failed == 0 ? .success(pid) : .failure(SpawnError(program: program, errno: failed))
    }

    public struct SpawnError: Error, Sendable, CustomStringConvertible {
        public let program: String
        public let errno: Int32
        /// How it ended, when it ran and failed (`detach`: setsid could not fork).
        public var ended: Termination? = nil
        public var description: String {
            if let ended { return "\(program) failed (exit status \(ended.code))" }
            return "cannot run \(program): \(String(cString: strerror(errno)))"
        }
    }

    /// Waits for `pid` (retrying on EINTR).
    public static func wait(_ pid: pid_t) -> Termination {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return Termination(waitStatus: status)
    }

    public enum Poll: Sendable, Equatable {
        case running
        case ended(Termination)
        /// Not a child of ours (anymore): nothing to wait for.
        case gone
    }

    /// Whether `pid` has ended (never blocks; reaps it when it has).
    public static func poll(_ pid: pid_t) -> Poll {
        var status: Int32 = 0
        let done = waitpid(pid, &status, WNOHANG)
        if done == pid { return .ended(Termination(waitStatus: status)) }
        if done < 0 && errno != EINTR { return .gone }
        return .running
    }

    /// Starts `program` detached from us (`setsid -f`: its own session, not our child, its
    /// standard streams on /dev/null, none of our descriptors), for something that outlives
    /// the caller — an agent, a browser. Waits only for `setsid` itself (a fork, at once).
    public static func detach(_ program: String, _ arguments: [String]) -> Result<Void, SpawnError> {
        switch spawn("setsid", ["-f", program] + arguments, stdin: .null, stdout: .null, stderr: .null, closing: openDescriptors()) {
        case let .success(pid):
            let ended = wait(pid)
            return ended == .exited(0) ? .success(()) : .failure(SpawnError(program: "setsid", errno: 0, ended: ended))
        case let .failure(error): return .failure(error)
        }
    }

    /// Our open descriptors above the standard streams (for a child that must keep none: one
    /// closed meanwhile is skipped by posix_spawn's close action).
    public static func openDescriptors() -> [Int32] {
        guard let directory = opendir("/proc/self/fd") else { return [] }
        defer { closedir(directory) }
        let own = dirfd(directory)
        var descriptors: [Int32] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if let fd = Int32(name), fd > STDERR_FILENO, fd != own { descriptors.append(fd) }
        }
        return descriptors
    }

    /// Runs `program` with standard input from /dev/null and collects what it prints on
    /// standard output and error (one pipe), waiting for it to end.
    public static func run(_ program: String, _ arguments: [String]) -> (termination: Termination, output: String)? {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return nil }
        let spawned = spawn(program, arguments, stdin: .null, stdout: .descriptor(fds[1]), stderr: .descriptor(fds[1]), closing: [fds[0]])
        close(fds[1])
        defer { close(fds[0]) }
        guard case let .success(pid) = spawned else { return nil }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(fds[0], &chunk, chunk.count)
            if count > 0 { bytes += chunk[0..<count] } else if count < 0 && errno == EINTR { continue } else { break }
        }
        return (wait(pid), String(decoding: bytes, as: UTF8.self))
    }
}
