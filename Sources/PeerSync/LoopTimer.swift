import NIOCore
import NIOPosix
import Synchronization

/// Sleeps on a NIO event loop's timer rather than with `Task.sleep`.
///
/// Measured on these machines (Swift 6.3, Linux): while any `Task.sleep` is pending,
/// libdispatch re-arms its timer once a second until the deadline — a process sleeping one
/// hour wakes 3600 times. The agent's long waits (midnight, keepalive, back-off, the web
/// page's heartbeat) made an idle agent wake every second. A NIO scheduled task arms the
/// event loop's timer once, for its deadline.
///
/// Cancellation-safe: a cancelled sleep ends at once with `CancellationError`.
public enum LoopTimer {
    private enum State {
        case waiting
        case scheduled(Scheduled<Void>)
        case cancelled
    }

    public static func sleep(for duration: Duration) async throws {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = max(0, seconds) * 1_000_000_000 + max(0, attoseconds) / 1_000_000_000
        let state = Mutex(State.waiting)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Error>) in
                let loop = MultiThreadedEventLoopGroup.singleton.any()
                let scheduled = loop.scheduleTask(in: .nanoseconds(nanoseconds)) {}
                let cancelledAlready = state.withLock { state -> Bool in
                    if case .cancelled = state { return true }
                    state = .scheduled(scheduled)
                    return false
                }
                if cancelledAlready { scheduled.cancel() }
                scheduled.futureResult.whenComplete { result in
                    switch result {
                    case .success: continuation.resume()
                    case .failure: continuation.resume(throwing: CancellationError())
                    }
                }
            }
        } onCancel: {
            let scheduled = state.withLock { state -> Scheduled<Void>? in
                defer { state = .cancelled }
                if case let .scheduled(scheduled) = state { return scheduled }
                return nil
            }
            scheduled?.cancel()
        }
    }
}
