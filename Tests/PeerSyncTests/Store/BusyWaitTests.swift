import Testing
@testable import PulseStore

/// The wait for another process's write lock (``BusyWait``): as long as its timeout, and a
/// refusal after it names the holder last seen, also when the holder let go just before the
/// refusal was worded (issue 52, item 19).
@Suite struct BusyWaitTests {
    /// A wait driven by a clock of its own: each call to `retry` is `step` later.
    func run(timeout: Int32, step: Duration, holders: [String?]) -> (tries: Int, seen: String?, looks: Int) {
        var looked = 0
        let wait = BusyWait(timeout: timeout) {
            defer { looked += 1 }
            return holders[min(looked, holders.count - 1)]
        }
        let start = ContinuousClock.now
        var count: Int32 = 0
        while wait.retry(count: count, now: { start + step * Int(count) }) { count += 1 }
        return (Int(count), wait.holderSeen, looked)
    }

    @Test func itWaitsForItsTimeoutAndNoLonger() {
        #expect(run(timeout: 5_000, step: .milliseconds(5), holders: ["process 7"]).tries == 1_000)
        #expect(run(timeout: 0, step: .milliseconds(5), holders: ["process 7"]).tries == 0, "no wait: refused at once")
    }

    @Test func theHolderLastSeenIsNamedAlthoughItLetGoAtTheEnd() {
        // Seen at the start and while it held; gone at the last look.
        let result = run(
            timeout: 1_000, step: .milliseconds(5), holders: ["process 7 (sqlite3 household.sqlite)", "process 7 (sqlite3 household.sqlite)", nil])
        #expect(result.seen == "process 7 (sqlite3 household.sqlite)")
        // Looked at every 100 ms, not at every try (200 tries).
        #expect((10...12).contains(result.looks), "\(result.looks) looks")
        // A wait of its own: the last one's holder is not carried into the next.
        #expect(run(timeout: 100, step: .milliseconds(5), holders: [nil]).seen == nil)
    }

    @Test func aNewWaitForgetsTheHolderOfTheLastOne() {
        var holder: String? = "process 7"
        let wait = BusyWait(timeout: 20) { holder }
        var count: Int32 = 0
        let start = ContinuousClock.now
        while wait.retry(count: count, now: { start + .milliseconds(5) * Int(count) }) { count += 1 }
        #expect(wait.holderSeen == "process 7")
        holder = nil
        #expect(wait.retry(count: 0))
        #expect(wait.holderSeen == nil)
    }
}
