import Foundation
@testable import PulseModel
@testable import PulseStore
@testable import PulseIdentity
@testable import PulseHousehold

/// A temporary directory removed when the value is released (tests keep it alive with
/// `withExtendedLifetime` or by holding it).
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("peersync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit { try? FileManager.default.removeItem(at: url) }
}

/// A physical clock the test moves by hand.
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var milliseconds: Int64

    init(_ start: Int64 = 1_800_000_000_000) { milliseconds = start }

    var now: Int64 { lock.withLock { milliseconds } }
    func advance(_ delta: Int64) { lock.withLock { milliseconds += delta } }
    func set(_ value: Int64) { lock.withLock { milliseconds = value } }
    var function: @Sendable () -> Int64 { { [self] in now } }
}

/// SplitMix64: a small, seedable, reproducible generator.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension ReplicaStore {
    /// Every batch this store would send to `peer`, in order.
    func allDeltas(for peer: VersionVector, batchLimit: Int = 1000) throws -> [DeltaBatch] {
        let cursor = try deltas(for: peer, batchLimit: batchLimit)
        var batches: [DeltaBatch] = []
        while let batch = try cursor.next() { batches.append(batch) }
        return batches
    }

    /// One-way sync: everything `self` has that `other` lacks.
    func sync(to other: ReplicaStore, batchLimit: Int = 1000) throws {
        for batch in try allDeltas(for: other.versionVector(), batchLimit: batchLimit) { try other.apply(batch) }
    }
}

func makeStore(_ dir: TemporaryDirectory, _ name: String, clock: ManualClock = ManualClock(), id: UInt64? = nil) throws -> ReplicaStore {
    try ReplicaStore(
        path: dir.path("\(name).sqlite"), physicalClock: clock.function,
        newReplicaID: id.map { ReplicaID(rawValue: $0) })
}

func shoppingItem(_ name: String, state: String = "active", listed: Int64 = 1) -> [String: FieldValue] {
    ["name": .text(name), "state": .text(state), "listed": .integer(listed)]
}

/// The same, as a write takes it.
func shoppingItem(_ name: String, state: String = "active", listed: Int64 = 1) -> RowFields {
    ["name": .text(name), "state": .text(state), "listed": .integer(listed)]
}
