import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseIdentity
@testable import PulseHousehold

@Suite struct HouseholdRulesTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        a = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: [])
    }

    /// A name as every command takes it: trimmed, 1…max characters (not bytes), no C0 or DEL.
    @Test func namesAreTrimmedAndBounded() throws {
        let accepted: [(String, String)] = [
            ("  Milk ", "Milk"), ("Milk", "Milk"), ("\u{3000}Brot\u{A0}", "Brot"),
            (String(repeating: "é", count: 10), String(repeating: "é", count: 10)),
            ("Crème\u{0301}", "Crème\u{0301}"), ("a\u{85}b", "a\u{85}b"),
        ]
        for (raw, name) in accepted {
            #expect(try Validation.name(raw, what: "item name", max: 10) == name)
        }
        let refused: [(String, String)] = [
            (" \t ", "may not be empty"), (String(repeating: "x", count: 11), "longer than 10"),
            (String(repeating: "é", count: 11), "longer than 10"), ("a\u{7}b", "control characters"),
            ("a\u{7F}", "control characters"), ("tab\there", "control characters"),
        ]
        for (raw, message) in refused {
            #expect(
                "\(try #require(throws: HouseholdError.self) { try Validation.name(raw, what: "item name", max: 10) })".contains(message),
                "\(raw.debugDescription)")
        }
    }

    // MARK: Shopping

    @Test func shoppingCycleThroughTheRestockPool() throws {
        try a.addShoppingItems(["  Milk ", "", "Eggs"])
        #expect(try a.shoppingItems().map(\.name) == ["Milk", "Eggs"])
        let milk = try a.checkShoppingItem("milk")
        #expect(try a.shoppingItems().map(\.name) == ["Eggs"])
        #expect(try a.shoppingItems(.restock).map(\.id) == [milk.id])
        let back = try a.restockShoppingItem("1")
        #expect(back.id == milk.id) // the same item, not a duplicate
        #expect(try a.shoppingItems().map(\.name) == ["Eggs", "Milk"])
        #expect(message { _ = try a.restockShoppingItem("Milk") }.contains("no item \"Milk\" in the restock pool"))
        #expect(message { try a.addShoppingItems(["", "  "]) }.contains("nothing to add"))
    }

    @Test func ambiguousHandlesListTheCandidates() throws {
        // Two of one name (as two computers make while apart; an addition never does).
        try a.addShoppingItems(["Milk", "Oats"])
        _ = try a.renameShoppingItem("Oats", to: "Milk")
        let error = message { _ = try a.checkShoppingItem("milk") }
        #expect(error.contains("matches 2 items"))
        #expect(message { _ = try a.checkShoppingItem("3") }.contains("there is no item 3: the shopping list has 2"))
        // Made in the same call, their ids start alike (the time); their short codes (the
        // last 8 characters) differ, the error shows them, and either one finds its item.
        let ids = try a.shoppingItems().map(\.id)
        #expect(ids[0].prefix(8) == ids[1].prefix(8))
        for id in ids { #expect(error.contains(Handles.shortCode(id) + " Milk")) }
        #expect(message { _ = try a.checkShoppingItem(String(ids[0].prefix(8))) }.contains("matches 2 items"))
        #expect(try a.checkShoppingItem(Handles.shortCode(ids[1])).id == ids[1])
        #expect(try a.checkShoppingItem(String(ids[0].suffix(5)).uppercased()).id == ids[0])
    }

    /// An id prefix made only of digits (1 id in 16 starts with four) is an id, not a
    /// position, once it is beyond the list.
    @Test func aDigitsOnlyIdPrefixBeyondTheListIsAnID() throws {
        let items = [("Milk", "1234abcd-0000-4000-8000-00000000beef"), ("Eggs", "ffffabcd-0000-4000-8000-00000000cafe")]
        func resolve(_ handle: String) throws -> String {
            try Handles.resolve(handle, in: items, what: "item", list: "shopping list", name: \.0, id: \.1).0
        }
        #expect(try resolve("2") == "Eggs")
        #expect(try resolve("1234") == "Milk")
        #expect(try resolve("ffff") == "Eggs")
        #expect(try resolve("beef") == "Milk") // the end of an id, its short code's tail
        #expect(try resolve("0000CAFE") == "Eggs")
        #expect(message { _ = try resolve("abcd") }.contains("no item \"abcd\""))
        #expect(message { _ = try resolve("3") }.contains("there is no item 3: the shopping list has 2"))
        #expect(message { _ = try resolve("9999") }.contains("there is no item 9999"))
        // The shopping list resolves through the same rule (positions in the list, ids and
        // names across the list and the restock pool).
        try a.store.write(member: nil) { tx in
            try tx.put(.shoppingItem, "88946300-0000-4000-8000-000000000000", ["name": .text("Tea"), "state": .text("active"), "listed": .integer(1)])
            try tx.put(.shoppingItem, "ffff0000-0000-4000-8000-000000000000", ["name": .text("Jam"), "state": .text("restock"), "listed": .integer(2)])
        }
        #expect(message { _ = try a.checkShoppingItem("5") }.contains("there is no item 5: the shopping list has 1"))
        #expect(try a.checkShoppingItem("889463").name == "Tea")
        #expect(try a.restockShoppingItem("ffff").name == "Jam")
    }

    @Test func clearAllIsUndoneExactly() throws {
        try a.addShoppingItems(["Milk", "Eggs", "Bread"])
        _ = try a.checkShoppingItem("Bread") // in the restock pool: not part of the visible list
        #expect(try a.clearShoppingList().map(\.name) == ["Milk", "Eggs"])
        #expect(try a.shoppingItems().isEmpty)
        try a.addShoppingItems(["Tea"])
        #expect(try a.undoClearShoppingList().map(\.name) == ["Milk", "Eggs"])
        #expect(Set(try a.shoppingItems().map(\.name)) == ["Milk", "Eggs", "Tea"])
        #expect(try a.shoppingItems(.restock).map(\.name) == ["Bread"])
        #expect(message { try a.undoClearShoppingList() }.contains("no clear to undo"))
    }

    // MARK: Tasks

    @Test func theFocusRuleRefusesAFourthActiveTask() throws {
        try a.addTask("One", assignee: "anna", due: "today")
        try a.addTask("Two")
        try a.addTask("Three")
        let refusal = message { try a.addTask("Four") }
        #expect(refusal.contains("focus rule: at most 3 active tasks, and there are 3 (One, Two, Three)"))
        #expect(try a.tasks().count == 3)
        try a.addTask("Four", force: true)
        _ = try a.completeTask("Four")
        #expect(message { _ = try a.reopenTask("Four") }.contains("focus rule"))
        _ = try a.completeTask("One")
        #expect(try a.reopenTask("4").done == false) // position 4: "Four" (completed ones come last)
        let list = try a.tasks()
        #expect(list.map(\.title) == ["Two", "Three", "Four", "One"])
        #expect(list.last?.assignee == "Anna")
        #expect(list.last?.due == Days.today().description)
        #expect(message { try a.addTask("Five", due: "someday", force: true) }.contains("not a date"))
        #expect(message { try a.addTask("Five", assignee: "Zed", force: true) }.contains("no member called \"Zed\""))
    }

    @Test func afterAMergeMoreThanThreeMayBeActiveAndNothingIsLost() throws {
        let b = try secondMachine()
        for title in ["A1", "A2", "A3"] { try a.addTask(title) }
        for title in ["B1", "B2"] { try b.addTask(title) }
        try sync(a, b)
        #expect(try a.activeTaskCount() == 5)
        #expect(try b.tasks().map(\.title).sorted() == ["A1", "A2", "A3", "B1", "B2"])
    }

    // MARK: Members and settings

    @Test func removingAMemberUnassignsTheirTasks() throws {
        try a.addTask("Dishes", assignee: "Tom")
        let zoe = try a.addMember("Zoe Smith")
        #expect(zoe.initials == "ZS")
        #expect(zoe.color == MemberStyle.color(at: 2))
        #expect(try a.editMember("zoe smith", initials: "zo", color: "#112233").initials == "ZO")
        #expect(message { _ = try a.editMember("Zoe Smith", color: "red") }.contains("#RRGGBB"))
        #expect(message { try a.addMember("anna") }.contains("already a member"))
        _ = try a.removeMember("Tom")
        #expect(try a.tasks().first?.assignee == nil)
        #expect(try a.members().map(\.name) == ["Anna", "Zoe Smith"])
        #expect(try a.store.value(.task, a.tasks()[0].id, "title") == .text("Dishes")) // nothing else lost
    }

    @Test func settingsAndTheHouseholdName() throws {
        #expect(try a.settings() == HouseholdSettings(appearance: .system, celebrations: true, suggestions: true))
        #expect(try a.setSetting("appearance", "dark").appearance == .dark)
        #expect(try a.setSetting("celebrations", "off").celebrations == false)
        #expect(message { _ = try a.setSetting("appearance", "blue") }.contains("light, dark or system"))
        #expect(message { _ = try a.setSetting("volume", "on") }.contains("unknown setting"))
        #expect(try a.renameHousehold("  The Smiths ") == "The Smiths")
        #expect(try a.setSetting("suggestions", "off").suggestions == false)
        let b = try secondMachine()
        // Appearance and celebrations are this machine's own; suggestions are the household's.
        #expect(try b.settings() == HouseholdSettings(appearance: .system, celebrations: true, suggestions: false))
        #expect(try a.settings() == HouseholdSettings(appearance: .dark, celebrations: false, suggestions: false))
        #expect(try b.householdName() == "The Smiths")
        #expect(try b.members().first(where: \.isThisMachine)?.name == "Tom")
    }

    // MARK: Backlog

    @Test func categoriesHoldItemsAndRefuseCarelessRemoval() throws {
        try a.addCategory("Home Projects")
        try a.addCategory("Vacation")
        try a.addBacklogItem("Paint fence", to: "home projects")
        try a.addBacklogItem("Book hotel", to: "2")
        #expect(message { try a.addBacklogItem("x", to: "Garden") }.contains("no category \"Garden\""))
        #expect(message { try a.addCategory("vacation") }.contains("already a category"))
        #expect(message { _ = try a.removeCategory("Vacation") }.contains("holds 1 item"))
        #expect(try a.backlog().count == 2)
        try a.addCategory("Empty")
        _ = try a.removeCategory("Empty") // at once
        _ = try a.removeCategory("Vacation", force: true)
        #expect(try a.backlog().map(\.title) == ["Home Projects"])
        try a.addCategory("Garden")
        #expect(try a.moveCategory("Garden", to: 1).map(\.title) == ["Garden", "Home Projects"])
        let task = try a.promoteBacklogItem("Paint fence", due: "tomorrow")
        #expect(task.title == "Paint fence" && task.due == Days.adding(1, to: Days.today()).description)
        #expect(try a.backlog().flatMap(\.items).isEmpty)
    }

    @Test func anItemAddedToACategoryDeletedElsewhereIsNotLost() throws {
        let b = try secondMachine()
        try a.addCategory("Vacation")
        try sync(a, b)
        _ = try a.removeCategory("Vacation") // empty on A
        try b.addBacklogItem("Book hotel", to: "Vacation") // meanwhile on B
        try sync(a, b)
        for machine in [a, b] {
            let backlog = try machine.backlog()
            #expect(backlog.map(\.title) == ["Vacation"])
            #expect(backlog.first?.keptForItems == true)
            #expect(backlog.first?.items.map(\.title) == ["Book hotel"])
        }
    }

    // MARK: Recurring tasks

    @Test func schedules() throws {
        let monday = IsoDate("2026-11-23")!, sunday = IsoDate("2026-11-22")!
        #expect(Days.weekday(monday) == 1 && Days.weekday(sunday) == 7)
        #expect(Household.isDue("weekly:mon,thu", on: monday))
        #expect(!Household.isDue("weekly:mon,thu", on: sunday))
        #expect(Household.isDue("monthly:31", on: IsoDate("2026-02-28")!)) // the month's last day
        #expect(!Household.isDue("monthly:31", on: IsoDate("2026-03-30")!))
        #expect(Household.isDue("daily", on: sunday))
        #expect(try Household.normalizeSchedule("Weekly: thu, mon") == "weekly:mon,thu")
        #expect(message { _ = try Household.normalizeSchedule("hourly") }.contains("daily, weekly"))
    }

    @Test func aRecurringTaskGeneratedOnTwoDisconnectedMachinesIsOneTask() throws {
        let b = try secondMachine()
        try a.addRecurringTemplate("Water plants", schedule: "daily", assignee: "Tom")
        try sync(a, b)
        let day = IsoDate("2026-11-21")!
        #expect(try a.generateRecurringTasks(on: day) == 1)
        #expect(try a.generateRecurringTasks(on: day) == 0) // once per period
        #expect(try b.generateRecurringTasks(on: day) == 1) // B has not seen A's
        try sync(a, b)
        for machine in [a, b] {
            let generated = try machine.tasks().filter { $0.template != nil }
            #expect(generated.count == 1)
            #expect(generated.first?.period == "2026-11-21" && generated.first?.assignee == "Tom")
        }
        #expect(try a.store.canonicalState() == b.store.canonicalState())
    }

    @Test func completingAGeneratedTaskWinsOverALateGeneration() throws {
        let b = try secondMachine()
        try a.addRecurringTemplate("Take out bins", schedule: "weekly:sat")
        try sync(a, b)
        let saturday = IsoDate("2026-11-21")!
        try a.generateRecurringTasks(on: saturday)
        _ = try a.completeTask("Take out bins")
        try b.generateRecurringTasks(on: saturday) // B, still disconnected, makes it too
        try sync(a, b)
        for machine in [a, b] {
            #expect(try machine.tasks().filter { $0.title == "Take out bins" }.map(\.done) == [true])
        }
    }

    // MARK: The local API

    @Test func theAPICallsTheSameRules() throws {
        let added = try HouseholdAPI.call("shop.add", ["names": .array([.string("Milk"), .string("Eggs")])], on: a)
        guard case let .array(items) = added else { Issue.record("expected an array"); return }
        #expect(items.count == 2)
        for title in ["One", "Two", "Three"] { _ = try HouseholdAPI.call("task.add", ["title": .string(title)], on: a) }
        #expect(message { _ = try HouseholdAPI.call("task.add", ["title": .string("Four")], on: a) }.contains("focus rule"))
        _ = try HouseholdAPI.call("task.add", ["title": .string("Four"), "force": .bool(true)], on: a)
        #expect(message { _ = try HouseholdAPI.call("task.add", [:], on: a) }.contains("needs \"title\""))
        #expect(message { _ = try HouseholdAPI.call("shop.fly", [:], on: a) }.contains("unknown method"))
        let settings = try HouseholdAPI.call("settings.set", ["key": .string("appearance"), "value": .string("light")], on: a)
        #expect(settings == .object(["appearance": .string("light"), "celebrations": .bool(true), "suggestions": .bool(true), "kidsApproval": .bool(false)]))
        // Whether a method wrote is counted by the store, never guessed from its name: a
        // listing that makes today's repeating task is a write to send (issue 52, item 1).
        let before = a.store.localCommits
        _ = try HouseholdAPI.call("shop.list", [:], on: a)
        #expect(a.store.localCommits == before, "a plain listing commits nothing")
        _ = try HouseholdAPI.call("shop.add", ["names": .array([.string("Coffee beans")])], on: a)
        #expect(a.store.localCommits == before + 1)
        // One rule for a member's initials wherever the member is made (issue 52, item 15).
        #expect(try a.addMember("😀").initials == "?")
        #expect(try a.addMember("<b>Bold</b>").initials == "B")
        #expect(try a.addMember("Anna Maria").initials == "AM")
        // A backlog item removed by mistake comes back where it was (the page's Undo, item 10).
        _ = try a.addCategory("Garden")
        let fence = try a.addBacklogItem("Paint the fence", to: "Garden")
        _ = try a.removeBacklogItem(fence.id)
        #expect(try a.backlog().flatMap(\.items).isEmpty)
        #expect(try a.restoreBacklogItem(fence.id).title == "Paint the fence")
        #expect(throws: (any Error).self) { _ = try a.restoreBacklogItem(fence.id) }
        // And through the API, as the page's ✕ and its Undo call it: back in its category.
        _ = try HouseholdAPI.call("backlog.remove", ["item": .string(fence.id)], on: a)
        #expect(try a.backlog().flatMap(\.items).isEmpty)
        _ = try HouseholdAPI.call("backlog.restore", ["item": .string(fence.id)], on: a)
        let garden = try a.backlog().first { $0.title == "Garden" }
        #expect(garden?.items.map(\.title) == ["Paint the fence"], "\(String(describing: garden))")
        #expect(message { _ = try HouseholdAPI.call("backlog.restore", ["item": .string(fence.id)], on: a) }.isEmpty == false)
    }
}
