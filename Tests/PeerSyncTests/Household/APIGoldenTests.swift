import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold

/// The local API's answers, recorded (issue 55): every method of docs/API.md, with its
/// refusals, called in one script on a fresh household, and each answer compared with the
/// answer recorded in `Tests/fixtures/api/answers.jsonl`. What changes from run to run (ids,
/// clocks, today's date, this host's name, the pin-reset code) is replaced by a token named
/// by its first appearance, so the rest is compared byte for byte: a change of how the API is
/// dispatched (its registry) changes none of it.
///
/// `PULSE_RECORD_API_ANSWERS=1 swift test --filter APIGoldenTests` records this tree's
/// answers (only when an answer is meant to change: say why in the commit).
@Suite struct APIGoldenTests {
    typealias Params = [String: JSONValue]

    /// One call of the script: `params` may name an earlier answer's field as `"@method.path"`
    /// (`"@shop.delete.id"`, `"@machine.list.0.id"`): the last answer of that method.
    struct Call {
        let method: String
        let params: Params
        /// A phone's call: the member it acts as (`.some(nil)`: a phone of nobody).
        var phone: String?? = nil
        /// Another caller than the agent in process (which may call every method).
        var caller: APICaller = .agent
    }

    static let pin: JSONValue = "1234"
    static let credential: JSONValue = .string(String(repeating: "ab", count: 32))
    static let otherCredential: JSONValue = .string(String(repeating: "cd", count: 32))

