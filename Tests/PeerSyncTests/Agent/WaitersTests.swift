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

/// The agent's sleeps run on a NIO timer (LoopTimer.swift says why): they last their
/// duration, and a cancelled one ends at once.
@Suite struct LoopTimerTests {
    @Test func aSleepLastsItsDurationAndACancelledOneEndsAtOnce() async throws {
        let clock = ContinuousClock()
        let slept = try await clock.measure { try await LoopTimer.sleep(for: .milliseconds(50)) }
        #expect(slept >= .milliseconds(50))
        let long = Task { try await LoopTimer.sleep(for: .seconds(3600)) }
        let started = clock.now
        long.cancel()
        await #expect(throws: CancellationError.self) { try await long.value }
        // Ended by its cancellation, not by its hour. The bound is loose on purpose: this
        // process also runs the end-to-end tests, whose blocking waits can hold both threads
        // of the cooperative pool for seconds (15 s measured in one CI run) before this task
        // gets one back to resume on.
        #expect(clock.now - started < .seconds(600))
        // Cancelled before it starts: it never waits.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await LoopTimer.sleep(for: .seconds(3600))
        }
        await #expect(throws: CancellationError.self) { try await early.value }
    }
}
