import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold

/// A kids' chore that takes turns among kids (issue 58, item 1 for the kids' catalogue): one kid
/// a day, the same on every computer; only that kid earns or reports it; set with the PIN.
@Suite struct KidsTurnsTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        a = try Self.kidsHousehold(in: dir, kids: ["Sam", "Zoe"], selected: ["chore_001", "chore_002", "rule_001"])
    }

    func chore(_ h: Household, _ id: String = "chore_001") throws -> CatalogueItem { try #require(try h.catalogue().first { $0.id == id }) }

    @Test func aChoreTakingTurnsIsEarnedOnlyByTheKidWhoseTurnItIsTheSameOnEveryComputer() throws {
        let b = try secondMachine()
        let set = try a.setKidsChoreRotation("chore_001", kids: ["Sam", "Zoe"], pin: "1234")
        let sam = try a.resolveKid("Sam").id, zoe = try a.resolveKid("Zoe").id
        #expect(set.rotation?.map(\.name) == ["Sam", "Zoe"])
        #expect(set.turns?.map(\.kidID) == [sam, zoe, sam, zoe], "one a day, in turn order, from today")
        #expect(set.turns?.first?.period == Days.today().description)
        #expect(code { try a.markDone(kid: "Zoe", item: "chore_001") } == "not_your_turn")
        #expect(try a.markDone(kid: "Sam", item: "chore_001").outcome == "counted")
        #expect(try a.markDone(kid: "Zoe", item: "chore_002").outcome == "counted", "a chore that does not rotate: anyone")
        try sync(a, b)
        #expect(try chore(b).turns == set.turns, "the same turns on the other computer")
        #expect(code { try b.markDone(kid: "Zoe", item: "chore_001") } == "not_your_turn")
        // With approval on, the kid whose turn it is not cannot report it either.
        try b.setKidsApproval("on", pin: "1234")
        #expect(code { try b.reportChore(kid: "Zoe", item: "chore_001") } == "not_your_turn")
        // Off: any kid again.
        try b.setKidsApproval("off", pin: "1234")
        let off = try b.setKidsChoreRotation("chore_001", kids: [], off: true, pin: "1234")
        #expect(off.rotation == nil && off.turns == nil)
        #expect(try b.markDone(kid: "Zoe", item: "chore_001").outcome == "counted")
    }

    @Test func aRemovedKidLeavesTheRotation() throws {
        try a.setKidsChoreRotation("chore_001", kids: ["Sam", "Zoe"], pin: "1234")
        try a.removeKid("Sam", pin: "1234")
        let zoe = try a.resolveKid("Zoe").id
        #expect(try chore(a).turns?.map(\.kidID) == [zoe, zoe, zoe, zoe])
        #expect(try a.markDone(kid: "Zoe", item: "chore_001").outcome == "counted")
    }

    @Test func badRotationsAreRefusedWithNothingWritten() throws {
        let before = try a.store.versionVector()
        #expect(code { try a.setKidsChoreRotation("chore_001", kids: [], pin: "1234") } == "rotation_empty")
        #expect(code { try a.setKidsChoreRotation("chore_001", kids: Array(repeating: "Sam", count: 13), pin: "1234") } == "rotation_too_long")
        #expect(code { try a.setKidsChoreRotation("chore_001", kids: ["Sam", "Nobody"], pin: "1234") } == "not_found")
        #expect(code { try a.setKidsChoreRotation("chore_001", kids: ["Sam", "sam"], pin: "1234") } == "listed_twice")
        #expect(code { try a.setKidsChoreRotation("rule_001", kids: ["Sam"], pin: "1234") } == "not_found")
        #expect(code { try a.setKidsChoreRotation("chore_009", kids: ["Sam"], pin: "1234") } == "not_found")
        #expect(code { try a.setKidsChoreRotation("chore_001", kids: [], off: true, pin: "1234") } == "no_rotation")
        #expect(code { try a.setKidsChoreRotation("chore_001", kids: ["Sam"], pin: nil) } == "pin_required")
        #expect(try a.store.versionVector() == before, "nothing written")
    }
}