    static let script: [Call] = [
        Call(method: "household.get", params: [:]),
        Call(method: "household.rename", params: ["name": "The Smiths"]),
        Call(method: "household.rename", params: [:]),
        Call(method: "member.list", params: [:]),
        Call(method: "member.add", params: ["name": "Zoe", "color": "#112233"]),
        Call(method: "member.add", params: ["name": "Zoe"]),
        Call(method: "member.get", params: ["member": "zoe"]),
        Call(method: "member.edit", params: ["member": "Zoe", "initials": "ZZ"]),
        Call(method: "member.edit", params: ["member": "Zoe", "name": 5]),
        Call(method: "whoami.set", params: ["member": "Anna"]),
        Call(method: "notifications.get", params: [:]),
        Call(method: "notifications.set", params: ["tasks": false, "windowSeconds": 90]),
        Call(method: "notifications.set", params: ["kids": "no"]),
        Call(method: "notifications.set", params: ["windowSeconds": 5]),
        Call(method: "settings.get", params: [:]),
        Call(method: "settings.set", params: ["key": "appearance", "value": "dark"]),
        Call(method: "settings.set", params: ["key": "colour", "value": "red"]),
        Call(method: "language.get", params: [:]),
        Call(method: "language.set", params: ["scope": "machine", "language": "pl"]),
        Call(method: "language.set", params: ["scope": "machine"]),
        Call(method: "language.set", params: ["scope": "member", "language": "de"]),
        Call(method: "language.set", params: ["scope": "machine", "language": .null]),
        Call(method: "shop.add", params: ["names": ["Milk", "Bread", "Eggs"]]),
        Call(method: "shop.add", params: ["names": ["milk", "Butter", " "]]),
        Call(method: "shop.add", params: ["names": "Milk"]),
        Call(method: "shop.add", params: ["names": ["Milk", 3]]),
        Call(method: "shop.list", params: [:]),
        Call(method: "shop.check", params: ["item": "1"]),
        Call(method: "shop.check", params: ["item": "Milk"]),
        Call(method: "shop.check", params: ["item": "Milk", "once": true]),
        Call(method: "shop.list", params: ["pool": "restock"]),
        Call(method: "shop.list", params: ["pool": "deleted"]),
        Call(method: "shop.restock", params: ["item": "milk"]),
        Call(method: "shop.restock", params: ["item": "milk", "once": true]),
        Call(method: "shop.rename", params: ["item": "Bread", "name": "Rye bread"]),
        Call(method: "shop.delete", params: ["item": "Eggs"]),
        Call(method: "shop.undelete", params: ["item": "@shop.delete.id"]),
        Call(method: "shop.undelete", params: ["item": "@shop.delete.id"]),
        Call(method: "shop.undelete", params: ["item": "@shop.delete.id", "pool": "nowhere"]),
        Call(method: "shop.add", params: ["names": ["Tea"], "ids": ["0190a5f0-0000-7000-8000-000000000001"]]),
        Call(method: "shop.add", params: ["names": ["Tea"], "ids": ["0190a5f0-0000-7000-8000-000000000001"]]),
        Call(method: "shop.add", params: ["names": ["Tea", "Jam"], "ids": ["0190a5f0-0000-7000-8000-000000000002"]]),
        Call(method: "shop.clear", params: [:]),
        Call(method: "shop.undo", params: [:]),
        Call(method: "shop.undo", params: [:]),
        Call(method: "task.add", params: ["title": "Laundry", "assignee": "me", "due": "2030-01-15"]),
        Call(method: "task.add", params: ["title": "Dishes", "due": "today"]),
        Call(method: "task.add", params: ["title": "Vacuum", "assignee": "Tom"]),
        Call(method: "task.add", params: ["title": "Windows"]),
        Call(method: "task.add", params: ["title": "Windows", "force": true]),
        Call(method: "task.add", params: ["title": "Attic", "due": "someday"]),
        Call(method: "task.list", params: [:]),
        Call(method: "task.list", params: ["mine": true]),
        Call(method: "task.edit", params: ["task": "Laundry", "assignee": .null, "due": "2030-02-01"]),
        Call(method: "task.edit", params: ["task": "Laundry", "title": .null]),
        Call(method: "task.edit", params: ["task": "Laundry", "due": 7]),
        Call(method: "task.done", params: ["task": "Laundry"]),
        Call(method: "task.reopen", params: ["task": "Laundry"]),
        Call(method: "task.reopen", params: ["task": "Laundry", "force": true]),
        Call(method: "task.delete", params: ["task": "Windows"]),
        Call(method: "task.undelete", params: ["task": "@task.delete.id"]),
        Call(method: "task.undelete", params: ["task": "@task.delete.id"]),
        Call(method: "backlog.category.add", params: ["title": "Garden"]),
        Call(method: "backlog.category.add", params: ["title": "House"]),
        Call(method: "backlog.category.add", params: ["title": "house"]),
        Call(method: "backlog.category.rename", params: ["category": "Garden", "title": "Yard"]),
        Call(method: "backlog.category.move", params: ["category": "House", "position": 1]),
        Call(method: "backlog.category.move", params: ["category": "House", "position": 0]),
        Call(method: "backlog.add", params: ["title": "Paint fence", "category": "Yard"]),
        Call(method: "backlog.add", params: ["title": "Fix tap", "category": "House"]),
        Call(method: "backlog.add", params: ["title": "Fix roof", "category": "House"]),
        Call(method: "backlog.rename", params: ["item": "Fix tap", "title": "Fix the tap"]),
        Call(method: "backlog.move", params: ["item": "Paint fence", "category": "House", "position": 1]),
        Call(method: "backlog.move", params: ["item": "Fix roof", "position": .null]),
        Call(method: "backlog.move", params: ["item": "Fix roof", "position": "a"]),
        Call(method: "backlog.remove", params: ["item": "Fix the tap"]),
        Call(method: "backlog.restore", params: ["item": "@backlog.remove.id"]),
        Call(method: "backlog.promote", params: ["item": "Paint fence", "assignee": "Tom", "force": true]),
        Call(method: "backlog.list", params: [:]),
        Call(method: "backlog.category.remove", params: ["category": "Yard"]),
        Call(method: "backlog.category.remove", params: ["category": "House"]),
        Call(method: "backlog.category.remove", params: ["category": "House", "force": true]),
        Call(method: "recurring.add", params: ["title": "Bins", "schedule": "weekly:mon", "assignee": "Tom"]),
        Call(method: "recurring.add", params: ["title": "Plants", "schedule": "fortnightly"]),
        Call(method: "recurring.list", params: [:]),
        Call(method: "recurring.add", params: ["title": "Dishes rota", "schedule": "daily", "rotation": ["Anna", "Tom"]]),
        Call(method: "recurring.add", params: ["title": "Rota", "schedule": "daily", "assignee": "Tom", "rotation": ["Anna"]]),
        Call(method: "recurring.rotate", params: ["template": "Dishes rota", "members": []]),
        Call(method: "recurring.rotate", params: ["template": "Dishes rota", "members": ["Tom", "Anna"]]),
        Call(method: "recurring.swap", params: ["template": "Dishes rota", "first": "today", "second": "tomorrow"]),
        Call(method: "recurring.swap", params: ["template": "Dishes rota", "first": "today", "second": "2030-01-15"]),
        Call(method: "away.add", params: ["member": "Tom", "first": "today", "last": "tomorrow"]),
        Call(method: "away.add", params: ["member": "Tom", "first": "2030-02-01", "last": "2030-01-15"]),
        Call(method: "away.list", params: [:]),
        Call(method: "recurring.list", params: [:]),
        Call(method: "away.end", params: ["member": "Tom"]),
        Call(method: "away.end", params: ["member": "Tom"]),
        Call(method: "recurring.rotate", params: ["template": "Dishes rota", "off": true]),
        Call(method: "recurring.remove", params: ["template": "Bins"]),
        Call(method: "conflicts.list", params: [:]),
        Call(method: "conflicts.list", params: ["limit": 5, "language": "de"]),
        Call(method: "conflicts.list", params: ["limit": "many"]),
        Call(method: "machine.list", params: [:]),
        Call(method: "machine.rename", params: ["machine": "@machine.list.0.id", "name": "Kitchen"]),
        Call(method: "machine.rename", params: ["machine": "zz", "name": "Kitchen"]),
        Call(method: "machine.remove", params: ["machine": "@machine.list.0.id"]),
        Call(method: "phone.list", params: [:]),
        Call(method: "phone.add", params: ["name": "Anna's phone", "member": "Anna", "credential": credential]),
        Call(method: "phone.add", params: ["name": "Bad", "credential": "short"]),
        Call(method: "phone.get", params: ["credential": credential]),
        Call(method: "phone.get", params: ["roaming": "nope"]),
        Call(method: "phone.get", params: ["credential": otherCredential]),
        Call(method: "phone.roaming", params: ["phone": "@phone.add.id"]),
        Call(method: "phone.roaming", params: ["phone": "nobody"]),
        Call(method: "phone.renew", params: ["phone": "@phone.add.id", "credential": otherCredential]),
        Call(method: "phone.service.set", params: ["urls": ["https://192.168.1.5:47655/"]]),
        Call(method: "phone.service.set", params: ["urls": [1]]),
        Call(method: "phone.service.set", params: ["urls": ["http://x/"]]),
        Call(method: "phone.service.list", params: [:]),
        Call(method: "phone.list", params: [:]),
        Call(method: "task.add", params: ["title": "Call grandma", "assignee": "me", "force": true], phone: "@member.get.id"),
        Call(method: "task.list", params: ["mine": true], phone: "@member.get.id"),
        Call(method: "shop.add", params: ["names": ["Apples"]], phone: .some(nil)),
        Call(method: "task.list", params: ["mine": true], phone: .some(nil)),
        Call(method: "phone.remove", params: ["phone": "@phone.add.id"]),
        Call(method: "phone.remove", params: ["phone": "@phone.add.id"]),
        Call(method: "ca.get", params: [:]),
        Call(method: "ca.publish", params: ["id": credential, "certificate": "bm90"]),
        Call(method: "ca.request", params: ["request": "bm90"]),
        Call(method: "ca.grant", params: ["machine": "@machine.list.0.id", "request": "x", "certificate": "y"]),
        Call(method: "kids.pin.get", params: [:]),
        Call(method: "kids.add", params: ["name": "Mia", "pin": pin]),
        Call(method: "kids.pin.set", params: ["pin": "12"]),
        Call(method: "kids.pin.set", params: ["pin": pin]),
        Call(method: "kids.pin.set", params: ["pin": pin]),
        Call(method: "kids.pin.get", params: [:]),
        Call(method: "kids.pin.check", params: ["pin": pin]),
        Call(method: "kids.add", params: ["name": "Mia", "pin": pin]),
        Call(method: "kids.add", params: ["name": "Leo", "pin": pin]),
        Call(method: "kids.rename", params: ["kid": "Leo", "name": "Leon", "pin": pin]),
        Call(method: "kids.catalogue.list", params: [:]),
        Call(method: "kids.select", params: ["items": ["@kids.catalogue.list.0.id", "@kids.catalogue.list.1.id"], "pin": pin]),
        Call(method: "kids.select", params: ["items": "all", "pin": pin]),
        Call(method: "kids.own", params: ["kind": "chore", "title": "Feed the cat", "peanuts": 3, "category": "fun", "pin": pin]),
        Call(method: "kids.own", params: ["kind": "reward", "title": "Ice cream", "peanuts": 2, "category": "fun", "pin": pin]),
        Call(method: "kids.own", params: ["kind": "chore", "title": "Too much", "peanuts": 99, "category": "fun", "pin": pin]),
        Call(method: "kids.done", params: ["kid": "Mia", "item": "Feed the cat"]),
        Call(method: "kids.done", params: ["kid": "Mia", "item": "Feed the cat"]),
        Call(method: "kids.catalogue.list", params: ["kid": "Mia"]),
        Call(method: "kids.redeem", params: ["kid": "Mia", "reward": "Ice cream"]),
        Call(method: "kids.redeem", params: ["kid": "Mia", "reward": "Ice cream"]),
        Call(method: "kids.basket.list", params: ["kid": "Mia"]),
        Call(method: "kids.basket.remove", params: ["kid": "Mia", "entry": "@kids.redeem.id"]),
        Call(method: "kids.adjust", params: ["kid": "Mia", "peanuts": 5, "reason": "Bonus", "pin": pin]),
        Call(method: "kids.adjust", params: ["kid": "Mia", "peanuts": -50, "reason": "Too much", "pin": pin]),
        Call(method: "kids.bonus", params: ["kid": "Mia", "entry": "Feed the cat", "peanuts": 2, "pin": pin]),
        Call(method: "kids.bonus", params: ["kid": "Mia", "entry": "Feed the cat", "peanuts": 2, "pin": pin]),
        Call(method: "kids.bonus", params: ["kid": "Mia", "entry": "Feed the cat", "peanuts": 0, "pin": pin]),
        Call(method: "kids.bonus", params: ["kid": "Mia", "entry": "Feed the cat", "peanuts": 2]),
        Call(method: "kids.goal.set", params: ["kid": "Mia", "reward": "Ice cream"]),
        Call(method: "kids.goal.set", params: ["kid": "Mia", "reward": "Ice cream"]),
        Call(method: "kids.goal.redeem", params: ["kid": "Mia", "pin": pin]),
        Call(method: "kids.goal.cancel", params: ["kid": "Mia"]),
        Call(method: "kids.goal.cancel", params: ["kid": "Mia"]),
        Call(method: "kids.own", params: ["kind": "chore", "title": "Tidy up", "peanuts": 2, "category": "respect", "pin": pin]),
        Call(method: "kids.own", params: ["kind": "chore", "title": "Water the plants", "peanuts": 1, "category": "fun", "pin": pin]),
        Call(method: "kids.report", params: ["kid": "Mia", "item": "Tidy up"]),
        Call(method: "kids.approval.set", params: ["value": "on"]),
        Call(method: "kids.approval.set", params: ["value": "sometimes", "pin": pin]),
        Call(method: "kids.approval.set", params: ["value": "on", "pin": pin]),
        Call(method: "kids.done", params: ["kid": "Mia", "item": "Tidy up"]),
        Call(method: "kids.report", params: ["kid": "Mia", "item": "Feed the cat"]),
        Call(method: "kids.report", params: ["kid": "Mia", "item": "Tidy up"]),
        Call(method: "kids.report", params: ["kid": "Mia", "item": "Tidy up"]),
        Call(method: "kids.report", params: ["kid": "Mia", "item": "rule_001"]),
        Call(method: "kids.catalogue.list", params: ["kid": "Mia"]),
        Call(method: "kids.approve", params: ["report": "@kids.report.id"]),
        Call(method: "kids.approve", params: ["report": "@kids.report.id", "pin": pin]),
        Call(method: "kids.approve", params: ["report": "@kids.report.id", "pin": pin]),
        Call(method: "kids.report", params: ["kid": "Mia", "item": "Water the plants"]),
        Call(method: "kids.decline", params: ["report": "@kids.report.id", "word": "Not yet", "pin": pin]),
        Call(method: "kids.reports.list", params: ["kid": "Mia"]),
        Call(method: "kids.rotate", params: ["item": "Tidy up", "kids": ["Mia", "Leon"]]),
        Call(method: "kids.rotate", params: ["item": "Tidy up", "kids": ["Mia", "Nobody"], "pin": pin]),
        Call(method: "kids.rotate", params: ["item": "Tidy up", "kids": ["Leon", "Mia"], "pin": pin]),
        Call(method: "kids.done", params: ["kid": "Mia", "item": "Feed the cat"]),
        Call(method: "kids.report", params: ["kid": "Mia", "item": "Tidy up"]),
        Call(method: "kids.rotate", params: ["item": "Tidy up", "off": true, "pin": pin]),
        Call(method: "settings.get", params: [:]),
        Call(method: "kids.history.list", params: ["kid": "Mia"]),
        Call(method: "kids.list", params: [:]),
        Call(method: "kids.deselect", params: ["items": ["@kids.catalogue.list.1.id"], "pin": pin]),
        Call(method: "kids.remove", params: ["kid": "Leon", "pin": pin]),
        Call(method: "kids.pin.change", params: ["pin": pin, "new": "4321"]),
        Call(method: "kids.pin.acknowledge", params: ["pin": "4321"]),
        Call(method: "kids.pin.reset", params: [:]),
        Call(method: "kids.pin.confirmReset", params: ["code": "000000"]),
        Call(method: "apps.passwords.create", params: ["label": "Anna's iPhone Reminders"]),
        Call(method: "apps.passwords.create", params: ["label": " anna's iphone reminders "]),
        Call(method: "apps.passwords.create", params: ["label": "Siri", "member": "Nobody"]),
        Call(method: "apps.passwords.create", params: ["label": "Home Assistant", "member": "Tom"]),
        Call(method: "apps.passwords.list", params: [:]),
        Call(method: "apps.passwords.revoke", params: ["password": "@apps.passwords.create.record.id"]),
        Call(method: "apps.passwords.revoke", params: ["password": "@apps.passwords.create.record.id"]),
        Call(method: "apps.passwords.revoke", params: ["password": "nope"]),
        Call(method: "member.remove", params: ["member": "Zoe"]),
        Call(method: "member.remove", params: ["member": "Zoe"]),
        Call(method: "no.such.method", params: [:]),
        Call(method: "kids.pin.check", params: ["pin": "0000"]),
    ]

