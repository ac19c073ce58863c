@testable import PulseStore

/// Two stores of one test, in a temporary directory, on a clock the test moves.
protocol StoreFixture {
    var dir: TemporaryDirectory { get }
    var clock: ManualClock { get }
}

extension StoreFixture {
    func pair() throws -> (ReplicaStore, ReplicaStore) {
        (try makeStore(dir, "a", clock: clock, id: 0xA), try makeStore(dir, "b", clock: clock, id: 0xB))
    }
}
