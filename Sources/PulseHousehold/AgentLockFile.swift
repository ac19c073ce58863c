import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseStore

/// The running agent's lock file in the home, as other processes of the machine read it
/// (the agent holds it: PeerSync/HomeLock.swift): `agent.lock`, its PID and a random token
/// of its life.
///
/// A local write of the CLI raises `published_seq` in its own commit (PulseStore/Rewind.swift)
/// when the agent running now has passed the check of a peer's vector: the agent then writes
/// its token into `meta.publishing_token`, and the CLI compares it with the token of the agent
/// holding the lock. A home restored from a copy holds an older agent's token, and a dead
/// agent holds no lock: then the CLI's writes are marked by the agent's sender instead.
public enum AgentLockFile {
    public static let fileName = "agent.lock"
    package static let publishingTokenKey = "publishing_token"

    /// The file's text: the holder's PID, then its token, a line each.
    package static func contents(pid: Int32, token: String) -> [UInt8] { Array("\(pid)\n\(token)\n".utf8) }

    /// The PID and token the file at `fd` names (either nil when it says nothing usable).
    package static func read(_ fd: CInt) -> (pid: Int32?, token: String?) {
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return (nil, nil) }
        let lines = String(decoding: buffer[..<count], as: UTF8.self).split(separator: "\n")
        return (lines.first.flatMap { Int32($0) }, lines.count >= 2 ? String(lines[1]) : nil)
    }

    /// The token of the agent holding the lock of `home` now, or nil when none holds it (a
    /// probe: a shared lock tried and dropped, never waited for).
    public static func runningToken(_ home: HouseholdHome) -> String? {
        let fd = open(home.directory.appendingPathComponent(fileName).path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK else { return nil }
        return read(fd).token
    }
}

extension Household {
    /// Whether this process's writes are sent at once by an agent that passed the check
    /// (AgentLockFile): then they raise `published_seq` in their own commit.
    func agentPublishes() -> Bool {
        guard let running = AgentLockFile.runningToken(home),
            let token = try? store.meta(AgentLockFile.publishingTokenKey)?.textValue
        else { return false }
        return running == token
    }

    /// The agent passed the check of a peer's vector: its writes, and the CLI's while it runs,
    /// are published as they commit.
    public func startPublishingWrites(token: String) throws {
        store.publishesWrites = true
        if try store.meta(AgentLockFile.publishingTokenKey)?.textValue != token {
            try store.setMeta(AgentLockFile.publishingTokenKey, .text(token))
        }
    }

    /// Nothing is published by writes until a peer's vector is checked again (a new replica).
    public func stopPublishingWrites() throws {
        store.publishesWrites = false
        try store.removeMeta(AgentLockFile.publishingTokenKey)
    }
}
