import Dispatch

/// Runs `body`, which blocks its thread (an SQLite snapshot of the whole database), on a
/// dispatch thread instead of the tasks' pool (two threads on two cores: one blocked for
/// seconds would halve the agent). Not interruptible once started: a cancelled caller waits
/// for it (a backup takes seconds; shutdown is bounded by the service group regardless).
public func onDispatchThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global(qos: .utility).async { continuation.resume(with: Result { try body() }) }
    }
}
