import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold
@testable import PulseNotify

/// Several shopping lists (issue 57, item 2): each with its items, restock pool, clear and undo,
/// and walking order; items moved between lists; lists deleted with their items moved or
/// deleted; and what two computers do when one deletes a list the other adds to.
@Suite struct ShoppingListsTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        a = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: ["Anna", "Tom"])
    }

    @Test func eachListHasItsOwnItemsRestockPoolAndNameRule() throws {
        let lidl = try #require(try a.addShoppingList("Lidl").id)
        try a.addShoppingItems(["Milk", "Bread"])
        try a.addShoppingItems(["Milk", "Butter"], on: lidl)
        #expect(try a.shoppingItems().map(\.name) == ["Milk", "Bread"])
        #expect(try a.shoppingItems(on: lidl).map(\.name) == ["Milk", "Butter"], "the same name on two lists: two items")
        #expect(try a.shoppingItems(on: lidl).allSatisfy { $0.list == lidl })
        // A check on Lidl fills Lidl's restock pool only; adding the name there brings that item back.
        let checked = try a.checkShoppingItem("Milk", on: lidl)
        #expect(try a.shoppingItems(.restock).isEmpty)
        #expect(try a.shoppingItems(.restock, on: lidl).map(\.id) == [checked.id])
        let back = try a.addOrRestockShoppingItems([ShoppingEntry(name: "milk")], on: lidl)
        #expect(back.restocked == [checked.id])
        // Positions count within the list.
        #expect(try a.resolveShoppingItem("2", in: [.active], on: lidl).name == "Milk")
        #expect(try a.shoppingLists().map { "\($0.name ?? "-") \($0.active)/\($0.restock)" } == ["- 2/0", "Lidl 2/0"])
    }

    @Test func aListIsNamedByItsNameInAnyCaseOrTheStartOfItsIdAndTheFirstByItsNameInAnyLanguage() throws {
        let lidl = try #require(try a.addShoppingList("Lidl").id)
        #expect(try a.resolveShoppingList("lidl") == lidl)
        #expect(try a.resolveShoppingList(String(lidl.prefix(8))) == lidl)
        for first in [nil, "", "Shopping List", "lista zakupów", "Einkaufsliste", "BOODSCHAPPENLIJST"] {
            #expect(try a.resolveShoppingList(first) == nil)
        }
        #expect(code { _ = try a.resolveShoppingList("Aldi") } == "no_such_list")
    }

    @Test func badListRequestsAreRefusedAndChangeNothing() throws {
        try a.addShoppingList("Lidl")
        try a.addShoppingItems(["Milk"])
        let export = try a.canonicalExport()
        #expect(code { try a.addShoppingList("LIDL") } == "list_name_taken")
        #expect(code { try a.addShoppingList("Einkaufsliste") } == "list_name_taken", "the first list's name in any language")
        #expect(code { try a.addShoppingList("  ") } == "empty")
        #expect(code { try a.addShoppingList(String(repeating: "x", count: 61)) } == "too_long")
        #expect(code { try a.addShoppingList("A\u{7}") } == "control_characters")
        #expect(code { try a.renameShoppingList("", to: "Groceries") } == "first_list")
        #expect(code { try a.deleteShoppingList("Shopping List") } == "first_list")
        #expect(code { try a.deleteShoppingList("Lidl", items: .move, to: "Lidl") } == "same_list")
        #expect(code { try a.moveShoppingItem("Milk", toList: "Aldi") } == "no_such_list")
        #expect(code { try a.addShoppingItems([String(repeating: "y", count: 201)], on: try a.resolveShoppingList("Lidl")) } == "too_long")
        #expect(try a.canonicalExport() == export)
    }

    @Test func aPhonesQueuedChangesReachTheirItemsWhereverTheyAreNow() throws {
        let b = try secondMachine()
        let lidl = try #require(try a.addShoppingList("Lidl").id)
        let butter = try a.addShoppingItems(["Butter"], on: lidl)[0]
        try sync(a, b)
        // A phone queued a check of Butter on Lidl, and an addition to Lidl; meanwhile Lidl was deleted.
        try a.deleteShoppingList("Lidl", items: .move)
        #expect(try a.resolveShoppingList(lidl) == nil, "a deleted list's whole id: the first list, where its items are")
        #expect(try a.checkShoppingItem(butter.id, once: true, on: a.resolveShoppingList(lidl)).state == .restock)
        let added = try a.addShoppingItems([ShoppingEntry(name: "Cheese")], ids: [RowIDRules.newRowID()], on: a.resolveShoppingList(lidl))
        #expect(added.items.map(\.list) == [nil])
        #expect(try a.shoppingItems().map(\.name) == ["Cheese"])
        // A computer that has not received Lidl yet takes its whole id as the first list too.
        let c = try machine("c")
        let late = try c.addShoppingList("Late").id!
        #expect(try b.resolveShoppingList(late) == nil)
        #expect(code { _ = try b.resolveShoppingList("Late") } == "no_such_list", "its name, typed, is still refused")
        // An item moved to another list is still found by its whole id from the list it was on.
        let soap = try a.addShoppingItems(["Soap"])[0]
        let rossmann = try #require(try a.addShoppingList("Rossmann").id)
        try a.moveShoppingItem(soap.id, toList: "Rossmann")
        #expect(try a.checkShoppingItem(soap.id, once: true).list == rossmann)
    }

    @Test func anItemIsNotMovedWhereItsNameIsInTheRestockPool() throws {
        try a.addShoppingList("Lidl")
        let lidl = try a.resolveShoppingList("Lidl")
        try a.addShoppingItems(["milk"], on: lidl)
        _ = try a.checkShoppingItem("milk", on: lidl)
        try a.addShoppingItems(["Milk"])
        #expect(code { try a.moveShoppingItem("Milk", toList: "Lidl") } == "already_on_list")
    }

    @Test func aHouseholdKeepsAtMostFiftyListsBesideTheFirst() throws {
        for n in 1...Household.maxShoppingLists { try a.addShoppingList("List \(n)") }
        #expect(code { try a.addShoppingList("One more") } == "too_many_lists")
        try a.deleteShoppingList("List 1")
        #expect(try a.addShoppingList("One more").name == "One more", "a deleted list leaves room")
    }

    @Test func movingAnItemKeepsItsPlaceAndNeverDoublesAName() throws {
        let lidl = try #require(try a.addShoppingList("Lidl").id)
        try a.addShoppingItems(["Milk", "Soap"])
        try a.addShoppingItems(["Milk"], on: lidl)
        _ = try a.checkShoppingItem("Soap")
        let moved = try a.moveShoppingItem("Soap", toList: "Lidl")
        #expect(moved.list == lidl && moved.state == .restock)
        #expect(try a.shoppingItems(.restock, on: lidl).map(\.name) == ["Soap"], "in the pool it was in, on its new list")
        #expect(try a.shoppingItems(.restock).isEmpty)
        #expect(code { try a.moveShoppingItem("Milk", toList: "Lidl") } == "already_on_list")
        #expect(try a.moveShoppingItem("Soap", on: lidl, toList: "").list == nil, "back to the first list")
    }

    @Test func aListHoldingItemsIsDeletedOnlyWhenItsItemsAreMovedOrDeleted() throws {
        let lidl = try #require(try a.addShoppingList("Lidl").id)
        let pharmacy = try #require(try a.addShoppingList("Pharmacy").id)
        try a.addShoppingItems(["Milk"])
        try a.addShoppingItems(["milk", "Butter", "Rice"], on: lidl)
        _ = try a.checkShoppingItem("Rice", on: lidl)
        let export = try a.canonicalExport()
        #expect(code { try a.deleteShoppingList("Lidl") } == "list_not_empty")
        #expect(try a.canonicalExport() == export, "refused: nothing changed")
        let deleted = try a.deleteShoppingList("Lidl", items: .move)
        #expect(deleted.active == 2 && deleted.restock == 1)
        // Butter and the pool's Rice moved to the first list; its milk was there already, as Milk.
        #expect(try a.shoppingItems().map(\.name) == ["Milk", "Butter"])
        #expect(try a.shoppingItems(.restock).map(\.name) == ["Rice"])
        #expect(code { _ = try a.resolveShoppingList("Lidl") } == "no_such_list")
        #expect(try a.resolveShoppingList(lidl) == nil, "its whole id: the first list, where its items went")
        try a.addShoppingItems(["Plasters"], on: pharmacy)
        try a.deleteShoppingList("Pharmacy", items: .delete)
        #expect(try a.shoppingItems().map(\.name) == ["Milk", "Butter"])
        #expect(try a.shoppingLists().count == 1)
        #expect(try a.deleteShoppingList(try a.addShoppingList("Empty").id!).name == "Empty", "an empty list needs no choice")
    }

    @Test func clearAndUndoAreEachLists() throws {
        let lidl = try #require(try a.addShoppingList("Lidl").id)
        try a.addShoppingItems(["Milk", "Bread"])
        try a.addShoppingItems(["Butter"], on: lidl)
        #expect(try a.clearShoppingList(on: lidl).map(\.name) == ["Butter"])
        #expect(try a.shoppingItems().map(\.name) == ["Milk", "Bread"], "the first list untouched")
        try a.clearShoppingList()
        #expect(try a.undoClearShoppingList(on: lidl).map(\.name) == ["Butter"])
        #expect(try a.shoppingItems().isEmpty, "Lidl's undo leaves the first list's clear alone")
        #expect(try a.undoClearShoppingList().map(\.name) == ["Milk", "Bread"])
        #expect(code { try a.undoClearShoppingList(on: lidl) } == "no_clear_to_undo")
    }

    @Test func eachListLearnsItsOwnWalkingOrder() throws {
        let lidl = try #require(try a.addShoppingList("Lidl").id)
        for _ in 0..<2 {
            try a.addShoppingItems(["Soap", "Milk", "Bread"])
            for name in ["Bread", "Milk", "Soap"] { _ = try a.checkShoppingItem(name) }
            try a.addShoppingItems(["Soap", "Milk", "Bread"], on: lidl)
            for name in ["Soap", "Milk", "Bread"] { _ = try a.checkShoppingItem(name, on: lidl) }
        }
        try a.addShoppingItems(["Milk", "Soap", "Bread"])
        try a.addShoppingItems(["Milk", "Bread", "Soap"], on: lidl)
        #expect(try a.shoppingItems(inWalkingOrder: .active).map(\.name) == ["Bread", "Milk", "Soap"])
        #expect(try a.shoppingItems(inWalkingOrder: .active, on: lidl).map(\.name) == ["Soap", "Milk", "Bread"])
        #expect(try a.shoppingCheckoffs(on: lidl).count == 6)
        try a.moveShoppingItemInWalkingOrder("Bread", to: 1, on: lidl)
        #expect(try a.shoppingItems(inWalkingOrder: .active, on: lidl).map(\.name) == ["Bread", "Soap", "Milk"])
        #expect(try a.shoppingItems(inWalkingOrder: .active).map(\.name) == ["Bread", "Milk", "Soap"], "the first list's order untouched")
    }

    @Test func aListDeletedOnOneComputerWhileAnotherAddsToItLosesNothing() throws {
        let b = try secondMachine()
        let lidl = try #require(try a.addShoppingList("Lidl").id)
        try a.addShoppingItems(["Butter"], on: lidl)
        try sync(a, b)
        // Apart: A deletes Lidl with its items moved; B adds to it.
        try a.deleteShoppingList("Lidl", items: .move)
        try b.addShoppingItems(["Cheese"], on: lidl)
        try sync(a, b)
        for machine in [a, b] {
            #expect(try machine.shoppingItems().map(\.name) == ["Butter", "Cheese"], "B's addition on the first list, where Lidl's items went")
            #expect(try machine.shoppingLists().count == 1)
        }
    }

    @Test func aNotificationNamesTheListItsItemsWereAddedTo() throws {
        let b = try secondMachine()
        let lidl = try #require(try a.addShoppingList("Lidl").id)
        try a.addShoppingItems(["Butter", "Eggs", "Flour"], on: lidl)
        try a.addShoppingItems(["Milk"])
        let changes = try a.store.allDeltas(for: try b.store.versionVector()).flatMap(\.changes)
        try sync(a, b)
        let events = try b.filledIn(EventRules.events(of: [changes], labels: [:]), local: false).filter { $0.type == .shoppingAdded }
        let onLidl = events.filter { $0.list == lidl }
        #expect(onLidl.count == 3 && onLidl.allSatisfy { $0.listName == "Lidl" })
        #expect(events.filter { $0.list == nil }.map(\.title) == ["Milk"])
        let polish = try #require(MessageCatalogue.builtIn("pl"))
        let three = NotificationBatcher.notification(id: 1, replaces: nil, group: .shopping, events: onLidl, words: polish)
        #expect(three.summary == "3 nowe pozycje na liście Lidl")
        let english = NotificationBatcher.notification(id: 1, replaces: nil, group: .shopping, events: onLidl, words: .english)
        #expect(english.summary == "3 new items on Lidl")
        let mixed = NotificationBatcher.notification(id: 1, replaces: nil, group: .shopping, events: events, words: .english)
        #expect(mixed.summary == "4 new shopping items", "items on two lists: no list named")
    }

    @Test func aCatchUpOfManyAdditionsNamesTheirListOnlyWhenItIsOneList() throws {
        let b = try secondMachine()
        let lidl = try #require(try a.addShoppingList("Lidl").id)
        try sync(a, b)
        let base = try b.store.versionVector()
        func summary() throws -> HouseholdEvent {
            let changes = try a.store.allDeltas(for: base).flatMap(\.changes)
            let events = try b.filledIn(EventRules.events(of: [changes], labels: [:]), local: false).filter { $0.type == .shoppingAdded }
            #expect(events.count == 1, "more than 20: one summary")
            return try #require(events.first)
        }
        func said(_ event: HouseholdEvent) -> String {
            NotificationBatcher.notification(id: 1, replaces: nil, group: .shopping, events: [event], words: .english).summary
        }
        try a.addShoppingItems((1...25).map { "On Lidl \($0)" }, on: lidl)
        let onLidl = try summary()
        #expect(onLidl.count == 25 && onLidl.list == lidl && onLidl.listName == "Lidl" && onLidl.severalLists == nil)
        #expect(said(onLidl) == "25 new items on Lidl")
        try a.addShoppingItems((1...25).map { "On the first \($0)" })
        let both = try summary()
        #expect(both.count == 50 && both.severalLists == true && both.list == nil)
        #expect(said(both) == "50 new shopping items", "on two lists: none named, not 'added to Shopping List'")
    }

    @Test func aCatchUpOfRestocksInAHouseholdOfOneListIsOnIt() throws {
        let b = try secondMachine()
        let items = try a.addShoppingItems((1...25).map { "Item \($0)" })
        for item in items { _ = try a.checkShoppingItem(item.id) }
        try sync(a, b)
        let base = try b.store.versionVector()
        for item in items { _ = try a.restockShoppingItem(item.id) }
        let changes = try a.store.allDeltas(for: base).flatMap(\.changes)
        let restocked = try b.filledIn(EventRules.events(of: [changes], labels: [:]), local: false).filter { $0.type == .shoppingRestocked }
        #expect(restocked.count == 1 && restocked[0].count == 25 && restocked[0].severalLists == nil, "no list but the first: on it")
        // Once the household has another list, a run of restocks names none (their lists are not in the changes).
        try a.addShoppingList("Lidl")
        try sync(a, b)
        let unnamed = try b.filledIn(EventRules.events(of: [changes], labels: [:]), local: false).filter { $0.type == .shoppingRestocked }
        #expect(unnamed.first?.severalLists == true)
    }

    @Test func itemsAddedToTwoListsAreTwoBurstsOfNews() {
        func added(_ title: String, _ list: String?) -> HouseholdEvent {
            var event = HouseholdEvent(type: .shoppingAdded, entity: "shopping_item", row: title, title: title, author: "tom", time: 0)
            event.list = list
            event.listName = list.map { _ in "Lidl" }
            return event
        }
        var batcher = NotificationBatcher()
        _ = batcher.receive([added("Milk", nil), added("Butter", "l1"), added("Eggs", "l1")], group: .shopping, now: 0)
        let shown = batcher.tick(now: NotificationBatcher.debounceMilliseconds)
        #expect(shown.map(\.summary) == ["“Milk” added to Shopping List", "2 new items on Lidl"])
        // Within the window, more on Lidl: Lidl's burst alone grows; the first list's closes quietly.
        _ = batcher.receive([added("Rice", "l1")], group: .shopping, now: 10_000)
        let later = batcher.tick(now: batcher.windowMilliseconds)
        #expect(later.map(\.summary) == ["3 new items on Lidl"])
        #expect(later.first?.replaces == shown.last?.id)
    }
}