    /// Calls refused by audience, after the bare ones: the agent's plumbing is on no public
    /// list, a computer's administration on no phone's (issue 55).
    static let refusedByAudience: [Call] = [
        Call(method: "phone.add", params: ["name": "x", "credential": credential], caller: .control),
        Call(method: "ca.grant", params: [:], caller: .page),
        Call(method: "machine.list", params: [:], caller: .phone(member: nil)),
        Call(method: "apps.passwords.create", params: ["label": "x"], caller: .phone(member: nil)),
        Call(method: "phone.roaming", params: ["phone": "x"], caller: .phone(member: nil)),
    ]

    /// Every method of the API, each called with no parameters (after the script, in order of
    /// name): the refusals of missing parameters, and what a method without any does.
    static let bare = [
        "apps.passwords.create", "apps.passwords.list", "apps.passwords.revoke", "away.add", "away.end", "away.list", "backlog.add", "backlog.category.add",
        "backlog.category.move", "backlog.category.remove",
        "backlog.category.rename",
        "backlog.list", "backlog.move", "backlog.promote", "backlog.remove", "backlog.rename", "backlog.restore", "ca.get", "ca.grant",
        "ca.publish", "ca.request", "conflicts.list", "household.get", "household.rename", "kids.add", "kids.adjust", "kids.approval.set", "kids.approve",
        "kids.basket.list",
        "kids.basket.remove", "kids.bonus", "kids.catalogue.list", "kids.decline", "kids.deselect", "kids.done", "kids.goal.cancel", "kids.goal.redeem",
        "kids.goal.set",
        "kids.history.list", "kids.list", "kids.own",
        "kids.pin.acknowledge", "kids.pin.change", "kids.pin.check", "kids.pin.confirmReset", "kids.pin.get", "kids.pin.reset",
        "kids.pin.set", "kids.redeem", "kids.remove", "kids.rename", "kids.report", "kids.reports.list", "kids.rotate", "kids.select", "language.get",
        "language.set",
        "machine.list",
        "machine.remove", "machine.rename", "member.add", "member.edit", "member.get", "member.list", "member.remove",
        "notifications.get", "notifications.set", "phone.add", "phone.get", "phone.list", "phone.remove", "phone.renew", "phone.roaming",
        "phone.service.list", "phone.service.set", "recurring.add", "recurring.list", "recurring.remove", "recurring.rotate",
        "recurring.swap", "settings.get",
        "settings.set", "shop.add", "shop.check", "shop.clear", "shop.delete", "shop.edit", "shop.list", "shop.lists", "shop.lists.add",
        "shop.lists.delete", "shop.lists.rename", "shop.move", "shop.rename", "shop.restock", "shop.transfer", "shop.trip.end",
        "shop.trip.start", "shop.trips", "shop.undelete", "shop.undo", "task.add", "task.delete", "task.done", "task.edit", "task.list",
        "task.reopen", "task.undelete", "whoami.set",
    ]

    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures/api/answers.jsonl")

