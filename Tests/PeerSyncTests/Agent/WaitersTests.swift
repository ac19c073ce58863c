import Testing
@testable import PeerSync

/// Every wait ends: by its event, or by the cancellation of its task.
@Suite struct WaitersTests {
    @Test func anEventBetweenRegisterAndWaitIsNotMissed() async {
        let waiters = Waiters()
        let ticket = waiters.register()
        waiters.resumeAll()
        await waiters.wait(ticket) // returns at once
        #expect(waiters.count == 0)
    }

    @Test func anEventResumesEveryWaiter() async {
        let waiters = Waiters()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 {
                let ticket = waiters.register()
                group.addTask { await waiters.wait(ticket) }
            }
            #expect(waiters.count == 3)
            waiters.resumeAll()
            await group.waitForAll()
        }
        #expect(waiters.count == 0)
    }

    @Test func cancellingTheTaskEndsItsWaitAndOnlyItsWait() async {
        let waiters = Waiters()
        let other = waiters.register()
        let cancelled = Task {
            let ticket = waiters.register()
            await waiters.wait(ticket)
        }
        cancelled.cancel()
        await cancelled.value // would hang before the waiters were cancellation-safe
        #expect(waiters.count == 1) // the other one still waits for its event
        waiters.resumeAll()
        await waiters.wait(other)
        #expect(waiters.count == 0)
    }
}
