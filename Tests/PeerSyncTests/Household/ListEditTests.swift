import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseIdentity
@testable import PulseHousehold

/// The lists' edits and their rules: task edits, "me", backlog rename/move/reorder, restock by name,
/// recurring occurrences, per-machine settings, undo after a re-add, conflicts in words.
@Suite struct ListEditTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        a = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: ["Anna", "Tom"])
    }

    // MARK: Tasks

    @Test func aTaskIsEditedFieldByField() throws {
        let task = try a.addTask("Water plants", assignee: "Tom", due: "2026-12-01")
        var edited = try a.editTask("1", .init(title: " Water the plants "))
        #expect(edited.title == "Water the plants" && edited.assignee == "Tom" && edited.due == "2026-12-01")
        edited = try a.editTask("water the plants", .init(assignee: .some("me"), due: .some(nil)))
        #expect(edited.id == task.id && edited.assignee == "Anna" && edited.due == nil)
        edited = try a.editTask(String(task.id.prefix(6)), .init(assignee: .some(nil), due: .some("2027-01-02")))
        #expect(edited.assignee == nil && edited.due == "2027-01-02")
        // An edit that changes nothing writes nothing.
        let before = try a.store.versionVector()
        #expect(try a.editTask("1", .init(title: "Water the plants")) == edited)
        #expect(try a.store.versionVector() == before)
    }

    @Test func badTaskEditsAreRefusedAndChangeNothing() throws {
        try a.addTask("Dishes")
        let export = try a.canonicalExport()
        #expect(message { try a.editTask("1", .init()) }.contains("nothing to change"))
        #expect(message { try a.editTask("1", .init(title: "  ")) }.contains("may not be empty"))
        #expect(message { try a.editTask("1", .init(assignee: .some("Zed"))) }.contains("no member called \"Zed\""))
        #expect(message { try a.editTask("1", .init(due: .some("someday"))) }.contains("is not a date"))
        #expect(message { try a.editTask("7", .init(title: "x")) }.contains("there is no task 7"))
        #expect(message { try a.editTask("Laundry", .init(title: "x")) }.contains("no task \"Laundry\""))
        #expect(try a.canonicalExport() == export)
    }

    @Test func meIsThisMachinesMemberAndMineListsTheirTasks() throws {
        try a.addTask("Dishes", assignee: "me")
        try a.addTask("Bins", assignee: "Tom")
        try a.addTask("Laundry")
        #expect(try a.tasks(mine: true).map(\.title) == ["Dishes"])
        let b = try secondMachine()
        #expect(try b.tasks(mine: true).map(\.title) == ["Bins"])
        #expect(try b.addTask("Cook", assignee: "ME", force: true).assignee == "Tom")
        // A member may not be called "me", and a machine with no member has no "me".
        #expect(message { try a.addMember("Me") }.contains("may not be called \"me\""))
        let invitation = try a.invitation()
        let c = try Household.join(
            HouseholdHome(directory: dir.url.appendingPathComponent("c")),
            invitation: Invitation(householdID: invitation.householdID, secret: invitation.secret, memberID: nil))
        try a.store.sync(to: c.store)
        #expect(message { try c.addTask("Sweep", assignee: "me", force: true) }.contains("belongs to no member"))
        #expect(message { _ = try c.tasks(mine: true) }.contains("belongs to no member"))
    }

    /// Different fields edited on two machines are both kept; the same field on both ends
    /// with the later write everywhere and a conflict in the log, in people's words.
    @Test func concurrentEditsKeepBothFieldsAndLogTheSameField() throws {
        try a.addTask("Water plants")
        let b = try secondMachine()
        try a.editTask("1", .init(title: "Water the plants"))
        try b.editTask("1", .init(assignee: .some("me")))
        try sync(a, b)
        #expect(try a.tasks() == b.tasks())
        #expect(try a.tasks()[0].title == "Water the plants" && a.tasks()[0].assignee == "Tom")
        #expect(try a.conflicts().isEmpty)
        try a.editTask("1", .init(due: .some("2026-12-01")))
        try b.editTask("1", .init(due: .some("2026-12-24"))) // later: B's clock has run on
        try sync(a, b)
        #expect(try a.tasks()[0].due == b.tasks()[0].due)
        // The machine that wrote the losing value always logs it (it received the winner);
        // the other logs it too when the loser reaches it (a change overwritten before it
        // is sent is not sent at all).
        let logged = try a.conflicts() + b.conflicts()
        #expect((1...2).contains(logged.count) && Set(logged.map(\.field)) == ["due"], "\(logged)")
        let conflict = try #require(logged.first)
        #expect(conflict.field == "due" && conflict.title == "Water the plants")
        #expect(conflict.summary.contains("Anna") && conflict.summary.contains("Tom") && conflict.summary.contains("due date"))
        #expect(conflict.summary.contains("the task “Water the plants”"), "\(conflict.summary)")
        #expect(!conflict.summary.contains(conflict.row))
    }

    // MARK: Recurring

    @Test func yesterdaysUndoneOccurrenceGivesWayToTodays() throws {
        let template = try a.addRecurringTemplate("Water plants", schedule: "daily")
        let monday = try #require(IsoDate("2026-11-23")), tuesday = try #require(IsoDate("2026-11-24"))
        try a.generateRecurringTasks(on: monday)
        #expect(try a.tasks().map(\.period) == ["2026-11-23"])
        try a.generateRecurringTasks(on: tuesday)
        // Monday's undone one is replaced (not listed, not counted by the focus rule) but kept.
        #expect(try a.tasks().map(\.period) == ["2026-11-24"])
        #expect(try a.activeTaskCount() == 1)
        #expect(try !a.store.row(.task, "rt-\(template.id)-2026-11-23").isEmpty)
        // A done occurrence stays as history.
        _ = try a.completeTask("1")
        try a.generateRecurringTasks(on: try #require(IsoDate("2026-11-25")))
        #expect(try a.tasks().map { "\($0.period!) \($0.done)" } == ["2026-11-25 false", "2026-11-24 true"])
    }

    @Test(arguments: [
        // (template, period, done) per task → the ids hidden
        ([("t", "2026-01-01", false), ("t", "2026-01-02", false)], ["0"]),
        ([("t", "2026-01-01", true), ("t", "2026-01-02", false)], []),
        ([("t", "2026-01-01", false), ("t", "2026-01-02", true)], ["0"]),
        ([("t", "2026-01-01", false), ("u", "2026-01-02", false)], []),
        ([("t", "2026-01-03", false), ("t", "2026-01-01", false), ("t", "2026-01-02", false)], ["1", "2"]),
        ([("", "", false), ("t", "2026-01-01", false)], []),
    ])
    func supersededOccurrences(_ rows: [(String, String, Bool)], _ hidden: [String]) {
        let tasks = rows.enumerated().map { index, row in
            HouseholdTask(
                id: String(index), title: "x", done: row.2, assigneeID: nil, assignee: nil, due: nil, created: Int64(index),
                template: row.0.isEmpty ? nil : row.0, period: row.1.isEmpty ? nil : row.1)
        }
        #expect(RecurringRules.superseded(tasks) == Set(hidden))
    }

    // MARK: Backlog

    @Test func backlogItemsAreRenamedMovedAndReordered() throws {
        try a.addCategory("Garden")
        try a.addCategory("Kitchen")
        for title in ["Raised bed", "Fence", "Pond"] { try a.addBacklogItem(title, to: "Garden") }
        try a.addBacklogItem("Tiles", to: "Kitchen")
        #expect(try a.renameBacklogItem("fence", to: "Paint the fence").title == "Paint the fence")
        #expect(try a.moveBacklogItem("Pond", position: 1).items.map(\.title) == ["Pond", "Raised bed", "Paint the fence"])
        #expect(try a.moveBacklogItem("Pond", position: 2).items.map(\.title) == ["Raised bed", "Pond", "Paint the fence"])
        let kitchen = try a.moveBacklogItem("Raised bed", to: "Kitchen", position: 1)
        #expect(kitchen.items.map(\.title) == ["Raised bed", "Tiles"])
        #expect(try a.backlog().map { $0.items.map(\.title) } == [["Pond", "Paint the fence"], ["Raised bed", "Tiles"]])
        let export = try a.canonicalExport()
        #expect(message { _ = try a.moveBacklogItem("Pond") }.contains("say where to"))
        #expect(message { _ = try a.moveBacklogItem("Pond", position: 4) }.contains("between 1 and 2"))
        #expect(message { _ = try a.moveBacklogItem("Pond", to: "Attic") }.contains("no category \"Attic\""))
        #expect(message { _ = try a.renameBacklogItem("Pond", to: "") }.contains("may not be empty"))
        #expect(try a.canonicalExport() == export)
    }

    @Test func anItemMadeBeforePositionsIsOrderedByCreationAndReorders() throws {
        try a.addCategory("Garden")
        let category = try a.resolveCategory("Garden").id
        // Rows written the version-3 way: no position field, yet complete.
        for (id, title) in [("old-1", "First"), ("old-2", "Second")] {
            try a.store.write(member: a.memberID) { tx in
                try tx.create(
                    .backlogItem, id,
                    [
                        "title": .text(title), "category": .text(category),
                        "created": .integer(try a.store.orderingKey()), "deleted": .bool(false),
                    ])
            }
        }
        try a.addBacklogItem("Third", to: "Garden")
        #expect(try a.backlog()[0].items.map(\.title) == ["First", "Second", "Third"])
        #expect(try a.moveBacklogItem("Third", position: 1).items.map(\.title) == ["Third", "First", "Second"])
        #expect(try a.moveBacklogItem("First", position: 3).items.map(\.title) == ["Third", "Second", "First"])
    }

    @Test(arguments: [
        // current positions in the new order, index moved, end key → expected
        ([Int64(5)], 0, Int64(100), [Int64(100)]),
        ([10, 20, 5], 2, 100, [10, 20, 1044]), // to the end
        ([30, 10, 20], 0, 100, [-1014, 10, 20]), // to the front
        ([10, 40, 20], 1, 100, [10, 15, 20]), // between: the midpoint
        ([10, 40, 11], 1, 100, [1024, 2048, 3072]), // no room: renumbered
        ([Int64.min + 5, Int64.min, Int64.max], 1, 100, [Int64.min + 5, 2, Int64.max]), // no overflow
    ])
    func positions(_ current: [Int64], _ moved: Int, _ end: Int64, _ expected: [Int64]) {
        let result = BacklogRules.positions(current, movedTo: moved, end: end)
        #expect(result == expected)
        #expect(result == result.sorted(), "the new order holds")
    }

    @Test func aBacklogItemMovedOnOneMachineAndRenamedOnTheOtherKeepsBoth() throws {
        try a.addCategory("Garden")
        try a.addCategory("Kitchen")
        try a.addBacklogItem("Fence", to: "Garden")
        let b = try secondMachine()
        _ = try a.moveBacklogItem("Fence", to: "Kitchen")
        _ = try b.renameBacklogItem("Fence", to: "Paint the fence")
        try sync(a, b)
        #expect(try a.backlog() == b.backlog())
        #expect(try a.backlog().map { $0.items.map(\.title) } == [[], ["Paint the fence"]])
        #expect(try a.conflicts().isEmpty && b.conflicts().isEmpty)
    }

    // MARK: Shopping

    @Test func addingANameInTheRestockPoolBringsThatItemBack() throws {
        try a.addShoppingItems(["Milk", "Eggs", "Bread"])
        let milk = try a.checkShoppingItem("Milk")
        _ = try a.checkShoppingItem("Bread")
        // The pool: most recently bought first.
        #expect(try a.shoppingItems(.restock).map(\.name) == ["Bread", "Milk"])
        let result = try a.addOrRestockShoppingItems(["milk", "Butter"])
        #expect(result.restocked == [milk.id])
        #expect(try a.shoppingItems().map(\.name) == ["Eggs", "Milk", "Butter"])
        #expect(try a.shoppingItems(.restock).map(\.name) == ["Bread"])
        #expect(try a.shoppingItems().first { $0.name == "Milk" }?.id == milk.id)
    }

    /// A name on the list already adds nothing, and a name given twice counts once (issue 52,
    /// item 9); the page's ids keep an addition arriving twice answered the same.
    @Test func aNameOnTheListAlreadyIsNotAddedTwice() throws {
        try a.addShoppingItems(["Milk"])
        let again = try a.addOrRestockShoppingItems(["milk", "MILK", "Eggs", "eggs"])
        #expect(try a.shoppingItems().map(\.name) == ["Milk", "Eggs"])
        #expect(again.already.count == 1 && again.items.map(\.name) == ["Milk", "Eggs"])
        let ids = [RowIDRules.newRowID(), RowIDRules.newRowID(), RowIDRules.newRowID()]
        let first = try a.addShoppingItems([" MILK", "Jam", "jam"], ids: ids)
        #expect(first.items.map(\.name) == ["Milk", "Jam", "Jam"] && first.items[1].id == first.items[2].id)
        #expect(try a.shoppingItems().map(\.name) == ["Milk", "Eggs", "Jam"])
        // The same addition arriving again (a phone's replayed queue): the same answers, nothing added.
        let replay = try a.addShoppingItems([" MILK", "Jam", "jam"], ids: ids)
        #expect(replay.items.map(\.id) == first.items.map(\.id))
        #expect(try a.shoppingItems().map(\.name) == ["Milk", "Eggs", "Jam"])
    }

    /// The rule finds a name's items by the store's key, in any case of any language we
    /// speak, on a long list and its pool: on the list, answered; in the pool, brought back;
    /// an undone deletion refused while the same name, in another case, is back.
    @Test func theRuleFindsNamesInAnyCaseOnALongList() throws {
        try a.addShoppingItems((0..<300).map { "Item \($0)" } + ["Äpfel", "Łosoś", "Öl"])
        let oil = try a.checkShoppingItem("Öl")
        let again = try a.addOrRestockShoppingItems(["äPFEL", "ÖL", "ŁOSOŚ", "Brot"])
        #expect(again.already.count == 2 && again.restocked == [oil.id])
        #expect(try a.shoppingItems().suffix(4).map(\.name) == ["Äpfel", "Łosoś", "Öl", "Brot"])
        let deleted = try a.deleteShoppingItem("Brot")
        try a.addShoppingItems(["BROT"])
        #expect(code { _ = try a.undeleteShoppingItem(deleted.id, to: .active) } == "undo_would_duplicate")
        _ = try a.deleteShoppingItem("BROT")
        #expect(try a.undeleteShoppingItem(deleted.id, to: .active).name == "Brot")
        #expect(code { _ = try a.undeleteShoppingItem(deleted.id, to: .active) } == "nothing_to_undo")
    }

    @Test(arguments: [
        (["Milk"], ["Milk"], [true]),
        (["milk", "MILK"], ["Milk"], [true, false]), // a pool item comes back once
        (["Eggs"], ["Milk"], [false]),
        (["Milk"], ["Milk", "Milk"], [true]), // the most recently bought one
    ])
    func restockPlan(_ names: [String], _ pool: [String], _ restocks: [Bool]) {
        let items = pool.enumerated().map { ShoppingItem(id: "id\($0)", name: $1, state: .restock, listed: Int64(10 - $0)) }
        let plan = ShoppingRules.plan(names, pool: items)
        #expect(plan.map { $0.restock != nil } == restocks)
        if restocks.first == true { #expect(plan[0].restock?.id == "id0") }
    }

    /// The plan by tables answers as the rule reads, name by name (the list, the addition's
    /// earlier names, then the pool in its order): random additions against that reading.
    @Test func theRestockPlanByTablesAnswersAsTheRuleReads() {
        func byTheRule(_ names: [String], pool: [ShoppingItem], active: [ShoppingItem]) -> [ShoppingRules.Step] {
            var taken = Set<String>(), first: [String: Int] = [:]
            return names.enumerated().map { index, name in
                let key = name.lowercased()
                if let listed = active.first(where: { $0.name.lowercased() == key }) { return .init(name: name, restock: nil, onList: listed) }
                if let earlier = first[key] { return .init(name: name, restock: nil, repeatOf: earlier) }
                first[key] = index
                let match = pool.first { $0.name.lowercased() == key && !taken.contains($0.id) }
                if let match { taken.insert(match.id) }
                return .init(name: name, restock: match)
            }
        }
        var random = SeededGenerator(seed: 54)
        let words = ["Milk", "milk", "MILK", "Eggs", "eggs", "Jam", "Bread", "Żurek", "żurek", "Kaffee"]
        for round in 0..<500 {
            func some(_ most: Int) -> [String] { (0..<Int.random(in: 0...most, using: &random)).map { _ in words.randomElement(using: &random)! } }
            let pool = some(6).enumerated().map { ShoppingItem(id: "p\(round)-\($0)", name: $1, state: .restock, listed: Int64($0)) }
            let active = some(4).enumerated().map { ShoppingItem(id: "a\(round)-\($0)", name: $1, state: .active, listed: Int64($0)) }
            let names = some(6)
            #expect(ShoppingRules.plan(names, pool: pool, active: active) == byTheRule(names, pool: pool, active: active), "\(names) \(pool) \(active)")
        }
    }

    @Test func undoRefusesWhenAClearedItemWasAddedAgain() throws {
        try a.addShoppingItems(["Milk", "Eggs"])
        try a.clearShoppingList()
        try a.addShoppingItems(["milk"])
        let export = try a.canonicalExport()
        let refusal = message { try a.undoClearShoppingList() }
        #expect(refusal.contains("“Milk”") && refusal.contains("twice") && refusal.contains("Nothing was restored"), "\(refusal)")
        #expect(try a.canonicalExport() == export)
        // Check the re-added one off, and the undo goes through: exactly the cleared items.
        _ = try a.checkShoppingItem("milk")
        let b = try secondMachine()
        #expect(message { try b.undoClearShoppingList() }.contains("on the machine that made it"))
        #expect(try a.undoClearShoppingList().map(\.name) == ["Milk", "Eggs"])
        #expect(try a.shoppingItems(.restock).map(\.name) == ["milk"])
    }

    // MARK: Conflicts in words

    @Test func conflictWording() {
        func side(_ value: FieldValue, _ name: String?, _ machine: String?, entity: EntityKind, field: String) -> HouseholdConflict.Side {
            HouseholdConflict.Side(
                value: value, hlc: 0, replica: "r", member: name, memberName: name, machine: machine,
                shown: ConflictWording.value(value, entity: entity, field: field))
        }
        let rows: [(ConflictKind, EntityKind, String, String?, FieldValue, FieldValue, String)] = [
            (
                .overwritten, .shoppingItem, "name", "Milk", .text("Oat milk"), .text("Whole milk"),
                "Tom (on tom-pc) and Anna (on anna-pc) both changed the name of the shopping item “Milk” without seeing each other's change: “Oat milk”, the later one, was kept; “Whole milk” was not."
            ),
            (
                .rejected, .shoppingItem, "state", "Milk", .text("deleted"), .text("active"),
                "Tom (on tom-pc) and Anna (on anna-pc) both changed the place (list, restock pool or removed) of the shopping item “Milk” without seeing each other's change: removed, the later one, was kept; on the list was not."
            ),
            (
                .editOfDeleted, .task, "title", "Bins", .bool(true), .text("Bins out"),
                "Anna (on anna-pc) changed the title of the task “Bins” to “Bins out” while Tom (on tom-pc) deleted it: it stays deleted (the change is kept inside it, should it come back)."
            ),
            (
                .overwritten, .task, "done", nil, .bool(true), .bool(false),
                "Tom (on tom-pc) and Anna (on anna-pc) both changed the done mark of the task without seeing each other's change: done, the later one, was kept; not done was not."
            ),
        ]
        for (kind, entity, field, title, kept, lost, expected) in rows {
            let sentence = ConflictWording.sentence(
                kind: kind, entity: entity, field: field, title: title,
                kept: side(kept, "Tom", "tom-pc", entity: entity, field: kind == .editOfDeleted ? "deleted" : field),
                lost: side(lost, "Anna", "anna-pc", entity: entity, field: field))
            #expect(sentence == expected)
        }
        #expect(
            ConflictWording.sentence(
                kind: .overwritten, entity: .settings, field: "suggestions", title: nil,
                kept: side(.bool(false), nil, nil, entity: .settings, field: "suggestions"),
                lost: side(.bool(true), "Anna", nil, entity: .settings, field: "suggestions")
            )
            .hasPrefix("the household itself and Anna both changed the suggestions of the household settings"))
    }
}

