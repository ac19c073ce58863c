import FoundationEssentials
import Testing
@testable import PulseStore
@testable import PulseHousehold

/// Every refusal a person can meet through the API, by its code: each case makes a fresh
/// household, prepares it through the API, and checks the code (and that nothing changed
/// where that is visible). The page and the CLI decide by these codes, so they are the
/// contract (docs/API.md, "Refusal codes").
@Suite struct RefusalCodeTests {
    typealias Params = [String: JSONValue]
    struct Case: Sendable {
        let code: Refusal.Code
        let prepare: [(String, Params)]
        let method: String
        let params: Params
        var withoutMember = false
        var members: [String] = []
        var expect: Params = [:]
        var caller: APICaller = .control
    }

    static let pin: Params = ["pin": "1234"]
    static let kid: [(String, Params)] = [("kids.pin.set", pin), ("kids.add", ["name": "Mia", "pin": "1234"])]

    static let cases: [Case] = [
        Case(code: .empty, prepare: [], method: "member.add", params: ["name": " "], expect: ["field": "member_name"]),
        Case(
            code: .tooLong, prepare: [], method: "household.rename", params: ["name": .string(String(repeating: "x", count: 101))],
            expect: ["field": "household_name", "max": 100]),
        Case(code: .controlCharacters, prepare: [], method: "household.rename", params: ["name": "a\u{7}b"]),
        Case(code: .invalidDate, prepare: [], method: "task.add", params: ["title": "x", "due": "someday"], expect: ["text": "someday"]),
        Case(code: .reservedName, prepare: [], method: "member.add", params: ["name": "me"]),
        Case(
            code: .duplicate, prepare: [("backlog.category.add", ["title": "Home"])], method: "backlog.category.add",
            params: ["title": "home"], expect: ["kind": "category"]),
        Case(
            code: .notFound, prepare: [], method: "shop.check", params: ["item": "nope"],
            expect: ["kind": "item", "list": "shopping_list", "handle": "nope"]),
        Case(
            code: .noSuchPosition, prepare: [("shop.add", ["names": ["Milk"]])], method: "shop.check", params: ["item": "5"],
            expect: ["position": 5, "count": 1]),
        Case(code: .noMemberForMachine, prepare: [], method: "task.list", params: ["mine": true], withoutMember: true, expect: ["asked": "mine"]),
        Case(
            code: .noMemberForPhone, prepare: [], method: "task.add", params: ["title": "Call grandma", "assignee": "me"], expect: ["asked": "me"],
            caller: .phone(member: nil)),
        Case(code: .unknownMember, prepare: [], method: "task.add", params: ["title": "x", "assignee": "Zed"], expect: ["name": "Zed"]),
        Case(
            code: .nothingToChange, prepare: [("member.add", ["name": "Ann"])], method: "member.edit", params: ["member": "Ann"],
            expect: ["kind": "member"]),
        Case(code: .lastMember, prepare: [], method: "member.remove", params: ["member": "Ann"], members: ["Ann"]),
        Case(code: .invalidInitials, prepare: [], method: "member.add", params: ["name": "Ann", "initials": "ABCD"]),
        Case(code: .invalidColor, prepare: [], method: "member.add", params: ["name": "Ann", "color": "red"]),
        Case(code: .invalidAppearance, prepare: [], method: "settings.set", params: ["key": "appearance", "value": "blue"]),
        Case(
            code: .invalidSwitch, prepare: [], method: "settings.set", params: ["key": "celebrations", "value": "maybe"],
            expect: ["key": "celebrations"]),
        Case(code: .unknownSetting, prepare: [], method: "settings.set", params: ["key": "volume", "value": "on"]),
        Case(
            code: .focusRule, prepare: [("task.add", ["title": "A"]), ("task.add", ["title": "B"]), ("task.add", ["title": "C"])],
            method: "task.add", params: ["title": "D"], expect: ["limit": 3, "active": 3, "titles": ["A", "B", "C"]]),
        Case(
            code: .alreadyDone, prepare: [("task.add", ["title": "A"]), ("task.done", ["task": "A"])], method: "task.done",
            params: ["task": "A"], expect: ["title": "A"]),
        Case(code: .notDone, prepare: [("task.add", ["title": "A"])], method: "task.reopen", params: ["task": "A"]),
        Case(
            code: .positionOutOfRange, prepare: [("backlog.category.add", ["title": "Home"])], method: "backlog.category.move",
            params: ["category": "Home", "position": 5], expect: ["max": 1]),
        Case(
            code: .positionOutOfRangeIn, prepare: [("backlog.category.add", ["title": "Home"]), ("backlog.add", ["category": "Home", "title": "Paint"])],
            method: "backlog.move", params: ["item": "Paint", "position": 9], expect: ["max": 1, "category": "Home"]),
        Case(
            code: .categoryNotEmpty, prepare: [("backlog.category.add", ["title": "Home"]), ("backlog.add", ["category": "Home", "title": "Paint"])],
            method: "backlog.category.remove", params: ["category": "Home"], expect: ["title": "Home", "count": 1]),
        Case(
            code: .missingDestination, prepare: [("backlog.category.add", ["title": "Home"]), ("backlog.add", ["category": "Home", "title": "Paint"])],
            method: "backlog.move", params: ["item": "Paint"]),
        Case(code: .invalidWeekdays, prepare: [], method: "recurring.add", params: ["title": "Bins", "schedule": "weekly:someday"]),
        Case(code: .invalidSchedule, prepare: [], method: "recurring.add", params: ["title": "Bins", "schedule": "sometimes"]),
        Case(code: .nothingToAdd, prepare: [], method: "shop.add", params: ["names": [" "]]),
        Case(code: .listAlreadyEmpty, prepare: [], method: "shop.clear", params: [:]),
        Case(code: .noClearToUndo, prepare: [], method: "shop.undo", params: [:]),
        Case(
            code: .undoWouldDuplicate, prepare: [("shop.add", ["names": ["Milk"]]), ("shop.clear", [:]), ("shop.add", ["names": ["Milk"]])],
            method: "shop.undo", params: [:], expect: ["names": ["Milk"], "count": 1]),
        Case(
            code: .alreadyEarnedToday,
            prepare: kid + [
                ("kids.select", ["items": ["chore_001"], "pin": "1234"]),
                ("kids.done", ["kid": "Mia", "item": "chore_001"]),
            ],
            method: "kids.done", params: ["kid": "Mia", "item": "chore_001"], expect: ["kid": "Mia"]),
        Case(
            code: .notEnoughPeanuts, prepare: kid + [("kids.select", ["items": ["reward_001"], "pin": "1234"])],
            method: "kids.redeem", params: ["kid": "Mia", "reward": "reward_001"], expect: ["kid": "Mia", "balance": 0]),
        Case(
            code: .cannotTake, prepare: kid, method: "kids.adjust", params: ["kid": "Mia", "peanuts": -5, "reason": "oops", "pin": "1234"],
            expect: ["balance": 0, "peanuts": 5]),
        Case(
            code: .unknownKind, prepare: [("kids.pin.set", pin)], method: "kids.own",
            params: ["kind": "toy", "title": "x", "peanuts": 2, "category": "fun", "pin": "1234"]),
        Case(
            code: .unknownCategory, prepare: [("kids.pin.set", pin)], method: "kids.own",
            params: ["kind": "chore", "title": "x", "peanuts": 2, "category": "space", "pin": "1234"]),
        Case(
            code: .peanutsOutOfRange, prepare: [("kids.pin.set", pin)], method: "kids.own",
            params: ["kind": "chore", "title": "x", "peanuts": 50, "category": "fun", "pin": "1234"], expect: ["min": 1, "max": 20, "value": 50]),
        Case(code: .adjustmentOutOfRange, prepare: kid, method: "kids.adjust", params: ["kid": "Mia", "peanuts": 0, "reason": "x", "pin": "1234"]),
        Case(code: .noItemsNamed, prepare: [("kids.pin.set", pin)], method: "kids.select", params: ["items": [], "pin": "1234"]),
        Case(
            code: .alreadySelected, prepare: [("kids.pin.set", pin), ("kids.select", ["items": ["chore_001"], "pin": "1234"])],
            method: "kids.select", params: ["items": ["chore_001"], "pin": "1234"]),
        Case(code: .notSelected, prepare: [("kids.pin.set", pin)], method: "kids.deselect", params: ["items": ["chore_001"], "pin": "1234"]),
        Case(code: .pinAlreadySet, prepare: [("kids.pin.set", pin)], method: "kids.pin.set", params: ["pin": "5555"]),
        Case(code: .noPIN, prepare: [], method: "kids.pin.reset", params: [:]),
        Case(code: .pinNotSet, prepare: [], method: "kids.add", params: ["name": "Mia", "pin": "1234"]),
        Case(code: .pinRequired, prepare: [("kids.pin.set", pin)], method: "kids.add", params: ["name": "Mia"]),
        Case(code: .wrongPIN, prepare: [("kids.pin.set", pin)], method: "kids.add", params: ["name": "Mia", "pin": "0000"]),
        Case(
            code: .pinLocked, prepare: [("kids.pin.set", pin)] + Array(repeating: ("kids.add", ["name": "Mia", "pin": "0000"]), count: 3),
            method: "kids.add", params: ["name": "Mia", "pin": "1234"]),
        Case(code: .invalidPIN, prepare: [], method: "kids.pin.set", params: ["pin": "12a4"]),
        Case(code: .noResetAsked, prepare: [("kids.pin.set", pin)], method: "kids.pin.confirmReset", params: ["code": "123456"]),
        Case(
            code: .resetOnThisMachine, prepare: [("kids.pin.set", pin), ("kids.pin.reset", [:])], method: "kids.pin.confirmReset",
            params: ["code": "123456"]),
        Case(code: .missingParameter, prepare: [], method: "shop.check", params: [:], expect: ["method": "shop.check", "key": "item", "type": "string"]),
        Case(code: .wrongType, prepare: [], method: "shop.list", params: ["pool": 5], expect: ["key": "pool", "type": "string"]),
        Case(code: .titleNotNull, prepare: [("task.add", ["title": "A"])], method: "task.edit", params: ["task": "A", "title": .null]),
        Case(code: .invalidPool, prepare: [], method: "shop.list", params: ["pool": "deleted"]),
        Case(code: .unknownMethod, prepare: [], method: "shop.fly", params: [:], expect: ["method": "shop.fly"]),
    ]

