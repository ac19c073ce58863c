import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold

/// The household rules issue 41's page calls (the CLI's rules, the same on every front end):
/// one item deleted and undone, a task undeleted, machines named and resolved, the PIN's
/// state and check.
@Suite struct PageActionsTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        a = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: [])
    }

    @Test func aDeletedItemLeavesTheListOnEveryMachineAndUndoBringsTheSameItemBack() throws {
        try a.addShoppingItems(["Milk", "Eggs"])
        let b = try secondMachine()
        let milk = try a.deleteShoppingItem("Milk")
        try sync(a, b)
        #expect(try b.shoppingItems().map(\.name) == ["Eggs"])
        #expect(try b.shoppingItems(.deleted).map(\.id) == [milk.id])
        let back = try a.undeleteShoppingItem(milk.id, to: .active)
        try sync(a, b)
        #expect(back.id == milk.id && back.state == .active)
        #expect(try b.shoppingItems().map(\.name).sorted() == ["Eggs", "Milk"])
    }

    @Test func undoIsRefusedWhenNothingIsDeletedOrTheNameIsBack() throws {
        try a.addShoppingItems(["Milk"])
        let milk = try a.resolveShoppingItem("Milk", in: [.active])
        #expect(code { _ = try a.undeleteShoppingItem(milk.id, to: .active) } == "nothing_to_undo")
        #expect(code { _ = try a.undeleteShoppingItem("no-such-id", to: .active) } == "nothing_to_undo")
        _ = try a.deleteShoppingItem(milk.id)
        try a.addShoppingItems(["milk"]) // added again meanwhile (a new item: the old one is deleted, not in the pool)
        #expect(code { _ = try a.undeleteShoppingItem(milk.id, to: .active) } == "undo_would_duplicate")
        #expect(try a.shoppingItems().count == 1)
        #expect(code { _ = try a.undeleteShoppingItem(milk.id, to: .deleted) } == "invalid_pool")
    }

    @Test func anItemOfTheRestockPoolCanBeDeletedAndComesBackToThePool() throws {
        try a.addShoppingItems(["Bread"])
        _ = try a.checkShoppingItem("Bread")
        let bread = try a.deleteShoppingItem("Bread")
        #expect(try bread.state == .restock && a.shoppingItems(.restock).isEmpty)
        _ = try a.undeleteShoppingItem(bread.id, to: .restock)
        #expect(try a.shoppingItems(.restock).map(\.name) == ["Bread"])
    }

    @Test func aDeletedTaskComesBackAsItWasWithoutTheFocusRuleAsked() throws {
        for title in ["One", "Two", "Three"] { try a.addTask(title) }
        let two = try a.deleteTask("Two")
        try a.addTask("Four")
        let back = try a.undeleteTask(two.id)
        #expect(back.title == "Two" && !back.done)
        #expect(try a.tasks().filter { !$0.done }.count == 4) // an undo restores; it adds nothing
        #expect(code { _ = try a.undeleteTask(two.id) } == "nothing_to_undo")
        #expect(code { _ = try a.undeleteTask("not a row id") } == "nothing_to_undo")
    }

    @Test func aMachineTakesTheNameAPersonGivesItOnEveryMachine() throws {
        let b = try secondMachine()
        let id = a.identity.machineID
        let renamed = try b.renameMachine(String(id.prefix(8)), to: "  Study desktop ")
        #expect(renamed.name == "Study desktop")
        try sync(a, b)
        #expect(try a.machines().first { $0.isThisMachine }?.name == "Study desktop")
        #expect(code { _ = try a.renameMachine("abc", to: "x") } == "machine_id_too_short")
        #expect(code { _ = try a.renameMachine("ffffffffffff", to: "x") } == "not_found")
        #expect(code { _ = try a.renameMachine(id, to: " ") } == "empty")
        #expect(code { _ = try a.renameMachine(id, to: String(repeating: "x", count: 101)) } == "too_long")
    }

    @Test func aRemovedMachineCannotBeRenamed() throws {
        let b = try secondMachine()
        try sync(a, b)
        _ = try a.removeMachine(b.identity.machineID)
        #expect(code { _ = try a.renameMachine(b.identity.machineID, to: "Back again") } == "already_removed")
    }

    @Test func thePINsStateSaysWhetherAPINCanBeSetHereAndTheCheckIsRateLimited() throws {
        #expect(a.kidsPINState() == Household.PINState(set: false, canSet: true))
        let b = try secondMachine()
        // A machine that has not finished a catch-up cannot tell: it may not set the first PIN.
        #expect(b.kidsPINState().canSet == b.hasSyncedOnce)
        try a.setKidsPIN("2580")
        #expect(a.kidsPINState() == Household.PINState(set: true, canSet: false))
        try a.checkKidsPIN("2580")
        let wrong = (0..<4).map { _ in code { try a.checkKidsPIN("1111") } }
        #expect(wrong == ["wrong_pin", "wrong_pin", "wrong_pin", "pin_locked"])
        #expect(code { try a.checkKidsPIN("2580") } == "pin_locked")
    }
}
