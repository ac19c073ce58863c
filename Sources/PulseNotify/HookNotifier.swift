import FoundationEssentials
import PulseHousehold
#if canImport(Glibc)
import Glibc
#endif

/// `pulse-peer run --on-notify CMD`: each notification runs `/bin/sh -c CMD` with the
/// notification as one JSON object on its standard input (docs/API.md, "Notifications").
/// One hook at a time (an actor), each given 10 s before it is killed; at most 16 wait,
/// beyond that the oldest waiting is dropped (a hook slower than the household cannot make
/// the agent hold an unbounded queue).
public actor HookNotifier {
    public struct Payload: Codable, Sendable {
        public var id: Int
        public var replaces: Int?
        public var group: String
        public var summary: String
        public var body: String
        public var count: Int
        public var events: [HouseholdEventPayload]
    }
    /// The events inside a hook's payload (the feed's fields).
    public typealias HouseholdEventPayload = HouseholdEvent

    public let command: String
    public static let timeout: Duration = .seconds(10)
    public static let maxWaiting = 16
    private var waiting = 0

    public init(command: String) { self.command = command }

    public static func payload(_ notification: PendingNotification) -> Payload {
        Payload(id: notification.id, replaces: notification.replaces, group: notification.group.rawValue,
                summary: notification.summary, body: notification.body, count: notification.count, events: notification.events)
    }

    /// Runs the hook for `notification`; returns a failure to log, or nil.
    public func run(_ notification: PendingNotification) async -> String? {
        guard waiting < Self.maxWaiting else { return "a notification hook is too slow: a notification was skipped" }
        waiting += 1
        defer { waiting -= 1 }
        guard var data = try? JSONEncoder().encode(Self.payload(notification)) else { return "cannot encode a notification" }
        data.append(UInt8(ascii: "\n"))
        return await Self.spawn(command, stdin: data)
    }

    /// `/bin/sh -c command`, `stdin` written to it, waited for (polling every 20 ms, killed
    /// after ``timeout`` or on cancellation, always reaped).
    static func spawn(_ command: String, stdin: Data) async -> String? {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return "cannot run the notification hook: pipe failed" }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[0], 0)
        posix_spawn_file_actions_addclose(&actions, fds[1])
        posix_spawn_file_actions_addclose(&actions, fds[0])
        // A child inherits the signal mask and ignored signals (the agent ignores SIGTERM and
        // SIGPIPE to handle them itself): give the hook an empty mask and default handlers.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t(), allSignals = sigset_t()
        sigemptyset(&noSignals)
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let argv: [UnsafeMutablePointer<CChar>?] = [strdup("/bin/sh"), strdup("-c"), strdup(command), nil]
        defer { for arg in argv { free(arg) } }
        let spawned = posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, environ)
        close(fds[0])
        guard spawned == 0 else {
            close(fds[1])
            return "cannot run the notification hook: \(String(cString: strerror(spawned)))"
        }
        // The payload is small (well under a pipe's 64 KiB buffer): one write, then EOF.
        var failure: String?
        signal(SIGPIPE, SIG_IGN) // a hook that exits without reading: EPIPE here, not a dead agent
        let written = stdin.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        if written != stdin.count { failure = "the notification hook did not read its input" }
        close(fds[1])
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid { break }
            if done < 0 { return failure }
            if ContinuousClock.now >= deadline || Task.isCancelled {
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return Task.isCancelled ? failure : "the notification hook ran longer than \(timeout): killed"
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let exited = status & 0x7f == 0
        if exited, (status >> 8) & 0xff != 0 { return "the notification hook exited with status \((status >> 8) & 0xff)" }
        if !exited { return "the notification hook was killed by signal \(status & 0x7f)" }
        return failure
    }
}
