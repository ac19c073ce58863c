/// One at a time, across suspension points (an actor alone lets a second caller in at each
/// `await`). Waiters go in order; a waiter is let in even if its task was cancelled meanwhile
/// (it finishes its short change and leaves).
public actor AsyncGate {
    public init() {}
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    public func enter() async {
        guard busy else {
            busy = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    public func leave() {
        if waiting.isEmpty { busy = false } else { waiting.removeFirst().resume() }
    }
}
