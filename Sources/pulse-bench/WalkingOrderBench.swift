import Foundation
import PeerSync
import Synchronization

/// The walking order's figures (main.swift's section 5b says what they measure).
@MainActor func walkingOrderFigures() throws {
    let clock = SteppedClock()
    let household = try Household.create(home("shop"), name: nil, members: ["Anna", "Tom"], physicalClock: { clock.reading })
    let aisles = (1...200).map { "Item \($0)" }
    var random = SystemRandomNumberGenerator()
    let trips = quick ? 100 : 500
    var checkNanos: [Double] = [], addNanos: [Double] = []
    for trip in 0..<trips {
        let walked = aisles.filter { _ in Int.random(in: 0..<5, using: &random) == 0 }
        try household.addShoppingItems(walked)
        for name in walked {
            clock.advance(30_000)
            let start = now()
            _ = try household.checkShoppingItem(name)
            checkNanos.append(Double(now() - start))
            if trip.isMultiple(of: 25) {
                let other = now()
                try household.addShoppingItems(["Baseline \(trip)-\(name)"])
                addNanos.append(Double(now() - other))
                _ = try household.deleteShoppingItem("Baseline \(trip)-\(name)")
            }
        }
        clock.advance(24 * 3_600_000)
    }
    try household.addShoppingItems(aisles) // those in the pool come back, the rest are already on the list
    var ordered: [Double] = [], added: [Double] = []
    var learned: [String] = []
    for round in 0..<20 {
        for inOrder in round.isMultiple(of: 2) ? [true, false] : [false, true] {
            let start = now()
            if inOrder {
                learned = try household.shoppingItems(inWalkingOrder: .active).map(\.name)
                ordered.append(Double(now() - start) / 1e6)
            } else {
                _ = try household.shoppingItems(.active)
                added.append(Double(now() - start) / 1e6)
            }
        }
    }
    let tau = WalkingOrder.kendallTau(learned.map(\.nameKey), aisles.map(\.nameKey))
    report(
        "Walking order: the list of \(aisles.count) in the shop's order after \(trips) trips (\(checkNanos.count) check-offs), full recompute (median of 20)",
        String(format: "%.1f ms (worst %.1f), Kendall τ %.2f", percentile(ordered, 0.5), ordered.max()!, tau),
        String(format: "as added %.1f ms", percentile(added, 0.5)), "≤ 20 ms", met: percentile(ordered, 0.5) <= 20)
    report(
        "Walking order: one check-off (the item to the pool and its check-off row)",
        String(format: "%.0f µs median", percentile(checkNanos, 0.5) / 1e3),
        String(format: "one-row write %.0f µs", percentile(addNanos, 0.5) / 1e3), "—")
}

/// The clock the bench's household reads (Unix milliseconds), moved by the bench alone.
final class SteppedClock: Sendable {
    private let now = Mutex<Int64>(1_700_000_000_000)
    var reading: Int64 { now.withLock { $0 } }
    func advance(_ milliseconds: Int64) { now.withLock { $0 += milliseconds } }
}
