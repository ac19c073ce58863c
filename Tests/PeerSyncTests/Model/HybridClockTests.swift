import Testing
@testable import PulseModel

@Suite struct HybridClockTests {
    @Test func packsMillisecondsAndCounter() {
        let t = HybridTimestamp(milliseconds: 1_800_000_000_123, counter: 7)
        #expect(t.milliseconds == 1_800_000_000_123)
        #expect(t.counter == 7)
        #expect(HybridTimestamp(milliseconds: 5, counter: 65535) < HybridTimestamp(milliseconds: 6))
    }

    @Test func strictlyMonotonicWithAFrozenClock() {
        var clock = HybridClock()
        var previous = clock.next(physicalMilliseconds: 1000)
        for _ in 0..<70_000 { // more than the 16-bit counter holds: carries into milliseconds
            let t = clock.next(physicalMilliseconds: 1000)
            #expect(t > previous)
            previous = t
        }
        #expect(previous.milliseconds == 1001)
    }

    @Test func followsPhysicalTimeWhenItAdvances() {
        var clock = HybridClock()
        _ = clock.next(physicalMilliseconds: 1000)
        let t = clock.next(physicalMilliseconds: 5000)
        #expect(t == HybridTimestamp(milliseconds: 5000))
    }

    @Test func clockJumpingBackwardsStaysMonotonic() {
        var clock = HybridClock()
        let before = clock.next(physicalMilliseconds: 10_000)
        let after = clock.next(physicalMilliseconds: 2_000) // wall clock set back by 8 s
        #expect(after > before)
        #expect(after.milliseconds == 10_000)
        #expect(after.counter == 1)
    }

    @Test func monotonicAcrossRestartFromPersistedLast() {
        var first = HybridClock()
        let last = first.next(physicalMilliseconds: 9_000)
        var restarted = HybridClock(last: last) // what the store reloads from its database
        #expect(restarted.next(physicalMilliseconds: 1_000) > last)
    }

    @Test func observedRemoteTimestampsOrderLaterLocalEvents() throws {
        var clock = HybridClock()
        _ = clock.next(physicalMilliseconds: 1000)
        let remote = HybridTimestamp(milliseconds: 1500, counter: 3)
        try clock.observe(remote: remote, physicalMilliseconds: 1000)
        #expect(clock.next(physicalMilliseconds: 1000) > remote)
    }

    @Test func remoteTooFarAheadIsRefusedAndLeavesTheClockAlone() {
        var clock = HybridClock(maxDriftMilliseconds: 60_000)
        let local = clock.next(physicalMilliseconds: 1_000_000)
        let far = HybridTimestamp(milliseconds: 1_000_000 + 60_001)
        #expect(throws: ClockError.self) { try clock.observe(remote: far, physicalMilliseconds: 1_000_000) }
        #expect(clock.last == local)
        // Exactly at the bound is accepted.
        #expect(throws: Never.self) {
            try clock.observe(remote: HybridTimestamp(milliseconds: 1_060_000), physicalMilliseconds: 1_000_000)
        }
    }

    @Test func stampsBreakTiesByReplica() {
        let t = HybridTimestamp(milliseconds: 1)
        let low = Stamp(hlc: t, origin: ReplicaID(rawValue: 1))
        let high = Stamp(hlc: t, origin: ReplicaID(rawValue: UInt64.max))
        #expect(low < high) // compared unsigned, identically on every machine
        #expect(Stamp(hlc: HybridTimestamp(milliseconds: 2), origin: ReplicaID(rawValue: 1)) > high)
    }
}
