import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseHousehold
import PulseStore

/// One agent per home: `agent.lock` (mode 0600) in the home directory, held with an
/// exclusive `flock` for the agent's whole life. The kernel drops the lock when the process
/// ends, however it ends (kill -9 included), so a stale file never blocks the next agent.
/// The file holds the holder's PID, for the refusal's words only: the lock, not the text,
/// decides.
///
/// Taken before the agent opens anything else in the home: a second `run` refuses at once
/// and touches nothing (not the control socket, not the change pipe, not the database).
public final class HomeLock: Sendable {
    public static let fileName = AgentLockFile.fileName
    private let descriptor: CInt
    /// A random token of this agent's life, written in the file after the PID: the CLI's
    /// writes compare it with `meta.publishing_token` (AgentLockFile).
    public let token: String

    public enum Failure: Error, CustomStringConvertible, Sendable {
        /// Another agent holds the lock; its PID when the file names one.
        case held(path: String, pid: Int32?)
        case cannotOpen(path: String, reason: String)

        public var description: String {
            switch self {
            case let .held(path, pid):
                let home = String(path.prefix(upTo: path.lastIndex(of: "/") ?? path.endIndex))
                let who = pid.map { "process \($0)" + (LockHolder.commandLine(of: $0).map { " (\($0))" } ?? "") } ?? "another process"
                return "an agent is already running for \(home): \(who); "
                    + "stop it first (`pulse-peer service remove` or Ctrl-C in its terminal), or use another --home"
            case let .cannotOpen(path, reason):
                return "cannot lock \(path): \(reason)"
            }
        }
    }

    public static func path(_ home: HouseholdHome) -> String {
        home.directory.appendingPathComponent(fileName).path
    }

    /// Takes the home's lock, or throws ``Failure/held`` at once (no waiting).
    public init(home: HouseholdHome) throws {
        let path = Self.path(home)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw Failure.cannotOpen(path: path, reason: String(cString: strerror(errno))) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let reason = errno
            // The file names the holder once it has written it; the kernel's lock table at once.
            let pid = AgentLockFile.read(fd).pid ?? LockHolder.flockHolder(of: path)
            close(fd)
            if reason == EWOULDBLOCK { throw Failure.held(path: path, pid: pid) }
            throw Failure.cannotOpen(path: path, reason: String(cString: strerror(reason)))
        }
        // Ours now: record who holds it (for the next one's refusal) and this life's token.
        token = String(UInt64.random(in: 1...UInt64.max), radix: 16)
        let text = AgentLockFile.contents(pid: getpid(), token: token)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        descriptor = fd
    }

    deinit { close(descriptor) }
}