    @Test(arguments: cases.indices) func theRefusalComesAsItsCode(index: Int) throws {
        let c = Self.cases[index]
        let dir = try TemporaryDirectory()
        let h = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: c.members)
        if c.withoutMember { try h.store.removeMeta("member_id") }
        for (method, params) in c.prepare {
            do { _ = try HouseholdAPI.call(method, params, on: h) } catch {
                // Preparing may meet refusals on purpose (the wrong PINs before a lock).
                guard case .wrongPIN = Refusal(error).code else { throw error }
            }
        }
        let before = try h.store.versionVector()
        do {
            _ = try HouseholdAPI.call(c.method, c.params, on: h, as: c.caller)
            Issue.record("\(c.method) was not refused; expected \(c.code.rawValue)")
        } catch {
            let refusal = Refusal(error)
            #expect(refusal.code == c.code, "\(c.method) \(c.params): \(refusal)")
            for (key, value) in c.expect { #expect(refusal.params[key] == value, "\(c.code.rawValue).\(key)") }
            if c.code == .pinLocked {
                // 5 s from the third wrong PIN (less when hashing took seconds on a busy machine).
                #expect(refusal.params["retryAfterSeconds"].flatMap(\.integerValue).map { (1...5).contains($0) } == true)
            }
            #expect(!refusal.message().isEmpty && !refusal.message().hasPrefix("refusal."))
        }
        #expect(try h.store.versionVector() == before, "a refusal writes nothing")
    }

