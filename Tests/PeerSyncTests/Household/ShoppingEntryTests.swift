import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold

/// Rapid entry's amounts (issue 57): the rule of `ShoppingEntry.parse`, a line per case, in
/// every language we speak; then quantities and notes through the household's rules.
@Suite struct ShoppingEntryTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        a = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: ["Anna", "Tom"])
    }

    /// (line, name, quantity): nil quantity means the line is a name as typed.
    static let cases: [(String, String, String?)] = [
        // English
        ("2 milk", "milk", "2"),
        ("500 g flour", "flour", "500 g"),
        ("500g flour", "flour", "500 g"),
        ("1.5 kg potatoes", "potatoes", "1.5 kg"),
        ("2x eggs", "eggs", "2"),
        ("2 x eggs", "eggs", "2"),
        ("3 × lemons", "lemons", "3"),
        ("2 bottles of wine", "wine", "2 bottles"),
        ("2 bags", "bags", "2"),
        ("½ watermelon", "watermelon", "½"),
        ("1½ l cream", "cream", "1½ l"),
        ("1/2 l cream", "cream", "1/2 l"),
        ("  12   eggs  ", "eggs", "12"),
        // Names that merely start with a digit stay whole.
        ("7up", "7up", nil),
        ("100% juice", "100% juice", nil),
        ("3-in-1 coffee", "3-in-1 coffee", nil),
        ("4x4 tyres", "4x4 tyres", nil),
        ("1984 book", "1984 book", nil),
        ("0 milk", "0 milk", nil),
        ("42", "42", nil),
        ("500 g", "500 g", nil),
        ("2 %", "2 %", nil),
        ("12345678901 batteries", "12345678901 batteries", nil),
        ("Milk", "Milk", nil),
        ("milk 2", "milk 2", nil),
        // Polish
        ("2 mleka", "mleka", "2"),
        ("1,5 l mleka", "mleka", "1,5 l"),
        ("3 szt. bułek", "bułek", "3 szt."),
        ("2 opak. makaronu", "makaronu", "2 opak."),
        ("1 kostka masła", "masła", "1 kostka"),
        ("10 dag sera", "sera", "10 dag"),
        // German
        ("3 Dosen Tomaten", "Tomaten", "3 Dosen"),
        ("2 Stk. Brötchen", "Brötchen", "2 Stk."),
        ("1 Bund Petersilie", "Petersilie", "1 Bund"),
        ("250 ml Sahne", "Sahne", "250 ml"),
        ("4 Äpfel", "Äpfel", "4"),
        // Dutch
        ("2 pakken melk", "melk", "2 pakken"),
        ("1 bos bloemen", "bloemen", "1 bos"),
        ("6 stuks eieren", "eieren", "6 stuks"),
        ("1,5 kg aardappelen", "aardappelen", "1,5 kg"),
    ]

    @Test(arguments: cases) func aLineIsReadAsAnAmountAndANameOrAsANameAlone(line: String, name: String, quantity: String?) {
        #expect(ShoppingEntry.parse(line) == ShoppingEntry(name: name, quantity: quantity), "\(line)")
    }

    @Test func anAmountAddsTheItemWithItsQuantityAndTheRestockPoolKeepsItsQuantityAndNote() throws {
        let added = try a.addOrRestockShoppingItems(["2 milk", "500 g flour", "7up"].map(ShoppingEntry.parse))
        #expect(added.items.map(\.name) == ["milk", "flour", "7up"])
        #expect(added.items.map(\.quantity) == ["2", "500 g", nil])
        #expect(try a.shoppingItems().map(\.quantity) == ["2", "500 g", nil])
        _ = try a.editShoppingItem("milk", ShoppingItemEdit(note: .some("the lactose-free one")))
        _ = try a.checkShoppingItem("milk")
        #expect(try a.shoppingItems(.restock).first?.note == "the lactose-free one")
        // Back from the pool with no amount: its own quantity and note; with one: the new quantity.
        var back = try a.addOrRestockShoppingItems([ShoppingEntry.parse("Milk")])
        #expect(back.restocked.count == 1 && back.items[0].quantity == "2" && back.items[0].note == "the lactose-free one")
        _ = try a.checkShoppingItem("milk")
        back = try a.addOrRestockShoppingItems([ShoppingEntry.parse("3 milk")])
        #expect(back.restocked.count == 1 && back.items[0].quantity == "3" && back.items[0].note == "the lactose-free one")
        #expect(try a.shoppingItems().first { $0.name == "milk" }?.quantity == "3")
    }

    @Test func aQuantityAndANoteAreSetClearedAndSyncedAndAnEmptyEditWritesNothing() throws {
        try a.addShoppingItems(["Milk"])
        let b = try secondMachine()
        var item = try a.editShoppingItem("1", ShoppingItemEdit(quantity: .some(" 2 l "), note: .some("organic")))
        #expect(item.quantity == "2 l" && item.note == "organic")
        try sync(a, b)
        #expect(try b.shoppingItems().first.map { [$0.quantity, $0.note] } == ["2 l", "organic"])
        let before = try a.store.versionVector()
        #expect(try a.editShoppingItem("Milk", ShoppingItemEdit(quantity: .some("2 l"))) == item, "the same value writes nothing")
        #expect(try a.store.versionVector() == before)
        item = try b.editShoppingItem("Milk", ShoppingItemEdit(quantity: .some(nil), note: .some("  ")))
        #expect(item.quantity == nil && item.note == nil)
        try sync(a, b)
        #expect(try a.shoppingItems().first.map { [$0.quantity, $0.note] } == [nil, nil])
    }

    /// (what, current, new, what the editor saw) → outcome: the rule of an edit sent later.
    static let edits: [(String, String?, String?, String??, ShoppingRules.FieldEdit)] = [
        ("online: no `was`", "2", "3", nil, .set),
        ("online, to none", "2", nil, nil, .set),
        ("as seen", "2", "3", .some("2"), .set),
        ("none seen, none now", nil, "3", .some(nil), .set),
        ("the same edit sent twice", "3", "3", .some("2"), .unchanged),
        ("someone else made it so already", "3", "3", .some(nil), .unchanged),
        ("changed meanwhile", "5", "3", .some("2"), .changedMeanwhile),
        ("set meanwhile where none was seen", "5", "3", .some(nil), .changedMeanwhile),
        ("cleared meanwhile", nil, "3", .some("2"), .changedMeanwhile),
        ("clearing what was changed meanwhile", "5", nil, .some("2"), .changedMeanwhile),
    ]

    @Test(arguments: edits) func anEditSentLaterKeepsWhatSomeoneElseChangedMeanwhile(
        _ row: (String, String?, String?, String??, ShoppingRules.FieldEdit)
    ) {
        #expect(ShoppingRules.edit(current: row.1, to: row.2, was: row.3) == row.4, "\(row.0)")
    }

    @Test func aPhonesQueuedEditIsMadeOnceAndNeverOverwritesAnotherEditMadeMeanwhile() throws {
        try a.addShoppingItems(["Milk", "Eggs"])
        let b = try secondMachine()
        let phone = a.acting(as: try a.currentMemberID())
        // Made in the shop with no computer in reach: what it saw is sent with it.
        let queued = ShoppingItemEdit(quantity: .some("2"), note: .some("lactose-free"), wasQuantity: .some(nil), wasNote: .some(nil))
        #expect(try phone.editShoppingItem("Milk", queued).quantity == "2")
        let before = try a.store.versionVector()
        #expect(try phone.editShoppingItem("Milk", queued).note == "lactose-free", "the queue replayed: answered as it is")
        #expect(try a.store.versionVector() == before, "and nothing written")
        // Tom changed the eggs' quantity meanwhile: the phone's later edit is refused, Tom's kept.
        _ = try b.editShoppingItem("Eggs", ShoppingItemEdit(quantity: .some("12")))
        try sync(a, b)
        let stale = ShoppingItemEdit(quantity: .some("6"), wasQuantity: .some(nil))
        #expect(code { _ = try phone.editShoppingItem("Eggs", stale) } == "changed_meanwhile")
        #expect(
            message { _ = try phone.editShoppingItem("Eggs", stale) }
                == "“Eggs”: its quantity was changed meanwhile on another computer or phone, so yours was not saved")
        #expect(try a.shoppingItems().first { $0.name == "Eggs" }?.quantity == "12")
    }

    @Test func badQuantitiesAndNotesAreRefusedAndChangeNothing() throws {
        try a.addShoppingItems(["Milk"])
        let export = try a.canonicalExport()
        #expect(code { _ = try a.editShoppingItem("1", ShoppingItemEdit(quantity: .some(String(repeating: "9", count: 41)))) } == "too_long")
        #expect(code { _ = try a.editShoppingItem("1", ShoppingItemEdit(note: .some(String(repeating: "n", count: 201)))) } == "too_long")
        #expect(code { _ = try a.editShoppingItem("1", ShoppingItemEdit(note: .some("a\u{7}b"))) } == "control_characters")
        #expect(code { _ = try a.editShoppingItem("1", ShoppingItemEdit()) } == "nothing_to_change")
        #expect(code { _ = try a.editShoppingItem("Bread", ShoppingItemEdit(note: .some("x"))) } == "not_found")
        #expect(code { try a.addOrRestockShoppingItems([ShoppingEntry(name: "Eggs", quantity: String(repeating: "1", count: 41))]) } == "too_long")
        #expect(message { _ = try a.editShoppingItem("1", ShoppingItemEdit(quantity: .some(String(repeating: "9", count: 41)))) }.contains("quantity"))
        #expect(try a.canonicalExport() == export)
    }

    @Test func oneItemDeletedComesBackWhereItWasWithUndo() throws {
        try a.addShoppingItems(["Milk", "Eggs", "Bread"])
        _ = try a.checkShoppingItem("Bread")
        _ = try a.deleteShoppingItem("Eggs", remembered: true)
        #expect(try a.undoClearShoppingList().map(\.name) == ["Eggs"])
        #expect(try a.shoppingItems().map(\.name) == ["Milk", "Eggs"])
        _ = try a.deleteShoppingItem("Bread", remembered: true)
        #expect(try a.undoClearShoppingList().map { [$0.name, $0.state.rawValue] } == [["Bread", "restock"]])
        #expect(code { try a.undoClearShoppingList() } == "no_clear_to_undo")
        // A clear after a delete: undo brings back the clear.
        _ = try a.deleteShoppingItem("Eggs", remembered: true)
        try a.clearShoppingList()
        #expect(try a.undoClearShoppingList().map(\.name) == ["Milk"])
    }

    @Test func aPageOrPhonesDeleteLeavesTheClearsUndoAlone() throws {
        try a.addShoppingItems(["Milk", "Eggs"])
        try a.clearShoppingList()
        try a.addShoppingItems(["Bread"])
        _ = try a.deleteShoppingItem("Bread") // a page's ✕ (it undoes by the item's id)
        #expect(try a.undoClearShoppingList().map(\.name) == ["Milk", "Eggs"])
        #expect(try a.shoppingItems(.deleted).map(\.name) == ["Bread"])
    }
}