    /// The script's answers, one JSON line per call, with its tokens.
    static func answers() throws -> [String] {
        let dir = try TemporaryDirectory()
        let h = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: [])
        let b = try Household.join(HouseholdHome(directory: dir.url.appendingPathComponent("b")), invitation: h.invitation(forMember: "Tom"))
        try h.store.sync(to: b.store)
        try b.store.sync(to: h.store)
        var last: [String: JSONValue] = [:]
        var lines: [String] = []
        // This host's name as a whole JSON string only (a short name, say "vm", is inside other words).
        var tokens = Tokens(replacing: [dir.url.path: "<dir>", "\"\(Household.machineName(nil))\"": "\"<host>\""])
        let calls = script + bare.map { Call(method: $0, params: [:]) } + refusedByAudience
        for call in calls {
            let params = call.params.mapValues { Self.resolve($0, in: last) }
            let phone: String?? = call.phone.map { member in member.flatMap { Self.resolve(.string($0), in: last).stringValue } }
            var line: [String: JSONValue] = ["method": .string(call.method), "params": .object(params)]
            if let phone { line["phone"] = phone.map(JSONValue.string) ?? .null }
            do {
                let result = try Self.call(call.method, params, on: h, as: phone.map { .phone(member: $0) } ?? call.caller)
                last[call.method] = result
                line["result"] = call.method == "kids.pin.reset" ? "<code>" : result
                // A new app password is shown once, and is new each run.
                if call.method == "apps.passwords.create", case var .object(fields) = result {
                    fields["password"] = "<password>"
                    line["result"] = .object(fields)
                }
            } catch {
                var body = Refusal(error).body.json
                // An unknown method's answer lists the caller's methods: the registry's list for
                // its audience (checked here), recorded as a token so that a method added later
                // changes no recorded answer.
                let audience = phone == nil ? call.caller.audience : .phone
                let names = HouseholdAPI.registry.names(for: audience)
                if case var .object(fields) = body, fields["code"] == "unknown_method", case var .object(params)? = fields["params"] {
                    #expect(params["methods"] == JSONValue(names), "\(call.method): the methods listed are the registry's")
                    params["methods"] = .string("<the methods of \(audience)>")
                    fields["params"] = .object(params)
                    if case let .string(message)? = fields["message"] {
                        fields["message"] = .string(message.replacingOccurrences(of: names.joined(separator: ", "), with: "<the methods of \(audience)>"))
                    }
                    body = .object(fields)
                }
                line["error"] = body
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            lines.append(tokens.replace(String(decoding: try encoder.encode(JSONValue.object(line)), as: UTF8.self)))
        }
        return lines
    }

