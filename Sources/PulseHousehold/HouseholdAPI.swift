import FoundationEssentials
import PulseModel

/// A JSON value, for the local API's parameters and results.
///
/// Integers stay exact (docs/API.md, "Numbers"): a whole number read from JSON is an
/// ``integer``, and one is written as a JSON number when a double holds it exactly
/// (|n| ≤ 2⁵³ − 1, what JavaScript's `Number` reads without loss) and as a decimal string
/// beyond that (the ordering keys `listed` and `created`, ≈ 1.2 × 10¹⁷).
public enum JSONValue: Sendable, Equatable, Codable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let v = try? container.decode(Bool.self) {
            self = .bool(v)
        } else if let v = try? container.decode(Int64.self) {
            self = .integer(v)
        } else if let v = try? container.decode(Double.self) {
            self = .number(v)
        } else if let v = try? container.decode(String.self) {
            self = .string(v)
        } else if let v = try? container.decode([JSONValue].self) {
            self = .array(v)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .bool(v): try container.encode(v)
        case let .integer(v):
            if Self.exactInJavaScript.contains(v) { try container.encode(v) } else { try container.encode(String(v)) }
        case let .number(v): try container.encode(v)
        case let .string(v): try container.encode(v)
        case let .array(v): try container.encode(v)
        case let .object(v): try container.encode(v)
        }
    }

    /// The integers a double (JavaScript's only number) holds exactly: ±(2⁵³ − 1).
    public static let exactInJavaScript: ClosedRange<Int64> = -(1 << 53 - 1)...(1 << 53 - 1)

    /// A whole number, from an integer or an integral double.
    public var integerValue: Int64? {
        switch self {
        case let .integer(v): v
        case let .number(v) where v == v.rounded() && abs(v) < 9.0e15: Int64(v)
        default: nil
        }
    }

    /// Any Encodable value as JSON.
    package static func from<T: Encodable>(_ value: T) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
    }
}

/// The household's operations for app clients (docs/API.md): each method calls the same
/// `Household` rule the CLI calls, with the same checks and error messages.
public enum HouseholdAPI {
    public static let methods =
        [
            "household.get", "household.rename", "member.list", "member.get", "member.add", "member.edit", "member.remove", "whoami.set",
            "notifications.get", "notifications.set", "settings.get", "settings.set", "language.get", "language.set", "shop.list", "shop.add", "shop.check",
            "shop.restock", "shop.rename",
            "shop.delete", "shop.undelete", "shop.clear", "shop.undo", "task.list", "task.add", "task.edit", "task.done", "task.reopen", "task.delete",
            "task.undelete",
            "backlog.list", "backlog.category.add", "backlog.category.rename", "backlog.category.move",
            "backlog.category.remove", "backlog.add", "backlog.rename", "backlog.move", "backlog.remove", "backlog.restore", "backlog.promote",
            "conflicts.list", "machine.list", "machine.rename", "machine.remove", "phone.list", "phone.add", "phone.get", "phone.renew", "phone.remove",
            "ca.get", "ca.publish", "ca.request", "ca.grant", "phone.roaming", "phone.service.set", "phone.service.list",
            "recurring.list", "recurring.add", "recurring.remove",
            "kids.list", "kids.catalogue.list", "kids.history.list", "kids.basket.list", "kids.done", "kids.redeem",
            "kids.basket.remove", "kids.add", "kids.rename", "kids.remove", "kids.select", "kids.deselect", "kids.own",
            "kids.adjust", "kids.pin.get", "kids.pin.check", "kids.pin.set", "kids.pin.change", "kids.pin.reset", "kids.pin.confirmReset",
            "kids.pin.acknowledge",
        ] + nextReleaseMethods

    #if DEBUG
    /// The "next" test release's methods (``TestRelease``: TwoReleasesTests): a note, a shopping
    /// item's quantity.
    static let nextReleaseMethods = TestRelease.next ? ["next.note.add", "next.shop.quantity"] : []
    #else
    static let nextReleaseMethods: [String] = []
    #endif

