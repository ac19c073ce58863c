import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold

/// The shop's walking order learned from check-offs (issue 57, ★): the rule on its own, by
/// tables and by a simulated family; then through the household, the same on two computers.
@Suite struct WalkingOrderTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        a = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: ["Anna", "Tom"])
    }

    static let minute: Int64 = 60_000
    /// A reading of the hybrid clock at `milliseconds`.
    func ms(_ milliseconds: Int64) -> HybridTimestamp { HybridTimestamp(milliseconds: milliseconds) }

    @Test func checkOffsCloseTogetherByOneMemberAreATripAndAGapOrAnotherMemberStartsAnother() {
        let m = Self.minute
        let checkoffs: [WalkingOrder.CheckOff] = [
            .init(name: "bread", member: "anna", at: ms(0)), .init(name: "milk", member: "anna", at: ms(2 * m)),
            .init(name: "eggs", member: "tom", at: ms(3 * m)), .init(name: "apples", member: "tom", at: ms(4 * m)),
            .init(name: "milk", member: "anna", at: ms(5 * m)), // twice in a trip: its first place
            .init(name: "cheese", member: "anna", at: ms(30 * m)), // after a gap: a trip of one, left out
            .init(name: "soap", member: nil, at: ms(100 * m)), .init(name: "tea", member: nil, at: ms(101 * m)),
            // In one millisecond: the clock's counter keeps the order they were made in.
            .init(name: "zucchini", member: "tom", at: HybridTimestamp(milliseconds: 200 * m, counter: 0)),
            .init(name: "apples", member: "tom", at: HybridTimestamp(milliseconds: 200 * m, counter: 1)),
        ]
        #expect(WalkingOrder.trips(checkoffs.reversed()) == [["bread", "milk"], ["eggs", "apples"], ["soap", "tea"], ["zucchini", "apples"]])
    }

    static let orders: [(String, [String], [[String]], [String])] = [
        ("no trips: as added", ["a", "b", "c"], [], ["a", "b", "c"]),
        ("one trip", ["c", "a", "b"], [["a", "b", "c"]], ["a", "b", "c"]),
        ("the majority of trips wins a pair", ["a", "b", "c"], [["c", "b", "a"], ["c", "b", "a"], ["b", "c", "a"]], ["c", "b", "a"]),
        ("an item missing from a trip keeps the others' votes", ["a", "b", "c"], [["b", "c"], ["a", "b", "c"], ["a", "c"]], ["a", "b", "c"]),
        ("names not on the list are ignored", ["b", "a"], [["x", "a", "y", "b"]], ["a", "b"]),
        ("never seen: after the seen item sharing a word", ["oat milk", "bread", "milk"], [["milk", "bread"]], ["milk", "oat milk", "bread"]),
        ("never seen, no shared word: at the end, as added", ["zz", "b", "yy", "a"], [["a", "b"]], ["a", "b", "zz", "yy"]),
        (
            "two unseen sharing one word keep their order", ["rye bread", "spelt bread", "bread", "milk"], [["bread", "milk"]],
            ["bread", "rye bread", "spelt bread", "milk"]
        ),
        ("a tie goes to the average place", ["b", "a"], [["a", "b"], ["b", "a"], ["a", "x", "x2", "b"]], ["a", "b"]),
    ]

    @Test(arguments: orders) func theOrderFollowsTheRule(_ what: String, _ names: [String], _ trips: [[String]], _ expected: [String]) {
        #expect(WalkingOrder.order(names, trips: trips) == expected, "\(what)")
    }

    /// A family walking a shop with a fixed aisle order, with noise: each trip skips some items,
    /// has one check-off out of place, and two members take turns. Seeded: the same every run.
    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8]) func aSimulatedFamilyTeachesTheAisleOrderWithinAKendallTauOf09(seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        let aisles = (1...30).map { "item \($0)" }
        var checkoffs: [WalkingOrder.CheckOff] = []
        var time: Int64 = 0
        for trip in 0..<5 {
            var walked = aisles.filter { _ in Double.random(in: 0..<1, using: &random) < 0.75 }
            let from = Int.random(in: 0..<walked.count, using: &random)
            let moved = walked.remove(at: from)
            walked.insert(moved, at: Int.random(in: 0...walked.count, using: &random))
            for name in walked {
                time += Int64.random(in: 10_000...90_000, using: &random)
                checkoffs.append(.init(name: name, member: trip % 2 == 0 ? "anna" : "tom", at: ms(time)))
            }
            time += 3 * 24 * 60 * Self.minute
        }
        let trips = WalkingOrder.trips(checkoffs)
        #expect(trips.count == 5)
        let seen = aisles.filter { name in trips.contains { $0.contains(name) } }
        let learned = WalkingOrder.order(seen.shuffled(using: &random), trips: trips)
        let tau = WalkingOrder.kendallTau(learned, aisles)
        #expect(tau >= 0.9, "τ = \(tau): \(learned)")
    }

    @Test func aCorrectionMovesItsItemUntilTheItemIsCheckedOffAgain() {
        let trips = [["a", "b", "c", "d"]]
        let moveDAfterA = WalkingOrder.Correction(name: "d", after: "a", before: "b", at: ms(100))
        #expect(WalkingOrder.order(["a", "b", "c", "d"], trips: trips, corrections: [moveDAfterA], lastChecked: ["d": ms(50)]) == ["a", "d", "b", "c"])
        // Walked again after the correction: the trips decide.
        #expect(WalkingOrder.order(["a", "b", "c", "d"], trips: trips, corrections: [moveDAfterA], lastChecked: ["d": ms(150)]) == ["a", "b", "c", "d"])
        // Its `after` not on the list: before its `before`; neither: where it was.
        #expect(WalkingOrder.order(["b", "c", "d"], trips: trips, corrections: [moveDAfterA], lastChecked: [:]) == ["d", "b", "c"])
        #expect(WalkingOrder.order(["c", "d"], trips: trips, corrections: [moveDAfterA], lastChecked: [:]) == ["c", "d"])
        // To the top (no `after`), and corrections in the order they were made.
        let top = WalkingOrder.Correction(name: "c", after: nil, before: "a", at: ms(200))
        #expect(WalkingOrder.order(["a", "b", "c", "d"], trips: trips, corrections: [top, moveDAfterA], lastChecked: [:]) == ["c", "a", "d", "b"])
    }

    @Test func aPersonsCorrectionIsShownOnEveryComputerAndRefusedOutOfRange() throws {
        let b = try secondMachine()
        try a.addShoppingItems(["Bread", "Milk", "Eggs", "Soap"])
        for name in ["Bread", "Milk", "Eggs", "Soap"] { _ = try a.checkShoppingItem(name) }
        try a.addShoppingItems(["Bread", "Milk", "Eggs", "Soap"])
        let export = try a.canonicalExport()
        #expect(code { try a.moveShoppingItemInWalkingOrder("Soap", to: 5) } == "position_out_of_range")
        #expect(code { try a.moveShoppingItemInWalkingOrder("Soap", to: 0) } == "position_out_of_range")
        #expect(try a.canonicalExport() == export)
        #expect(try a.moveShoppingItemInWalkingOrder("Soap", to: 2).map(\.name) == ["Bread", "Soap", "Milk", "Eggs"])
        // A number is a place as the list is shown, in the shop's order: 4 is Eggs.
        #expect(try a.moveShoppingItemInWalkingOrder("4", to: 3).map(\.name) == ["Bread", "Soap", "Eggs", "Milk"])
        #expect(try a.moveShoppingItemInWalkingOrder("3", to: 4).map(\.name) == ["Bread", "Soap", "Milk", "Eggs"])
        try sync(a, b)
        #expect(try b.shoppingItems(inWalkingOrder: .active).map(\.name) == ["Bread", "Soap", "Milk", "Eggs"])
        try b.moveShoppingItemInWalkingOrder("Bread", to: 4)
        try sync(a, b)
        #expect(try a.shoppingItems(inWalkingOrder: .active).map(\.name) == ["Soap", "Milk", "Eggs", "Bread"])
        #expect(try a.shoppingItems().map(\.name) == ["Bread", "Milk", "Eggs", "Soap"], "as added, unchanged")
    }

    @Test func kendallTauIsOneForTheSameOrderAndMinusOneReversed() {
        #expect(WalkingOrder.kendallTau(["a", "b", "c"], ["a", "b", "c"]) == 1)
        #expect(WalkingOrder.kendallTau(["c", "b", "a"], ["a", "b", "c"]) == -1)
    }

    @Test func checkOffsOnOneComputerOrderTheListTheSameOnAnother() throws {
        let b = try secondMachine()
        // Two trips in the shop's order: bread, milk, eggs, soap.
        for _ in 0..<2 {
            try a.addShoppingItems(["Soap", "Eggs", "Milk", "Bread"])
            for name in ["Bread", "Milk", "Eggs", "Soap"] { _ = try a.checkShoppingItem(name) }
        }
        try a.addShoppingItems(["Soap", "Oat milk", "Eggs", "Bread", "Candles"])
        #expect(try a.shoppingItems(inWalkingOrder: .active).map(\.name) == ["Bread", "Oat milk", "Eggs", "Soap", "Candles"])
        #expect(try a.shoppingItems().map(\.name) == ["Soap", "Oat milk", "Eggs", "Bread", "Candles"], "as added, still")
        try sync(a, b)
        #expect(try b.shoppingItems(inWalkingOrder: .active).map(\.name) == ["Bread", "Oat milk", "Eggs", "Soap", "Candles"])
        #expect(try b.shoppingCheckoffs().count == 8)
    }
}
