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

/// Several lists (issue 57): a household of 20 lists of 200 items (the first and 19 made), each
/// list read as `shop list --list X` reads it, beside a household of one list of 200 items.
@MainActor func shoppingListsFigures() throws {
    let one = try Household.create(home("one-list"), name: nil, members: ["Anna"])
    let many = try Household.create(home("lists"), name: nil, members: ["Anna"])
    let names = (1...200).map { "Item \($0)" }
    try one.addShoppingItems(names)
    try many.addShoppingItems(names)
    var lists: [String] = []
    for n in 1...19 {
        let list = try many.addShoppingList("List \(n)").id!
        try many.addShoppingItems(names, on: list)
        lists.append(list)
    }
    var samples: [String: [Double]] = [:]
    for round in 0..<20 {
        let steps: [(String, () throws -> Void)] = [
            ("named", { _ = try many.shoppingItems(on: many.resolveShoppingList("List \(round % 19 + 1)")) }),
            ("first", { _ = try many.shoppingItems(on: many.resolveShoppingList(nil)) }),
            ("all", { _ = try many.shoppingLists() }),
            ("alone", { _ = try one.shoppingItems() }),
        ]
        for (name, step) in round.isMultiple(of: 2) ? steps : steps.reversed() {
            let start = now()
            try step()
            samples[name, default: []].append(Double(now() - start) / 1e6)
        }
    }
    let named = samples["named"]!, first = samples["first"]!, all = samples["all"]!, alone = samples["alone"]!
    let baseline = String(format: "one list of 200 alone %.1f ms", percentile(alone, 0.5))
    report(
        "Several lists: shop list --list X, one of 20 lists × 200 items (median of 20)", String(format: "%.1f ms", percentile(named, 0.5)),
        baseline, "≤ 20 ms", met: percentile(named, 0.5) <= 20)
    report(
        "Several lists: the first list among 20 × 200 (every item read, those on no live list kept)",
        String(format: "%.1f ms", percentile(first, 0.5)), baseline, "≤ 20 ms", met: percentile(first, 0.5) <= 20)
    report(
        "Several lists: shop lists (20 lists with their counts)", String(format: "%.1f ms", percentile(all, 0.5)), baseline, "≤ 20 ms",
        met: percentile(all, 0.5) <= 20)
}

/// The clock the bench's household reads (Unix milliseconds), moved by the bench alone.
final class SteppedClock: Sendable {
    private let now = Mutex<Int64>(1_700_000_000_000)
    var reading: Int64 { now.withLock { $0 } }
    func advance(_ milliseconds: Int64) { now.withLock { $0 += milliseconds } }
}