    public static func call(_ method: String, _ params: [String: JSONValue], on household: Household) throws -> JSONValue {
        func string(_ key: String) throws -> String {
            guard case let .string(value)? = params[key] else {
                throw HouseholdError.refuse(.missingParameter, ["method": .string(method), "key": .string(key), "type": "string"])
            }
            return value
        }
        func optional(_ key: String) throws -> String? {
            switch params[key] {
            case nil, .null?: return nil
            case let .string(value)?: return value
            default: throw HouseholdError.refuse(.wrongType, ["key": .string(key), "type": "string"])
            }
        }
        func flag(_ key: String) -> Bool { if case .bool(true)? = params[key] { true } else { false } }
        func integer(_ key: String) throws -> Int {
            guard let value = params[key]?.integerValue, abs(value) <= 1_000_000 else {
                throw HouseholdError.refuse(.missingParameter, ["method": .string(method), "key": .string(key), "type": "integer"])
            }
            return Int(value)
        }
        func strings(_ key: String) throws -> [String] {
            guard case let .array(values)? = params[key] else {
                throw HouseholdError.refuse(.missingParameter, ["method": .string(method), "key": .string(key), "type": "strings"])
            }
            return try values.map { value -> String in
                guard case let .string(text) = value else { throw HouseholdError.refuse(.wrongType, ["key": .string(key), "type": "strings"]) }
                return text
            }
        }
        let h = household
        switch method {
        case "household.get":
            return try .from(
                HouseholdSummary(
                    id: h.householdID, name: h.householdName(), members: h.members(), settings: h.settings(),
                    focusLimit: Household.focusLimit))
        case "household.rename": return .string(try h.renameHousehold(string("name")))
        case "member.list": return try .from(h.members())
        case "member.add": return try .from(h.addMember(string("name"), initials: optional("initials"), color: optional("color")))
        case "member.edit":
            return try .from(h.editMember(string("member"), name: optional("name"), initials: optional("initials"), color: optional("color")))
        case "member.remove": return try .from(h.removeMember(string("member")))
        case "whoami.set": return try .from(h.setThisMachine(member: string("member")))
        case "notifications.get": return try .from(h.notificationSettings())
        case "notifications.set":
            // A key that is absent keeps its value.
            var settings = try h.notificationSettings()
            func bool(_ key: String) throws -> Bool? {
                switch params[key] {
                case nil: return nil
                case let .bool(value)?: return value
                default: throw HouseholdError.refuse(.wrongType, ["key": .string(key), "type": "boolean"])
                }
            }
            if let value = try bool("shopping") { settings.shopping = value }
            if let value = try bool("tasks") { settings.tasks = value }
            if let value = try bool("assigned") { settings.assigned = value }
            if let value = try bool("kids") { settings.kids = value }
            if params["windowSeconds"] != nil { settings.windowSeconds = try integer("windowSeconds") }
            try h.setNotificationSettings(settings)
            return try .from(h.notificationSettings())
        case "settings.get": return try .from(h.settings())
        case "settings.set": return try .from(h.setSetting(string("key"), string("value")))
        case "language.get": return try .from(h.languageChoice())
        case "language.set":
            if params["language"] == nil {
                throw HouseholdError.refuse(.missingParameter, ["method": .string(method), "key": "language", "type": "string_or_null"])
            }
            return try .from(h.setLanguage(scope: string("scope"), language: optional("language")))
        case "shop.list":
            let pool = try optional("pool") ?? "active"
            guard let state = ShoppingItem.State(rawValue: pool), state != .deleted else {
                throw HouseholdError.refuse(.invalidPool, ["value": .string(pool)])
            }
            return try .from(h.shoppingItems(state))
        case "shop.add":
            // Each item says whether it came back from the restock pool (the page tells so).
            // With `ids` (a phone's queued addition): those ids, once (see addShoppingItems(_:ids:)).
            let addition =
                params["ids"] == nil
                ? try h.addOrRestockShoppingItems(strings("names")) : try h.addShoppingItems(strings("names"), ids: strings("ids"))
            // `already`: the name was on the list (any case): that item, nothing added.
            let restocked = Set(addition.restocked), already = Set(addition.already)
            return .array(
                try addition.items.map { item in
                    guard case var .object(fields) = try JSONValue.from(item) else { return try .from(item) }
                    fields["restocked"] = .bool(restocked.contains(item.id))
                    fields["already"] = .bool(already.contains(item.id))
                    return .object(fields)
                })
        case "shop.check": return try .from(h.checkShoppingItem(string("item"), once: flag("once")))
        case "shop.restock": return try .from(h.restockShoppingItem(string("item"), once: flag("once")))
        case "shop.rename": return try .from(h.renameShoppingItem(string("item"), to: string("name")))
        case "shop.delete": return try .from(h.deleteShoppingItem(string("item")))
        case "shop.undelete":
            let pool = try optional("pool") ?? "active"
            guard let state = ShoppingItem.State(rawValue: pool), state != .deleted else {
                throw HouseholdError.refuse(.invalidPool, ["value": .string(pool)])
            }
            return try .from(h.undeleteShoppingItem(string("item"), to: state))
        case "shop.clear": return try .from(h.clearShoppingList())
        case "shop.undo": return try .from(h.undoClearShoppingList())
        case "task.list":
            try h.generateRecurringTasks()
            return try .from(h.tasks(mine: flag("mine")))
        case "task.edit":
            // A key that is absent leaves the field; null clears assignee or due.
            func edit(_ key: String) throws -> String?? {
                switch params[key] {
                case nil: return nil
                case .null?: return .some(nil)
                case let .string(value)?: return .some(value)
                default: throw HouseholdError.refuse(.wrongType, ["key": .string(key), "type": "string_or_null"])
                }
            }
            guard params["title"] != .null else { throw HouseholdError.refuse(.titleNotNull) }
            return try .from(
                h.editTask(
                    string("task"),
                    Household.TaskEdit(
                        title: optional("title"), assignee: edit("assignee"),
                        due: edit("due"))))
        case "task.add":
            return try .from(h.addTask(string("title"), assignee: optional("assignee"), due: optional("due"), force: flag("force")))
        case "task.done": return try .from(h.completeTask(string("task")))
        case "task.reopen": return try .from(h.reopenTask(string("task"), force: flag("force")))
        case "task.delete": return try .from(h.deleteTask(string("task")))
        case "task.undelete": return try .from(h.undeleteTask(string("task")))
        case "backlog.list": return try .from(h.backlog())
        case "backlog.category.add": return try .from(h.addCategory(string("title")))
        case "backlog.category.rename": return try .from(h.renameCategory(string("category"), to: string("title")))
        case "backlog.category.move":
            guard let position = params["position"]?.integerValue, (1...1_000_000).contains(position) else {
                throw HouseholdError.refuse(.missingParameter, ["method": .string(method), "key": "position", "type": "position"])
            }
            return try .from(h.moveCategory(string("category"), to: Int(position)))
        case "backlog.category.remove": return try .from(h.removeCategory(string("category"), force: flag("force")))
        case "backlog.add": return try .from(h.addBacklogItem(string("title"), to: string("category")))
        case "backlog.rename": return try .from(h.renameBacklogItem(string("item"), to: string("title")))
        case "backlog.move":
            var position: Int?
            if let value = params["position"], value != .null {
                guard let number = value.integerValue, (1...1_000_000).contains(number) else {
                    throw HouseholdError.refuse(.wrongType, ["key": "position", "type": "position"])
                }
                position = Int(number)
            }
            return try .from(h.moveBacklogItem(string("item"), to: optional("category"), position: position))
        case "backlog.remove": return try .from(h.removeBacklogItem(string("item")))
        case "backlog.restore": return try .from(h.restoreBacklogItem(string("item")))
        case "conflicts.list":
            // `language`: the words of `summary` and `shown` (the log keeps data; English by default).
            let words = try optional("language").flatMap { try? MessageCatalogue.load($0, home: h.home) } ?? .english
            return try .from(h.conflicts(limit: params["limit"] == nil ? 100 : max(1, min(integer("limit"), 10_000)), words: words))
        case "machine.list": return try .from(h.machines())
        case "machine.rename": return try .from(h.renameMachine(string("machine"), to: string("name")))
        case "machine.remove": return try .from(h.removeMachine(string("machine")))
        case "member.get": return try .from(h.resolveMember(string("member")))
        case "phone.list": return try .from(h.phones())
        case "phone.add": return try .from(h.addPhone(name: string("name"), member: optional("member"), credential: string("credential")))
        case "phone.get":
            if case let .string(roaming)? = params["roaming"] { return try h.phone(roaming: roaming).map { try .from($0) } ?? .null }
            return try h.phone(credential: string("credential")).map { try .from($0) } ?? .null
        case "phone.roaming": return try h.phoneRoaming(string("phone")).map(JSONValue.string) ?? .null
        case "phone.service.set":
            guard case let .array(list)? = params["urls"] else {
                throw HouseholdError.refuse(.missingParameter, ["method": .string(method), "key": "urls", "type": "array"])
            }
            let urls = try list.map { value -> String in
                guard case let .string(url) = value else { throw HouseholdError.refuse(.wrongType, ["key": "urls", "type": "string"]) }
                return url
            }
            return try .from(h.setPhoneService(urls: urls))
        case "phone.service.list": return try .from(h.phoneServices())
        case "phone.remove": return try .from(h.removePhone(string("phone")))
        case "phone.renew": return try .from(h.renewPhone(string("phone"), credential: string("credential")))
        case "ca.get": return .object(["roots": try .from(h.caRoots()), "grants": try .from(h.caGrants())])
        case "ca.publish": return try .from(h.publishCARoot(id: string("id"), certificate: string("certificate")))
        case "ca.request": return try .from(h.requestCAGrant(request: string("request")))
        case "ca.grant": return try .from(h.grantCA(machine: string("machine"), request: string("request"), certificate: string("certificate")))
        case "backlog.promote":
            return try .from(h.promoteBacklogItem(string("item"), assignee: optional("assignee"), due: optional("due"), force: flag("force")))
        case "recurring.list": return try .from(h.recurringTemplates())
        case "recurring.add":
            return try .from(h.addRecurringTemplate(string("title"), schedule: string("schedule"), assignee: optional("assignee")))
        case "recurring.remove": return try .from(h.removeRecurringTemplate(string("template")))
        case "kids.list": return try .from(h.kids())
        case "kids.catalogue.list":
            // With a kid: each rule and chore says whether it earned that kid peanuts today.
            guard let kid = try optional("kid") else { return try .from(h.catalogue()) }
            let done = try h.itemsDoneToday(kid: h.resolveKid(kid))
            return .array(
                try h.catalogue().map { item in
                    guard case var .object(fields) = try JSONValue.from(item) else { return try .from(item) }
                    if item.kind != .reward { fields["doneToday"] = .bool(done.contains(item.id)) }
                    return .object(fields)
                })
        case "kids.history.list": return try .from(h.ledger(kid: string("kid")))
        case "kids.basket.list": return try .from(h.basket(kid: string("kid")))
        case "kids.done": return try .from(h.markDone(kid: string("kid"), item: string("item")))
        case "kids.redeem": return try .from(h.redeem(kid: string("kid"), reward: string("reward")))
        case "kids.basket.remove": return try .from(h.removeFromBasket(kid: string("kid"), entry: string("entry")))
        case "kids.add": return try .from(h.addKid(string("name"), pin: optional("pin")))
        case "kids.rename": return try .from(h.renameKid(string("kid"), to: string("name"), pin: optional("pin")))
        case "kids.remove": return try .from(h.removeKid(string("kid"), pin: optional("pin")))
        case "kids.select": return try .from(h.selectCatalogueItems(strings("items"), pin: optional("pin")))
        case "kids.deselect": return try .from(h.deselectCatalogueItems(strings("items"), pin: optional("pin")))
        case "kids.own":
            return try .from(
                h.addOwnCatalogueItem(
                    kind: string("kind"), title: string("title"), peanuts: integer("peanuts"),
                    category: string("category"), pin: optional("pin")))
        case "kids.adjust":
            return try .from(h.adjustKid(string("kid"), peanuts: integer("peanuts"), reason: string("reason"), pin: optional("pin")))
        case "kids.pin.get": return try .from(h.kidsPINState())
        case "kids.pin.check":
            try h.checkKidsPIN(string("pin"))
            return .bool(true)
        case "kids.pin.set":
            try h.setKidsPIN(string("pin"))
            return .bool(true)
        case "kids.pin.change":
            try h.changeKidsPIN(current: string("pin"), new: string("new"))
            return .bool(true)
        case "kids.pin.reset":
            return .string(try h.requestKidsPINReset())
        case "kids.pin.confirmReset":
            try h.confirmKidsPINReset(code: string("code"))
            return .bool(true)
        case "kids.pin.acknowledge":
            try h.acknowledgeKidsPINChange(pin: string("pin"))
            return .bool(true)
        #if DEBUG
        case "next.note.add" where TestRelease.next:
            return .string(try h.addNote(string("title")))
        case "next.shop.quantity" where TestRelease.next:
            try h.setQuantity(item: string("name"), string("quantity"))
            return .bool(true)
        #endif
        default:
            throw HouseholdError.refuse(.unknownMethod, ["method": .string(method), "methods": JSONValue(methods)])
        }
    }

    package struct HouseholdSummary: Encodable {
        package let id: String
        package let name: String
        package let members: [Member]
        package let settings: HouseholdSettings
        /// The focus rule's limit of active tasks (the page shows it; the rule lives here).
        package let focusLimit: Int
    }
}
