import FoundationEssentials
import PulseHousehold
import PulseSystem
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
        Payload(
            id: notification.id, replaces: notification.replaces, group: notification.group.rawValue,
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
        let spawned = Subprocess.spawn("/bin/sh", ["-c", command], stdin: .descriptor(fds[0]), closing: [fds[1], fds[0]])
        close(fds[0])
        guard case let .success(pid) = spawned else {
            close(fds[1])
            if case let .failure(error) = spawned { return "cannot run the notification hook: \(String(cString: strerror(error.errno)))" }
            return "cannot run the notification hook"
        }
        // The payload is small (well under a pipe's 64 KiB buffer): one write, then EOF.
        var failure: String?
        signal(SIGPIPE, SIG_IGN) // a hook that exits without reading: EPIPE here, not a dead agent
        let written = stdin.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
        if written != stdin.count { failure = "the notification hook did not read its input" }
        close(fds[1])
        let deadline = ContinuousClock.now + timeout
        while true {
            switch Subprocess.poll(pid) {
            case .gone: return failure
            case let .ended(.exited(code)): return code != 0 ? "the notification hook exited with status \(code)" : failure
            case let .ended(.signalled(signal)): return "the notification hook was killed by signal \(signal)"
            case .running: break
            }
            if ContinuousClock.now >= deadline || Task.isCancelled {
                kill(pid, SIGKILL)
                _ = Subprocess.wait(pid)
                return Task.isCancelled ? failure : "the notification hook ran longer than \(timeout): killed"
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }
}