    /// The refusals only the command line (or the agent's own start) meets come as codes too.
    @Test func theCommandLinesRefusalsComeAsCodesToo() throws {
        let dir = try TemporaryDirectory()
        func code(_ body: () throws -> Void) -> Refusal.Code? {
            do { try body() } catch { return Refusal(error).code }
            return nil
        }
        let home = HouseholdHome(directory: dir.url.appendingPathComponent("a"))
        let h = try Household.create(home, name: nil, members: [])
        #expect(code { _ = try Household.create(home, name: nil, members: []) } == .householdExists)
        #expect(code { _ = try Household.open(HouseholdHome(directory: dir.url.appendingPathComponent("none"))) } == .noHousehold)
        #expect(
            code { _ = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("x")), name: nil, members: ["Ann", "ann"]) }
                == .listedTwice)
        let file = dir.url.appendingPathComponent("file")
        try Data("x".utf8).write(to: file)
        #expect(code { _ = try Household.open(HouseholdHome(directory: file)) } == .homeIsFile)
        #expect(code { _ = try Household.open(HouseholdHome(directory: file.appendingPathComponent("home"))) } == .homeUnderFile)
        #expect(code { try h.admit(machine: "not hex", name: "x", memberID: nil) } == .invalidMachineID)
        #expect(code { _ = try h.removeMachine("ab") } == .machineIDTooShort)
        #expect(code { _ = try h.removeMachine("abcdef01") } == .notFound)
        #expect(
            HouseholdError.refuse(.notFound, ["kind": "machine", "list": "machines", "handle": "abcdef01"]).description
                == "no machine of this household has an id starting with abcdef01; see `pulse-peer devices`")
        #expect(code { _ = try h.removeMachine(String(h.identity.machineID.prefix(8))) } == .cannotRemoveSelf)
        var settings = NotificationSettings()
        settings.windowSeconds = 30
        #expect(code { try h.setNotificationSettings(settings) } == .windowOutOfRange)
    }

    @Test func anAmbiguousHandleListsItsCandidates() throws {
        let dir = try TemporaryDirectory()
        let h = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: [])
        let items = try h.addShoppingItems(["Milk", "Eggs"])
        // Ids start with their creation time: two made in one minute share their start.
        let start = String(items[0].id.prefix(4))
        #expect(items[1].id.hasPrefix(start))
        let error = try #require(throws: HouseholdError.self) { _ = try HouseholdAPI.call("shop.check", ["item": .string(start)], on: h) }
        let refusal = Refusal(error)
        #expect(refusal.code == .ambiguous && refusal.params["count"] == 2)
        guard case let .array(candidates)? = refusal.params["candidates"] else { Issue.record("no candidates"); return }
        let ids = candidates.compactMap { candidate -> String? in
            guard case let .object(fields) = candidate, case let .string(id)? = fields["id"] else { return nil }
            return id
        }
        #expect(Set(ids) == Set(items.map(\.id)))
    }
}
