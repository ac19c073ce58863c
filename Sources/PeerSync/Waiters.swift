import Synchronization

/// Tasks waiting for an event, each resumed exactly once: by the event, or by its own
/// cancellation (so a cancelled waiter never keeps a task group or a shutdown waiting).
///
/// Register first, synchronously, where the condition was checked (inside an actor), then
/// wait: an event that comes in between is not missed — `wait` returns at once.
final class Waiters: Sendable {
    private enum Entry {
        case registered
        case waiting(CheckedContinuation<Void, Never>)
    }

    private struct State {
        var next: UInt64 = 0
        var entries: [UInt64: Entry] = [:]
    }

    private let state = Mutex(State())

    /// A ticket for `wait`; every event after this call resumes it.
    func register() -> UInt64 {
        state.withLock { state in
            state.next += 1
            state.entries[state.next] = .registered
            return state.next
        }
    }

    /// Returns once an event came after `register()`, or when the task is cancelled.
    func wait(_ ticket: UInt64) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    guard case .registered? = state.entries[ticket], !Task.isCancelled else {
                        state.entries[ticket] = nil
                        return true
                    }
                    state.entries[ticket] = .waiting(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            resume(ticket)
        }
    }

    /// The event: every registered waiter returns.
    func resumeAll() {
        let entries = state.withLock { state in
            defer { state.entries.removeAll() }
            return state.entries
        }
        for case let .waiting(continuation) in entries.values { continuation.resume() }
    }

    private func resume(_ ticket: UInt64) {
        let entry = state.withLock { $0.entries.removeValue(forKey: ticket) }
        if case let .waiting(continuation)? = entry { continuation.resume() }
    }

    /// Waiters registered and not yet resumed.
    var count: Int { state.withLock { $0.entries.count } }
}
