/// How a connection waits for another process's write lock (SQLite's busy handler, in place of
/// `sqlite3_busy_timeout`): up to `timeout` milliseconds, looking at who holds the lock as it
/// waits. A writer refused after the wait names the holder even when it let go between the last
/// try and the refusal's words (issue 52: about one "busy" refusal in 23 named nobody).
final class BusyWait: @unchecked Sendable {
    /// How long to wait in all, in milliseconds (0: not at all). Set on the connection's own
    /// thread only, like every use of the connection.
    var timeout: Int32
    /// The holder last seen during the current wait (nil: none seen yet).
    private(set) var holderSeen: String?
    private var started = ContinuousClock.now
    private var lastLook: ContinuousClock.Instant?
    private let look: () -> String?
    /// How long one pause of the wait is, and how often the holder is looked at.
    static let pause = Duration.milliseconds(5)
    static let lookEvery = Duration.milliseconds(100)

    init(timeout: Int32, look: @escaping () -> String?) {
        self.timeout = timeout
        self.look = look
    }

    /// SQLite's call number `count` (0: a new wait) for the lock: whether to try again (after a
    /// pause, taken here). Looks at the holder at the start, every ``lookEvery``, and at the end.
    func retry(count: Int32, now: () -> ContinuousClock.Instant = { .now }, pause: (Duration) -> Void = { _ in }) -> Bool {
        let instant = now()
        if count == 0 {
            started = instant
            holderSeen = nil
            lastLook = nil
        }
        let over = instant - started >= .milliseconds(Int64(timeout))
        if over || lastLook.map({ instant - $0 >= Self.lookEvery }) ?? true {
            lastLook = instant
            if let holder = look() { holderSeen = holder }
        }
        guard !over else { return false }
        pause(Self.pause)
        return true
    }
}