    /// `value` with each `"@method.path"` replaced by that field of `method`'s last answer.
    static func resolve(_ value: JSONValue, in last: [String: JSONValue]) -> JSONValue {
        switch value {
        case let .string(text) where text.hasPrefix("@"):
            var parts = text.dropFirst().split(separator: ".").map(String.init)
            var method = parts.removeFirst()
            while last[method] == nil, !parts.isEmpty { method += "." + parts.removeFirst() }
            var found = last[method] ?? .null
            for part in parts {
                if case let .array(items) = found, let index = Int(part), items.indices.contains(index) {
                    found = items[index]
                } else if case let .object(fields) = found {
                    found = fields[part] ?? .null
                } else {
                    found = .null
                }
            }
            return found
        case let .array(items): return .array(items.map { resolve($0, in: last) })
        case let .object(fields): return .object(fields.mapValues { resolve($0, in: last) })
        default: return value
        }
    }

    /// One call as the agent makes it.
    static func call(_ method: String, _ params: Params, on h: Household, as caller: APICaller) throws -> JSONValue {
        try HouseholdAPI.call(method, params, on: h, as: caller)
    }

    /// What varies between runs, each replaced by a token numbered by its first appearance.
    struct Tokens {
        var replacing: [String: String]
        var seen: [String: String] = [:]
        var counts: [String: Int] = [:]
        static let patterns: [(String, String)] = [
            ("id", "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
            ("date", "[0-9]{4}-[0-9]{2}-[0-9]{2}"),
            ("n", "\\b[0-9]{11,}\\b"),
            ("hex", "\\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]+\\b"),
        ]
        init(replacing: [String: String]) { self.replacing = replacing }

        mutating func replace(_ line: String) -> String {
            var text = line
            for (value, token) in replacing.sorted(by: { $0.key.count > $1.key.count }) where !value.isEmpty {
                text = text.replacingOccurrences(of: value, with: token)
            }
            for (kind, source) in Self.patterns {
                let pattern = try! Regex(source)
                var out = ""
                var rest = text[...]
                while let match = rest.firstMatch(of: pattern) {
                    let value = String(rest[match.range])
                    out += rest[..<match.range.lowerBound]
                    // Fixed values of the script stay (its own ids, its credentials, a date it names).
                    if kind == "hex", value.count < 8 || Self.kept.contains(value) {
                        out += value
                    } else if kind != "hex", Self.kept.contains(value) {
                        out += value
                    } else {
                        out += token(kind, value)
                    }
                    rest = rest[match.range.upperBound...]
                }
                text = out + rest
            }
            return text
        }

        static let kept: Set<String> = [
            "0190a5f0-0000-7000-8000-000000000001", "0190a5f0-0000-7000-8000-000000000002", "2030-01-15", "2030-02-01",
            String(repeating: "ab", count: 32), String(repeating: "cd", count: 32), "112233",
        ]

        mutating func token(_ kind: String, _ value: String) -> String {
            if let known = seen[value] { return known }
            counts[kind, default: 0] += 1
            let name = "<\(kind)\(counts[kind]!)>"
            seen[value] = name
            return name
        }
    }

    @Test func everyMethodIsCalledBare() {
        let all = HouseholdAPI.registry.methods.map(\.name).sorted()
        #expect(Self.bare == all, "the bare calls are every method of the API, in order of name")
    }

    @Test func everyMethodAnswersAsRecorded() throws {
        let lines = try Self.answers()
        if ProcessInfo.processInfo.environment["PULSE_RECORD_API_ANSWERS"] == "1" {
            try FileManager.default.createDirectory(at: Self.fixture.deletingLastPathComponent(), withIntermediateDirectories: true)
            try (lines.joined(separator: "\n") + "\n").write(to: Self.fixture, atomically: true, encoding: .utf8)
            return
        }
        let recorded = try String(contentsOf: Self.fixture, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: true)
        #expect(recorded.count == lines.count, "the script's length against the recording")
        for (index, (now, then)) in zip(lines, recorded).enumerated() where now != then {
            Issue.record("call \(index + 1) answers otherwise than recorded:\n  now:      \(now)\n  recorded: \(then)")
        }
    }
}

extension JSONValue {
    fileprivate var stringValue: String? { if case let .string(text) = self { text } else { nil } }
}
