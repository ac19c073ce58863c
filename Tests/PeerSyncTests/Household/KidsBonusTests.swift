import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold

/// A bonus for a chore done (issue 58, item 3): an adult's, with the PIN, once per chore done,
/// recorded with the adult and the entry it rewards; bad bonuses refused, changing nothing.
@Suite struct KidsBonusTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        a = try Self.kidsHousehold(in: dir, kids: ["Sam"], selected: ["chore_001", "chore_002", "rule_001"])
    }

    @Test func aDoneChoresBonusIsCountedOnceWithTheAdultAndTheChoreItRewards() throws {
        let done = try a.markDone(kid: "Sam", item: "chore_001")
        let bonus = try a.giveBonus(kid: "Sam", for: done.id, peanuts: 2, pin: "1234")
        #expect(bonus.kind == "earn" && bonus.peanuts == 2 && bonus.outcome == "counted")
        #expect(bonus.bonusFor == done.id && bonus.bonusTitle == done.title && bonus.bonusTitleKey == done.titleKey)
        #expect(bonus.by == "Anna" && bonus.reason == nil)
        #expect(bonus.balanceAfter == done.peanuts + 2)
        // Named by the item: the kid's latest earn of it; a second bonus for it is refused.
        #expect(code { try a.giveBonus(kid: "Sam", for: "chore_001", peanuts: 1, pin: "1234") } == "already_rewarded")
        // Seen on another computer as the same line.
        let b = try secondMachine()
        #expect(try b.ledger(kid: "Sam").last == a.ledger(kid: "Sam").last)
    }

    @Test func badBonusesAreRefusedAndChangeNothing() throws {
        let done = try a.markDone(kid: "Sam", item: "chore_001")
        let before = try a.store.versionVector()
        #expect(code { try a.giveBonus(kid: "Sam", for: done.id, peanuts: 0, pin: "1234") } == "bonus_out_of_range")
        #expect(code { try a.giveBonus(kid: "Sam", for: done.id, peanuts: 10_000, pin: "1234") } == "bonus_out_of_range")
        #expect(code { try a.giveBonus(kid: "Sam", for: done.id, peanuts: 2, pin: nil) } == "pin_required")
        #expect(code { try a.giveBonus(kid: "Sam", for: done.id, peanuts: 2, pin: "9999") } == "wrong_pin")
        #expect(code { try a.giveBonus(kid: "Sam", for: "chore_002", peanuts: 2, pin: "1234") } == "not_earned", "selected, not done")
        #expect(code { try a.giveBonus(kid: "Sam", for: "chore_003", peanuts: 2, pin: "1234") } == "not_found", "not selected")
        #expect(code { try a.giveBonus(kid: "Nobody", for: done.id, peanuts: 2, pin: "1234") } == "not_found")
        #expect(try a.store.versionVector() == before, "nothing written")
    }
}