/// The local API calls the same rules, with the same refusals.
@Suite struct ListEditAPITests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        a = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: ["Anna", "Tom"])
    }

    func call(_ method: String, _ params: [String: JSONValue]) throws -> JSONValue { try HouseholdAPI.call(method, params, on: a) }
    @Test func tasksBacklogAndShoppingEditsThroughTheAPIGiveTheRulesAnswers() throws {
        _ = try call("task.add", ["title": .string("Dishes"), "assignee": .string("Tom"), "due": .string("2026-12-01")])
        guard
            case let .object(task) = try call(
                "task.edit",
                [
                    "task": .string("1"), "title": .string("Wash up"),
                    "assignee": .string("me"), "due": .null,
                ])
        else {
            Issue.record("no task"); return
        }
        #expect(task["title"] == .string("Wash up") && task["assignee"] == .string("Anna") && task["due"] == nil)
        #expect(try call("task.list", ["mine": .bool(true)]) == call("task.list", [:]))
        #expect(message { _ = try call("task.edit", ["task": .string("1"), "title": .null]) }.contains("may not be null"))
        #expect(message { _ = try call("task.edit", ["task": .string("1"), "due": .integer(3)]) }.contains("a string or null"))
        #expect(message { _ = try call("task.edit", ["task": .string("1")]) }.contains("nothing to change"))

        _ = try call("backlog.category.add", ["title": .string("Garden")])
        _ = try call("backlog.add", ["category": .string("Garden"), "title": .string("Fence")])
        _ = try call("backlog.add", ["category": .string("Garden"), "title": .string("Pond")])
        _ = try call("backlog.rename", ["item": .string("Fence"), "title": .string("Paint the fence")])
        guard case let .object(category) = try call("backlog.move", ["item": .string("Pond"), "position": .integer(1)]),
            case let .array(items)? = category["items"]
        else { Issue.record("no category"); return }
        let titles: [JSONValue?] = items.map { value -> JSONValue? in
            guard case let .object(item) = value else { return nil }
            return item["title"]
        }
        #expect(titles == [.string("Pond"), .string("Paint the fence")])
        #expect(message { _ = try call("backlog.move", ["item": .string("Pond"), "position": .integer(0)]) }.contains("1 = first"))
        #expect(message { _ = try call("backlog.move", ["item": .string("Pond")]) }.contains("say where to"))

        _ = try call("shop.add", ["names": .array([.string("Milk")])])
        _ = try call("shop.check", ["item": .string("Milk")])
        guard case let .array(added) = try call("shop.add", ["names": .array([.string("milk")])]),
            case let .object(milk)? = added.first, case let .array(pool) = try call("shop.list", ["pool": .string("restock")])
        else {
            Issue.record("no items"); return
        }
        #expect(milk["name"] == .string("Milk") && pool.isEmpty) // the same item, back from the pool
        #expect(try call("conflicts.list", [:]) == .array([]))
    }
}
