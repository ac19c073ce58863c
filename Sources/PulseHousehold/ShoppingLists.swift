import FoundationEssentials
import PulseModel
import PulseStore

/// One of the household's shopping lists (issue 57): the first one, which every household has
/// and which has no row (`id` and `name` nil: each reader sees it named in their language), or
/// one a person made ("Lidl", "Pharmacy"), with how many items are on it and in its restock pool.
public struct ShoppingList: Sendable, Codable, Equatable {
    public let id: String?
    public let name: String?
    public var active: Int = 0
    public var restock: Int = 0

    public init(id: String?, name: String?, active: Int = 0, restock: Int = 0) {
        self.id = id
        self.name = name
        self.active = active
        self.restock = restock
    }
}

/// What becomes of the items of a list being deleted.
public enum ShoppingListItemsChoice: String, Sendable, Codable { case move, delete }

/// The household's lists. An item names its list (`shopping_item.list`); an item whose list is
/// unknown here or deleted (deleted on one computer while another added to it) is shown on the
/// first list: nothing is lost, and nothing is on two lists.
extension Household {
    /// The most lists a household keeps beside its first one.
    public static let maxShoppingLists = 50

    /// The first list's name in every language we speak, each a name no list may take (and a
    /// handle for the first list, as "" and nil are).
    static var firstListNames: [String] {
        Languages.builtIn.compactMap { MessageCatalogue.builtIn($0)?.text("shop.first_list") }
    }

    /// The lists people made, live, by id (their names as written).
    func liveShoppingLists() throws -> [(id: String, name: String)] {
        try store.rows(.shoppingList, RowQuery(where: [("deleted", .integer(0))], orderedBy: ["created"])).map { ($0.id, $0.text("name")) }
    }

    /// Every list, the first one first and then as made, with its counts.
    public func shoppingLists() throws -> [ShoppingList] {
        let live = try liveShoppingLists()
        let known = Set(live.map(\.id))
        var counts: [String?: (active: Int, restock: Int)] = [:]
        for state in [ShoppingItem.State.active, .restock] {
            for row in try store.rows(.shoppingItem, RowQuery(where: [("state", .text(state.rawValue))])) {
                let list = row.optionalText("list").flatMap { known.contains($0) ? $0 : nil }
                var count = counts[list] ?? (0, 0)
                if state == .active { count.active += 1 } else { count.restock += 1 }
                counts[list] = count
            }
        }
        let first = ShoppingList(id: nil, name: nil, active: counts[nil]?.active ?? 0, restock: counts[nil]?.restock ?? 0)
        return [first]
            + live.map { list in
                ShoppingList(id: list.id, name: list.name, active: counts[list.id]?.active ?? 0, restock: counts[list.id]?.restock ?? 0)
            }
    }

    /// The list a person names: nil, "" or the first list's name in any of our languages is the
    /// first list (nil); a list's name (any case) or the start of its id (4+ characters) is that
    /// list's id. A list's whole id (a page's or a phone's call, perhaps queued while the list
    /// was deleted elsewhere, or sent to a computer that has not received the list yet) that is not
    /// a live list here is the first list: where that list's items are shown (decision 0020).
    /// Anything else is refused.
    public func resolveShoppingList(_ handle: String?) throws -> String? {
        guard let handle = handle?.trimmed, !handle.isEmpty else { return nil }
        let key = handle.nameKey
        if Self.firstListNames.contains(where: { $0.nameKey == key }) { return nil }
        let live = try liveShoppingLists()
        if handle.utf8.count == 36, RowIDRules.isValid(handle) { return live.contains { $0.id == handle } ? handle : nil }
        if let named = live.first(where: { $0.name.nameKey == key }) { return named.id }
        let lowered = handle.lowercased()
        let byID = handle.count >= 4 ? live.filter { $0.id.hasPrefix(lowered) } : []
        if byID.count == 1 { return byID[0].id }
        throw HouseholdError.refuse(.noSuchList, ["handle": .string(String(handle.prefix(60)))])
    }

    /// A new list. Refused when its name is taken (a live list's, in any case, or the first
    /// list's in any language) or when the household has ``maxShoppingLists`` already.
    @discardableResult
    public func addShoppingList(_ name: String) throws -> ShoppingList {
        let name = try Validation.name(name, what: "list_name", max: 60)
        let id = RowIDRules.newRowID()
        try store.write(member: memberID) { tx in
            let live = try liveShoppingLists()
            try Self.checkFree(name, among: live)
            guard live.count < Self.maxShoppingLists else { throw HouseholdError.refuse(.tooManyLists, ["max": JSONValue(Self.maxShoppingLists)]) }
            try tx.create(.shoppingList, id, ["name": .text(name), "created": .integer(try store.orderingKey()), "deleted": .bool(false)])
        }
        return ShoppingList(id: id, name: name)
    }

    /// Renames a list (not the first: its name is each reader's language's).
    @discardableResult
    public func renameShoppingList(_ handle: String, to newName: String) throws -> ShoppingList {
        let name = try Validation.name(newName, what: "list_name", max: 60)
        guard let id = try resolveShoppingList(handle) else { throw HouseholdError.refuse(.firstList) }
        try store.write(member: memberID) { tx in
            try Self.checkFree(name, among: try liveShoppingLists().filter { $0.id != id })
            try tx.put(.shoppingList, id, ["name": .text(name)])
        }
        return try shoppingLists().first { $0.id == id } ?? ShoppingList(id: id, name: name)
    }

    private static func checkFree(_ name: String, among lists: [(id: String, name: String)]) throws {
        let key = name.nameKey
        if lists.contains(where: { $0.name.nameKey == key }) || firstListNames.contains(where: { $0.nameKey == key }) {
            throw HouseholdError.refuse(.listNameTaken, ["name": .string(name)])
        }
    }

    /// Deletes a list (not the first). A list holding items (on it or in its restock pool) is
    /// deleted only when `items` says what becomes of them: `move` puts them on `destination`
    /// (the first list when nil; an item whose name is there already is not put there twice: it
    /// is deleted, the one there stands for it), `delete` deletes them. Returns the list deleted,
    /// with the counts it held.
    @discardableResult
    public func deleteShoppingList(_ handle: String, items choice: ShoppingListItemsChoice? = nil, to destination: String? = nil) throws -> ShoppingList {
        guard let id = try resolveShoppingList(handle) else { throw HouseholdError.refuse(.firstList) }
        guard try resolveShoppingList(destination) != id else { throw HouseholdError.refuse(.sameList) }
        var list = ShoppingList(id: id, name: nil)
        try store.write(member: memberID, keepingChanges: false) { tx in
            // Read under the write's lock: the list, its items and where they go as they are now.
            guard try liveInTransaction(id) != nil else { throw HouseholdError.refuse(.noSuchList, ["handle": .string(handle)]) }
            list = try shoppingLists().first { $0.id == id } ?? list
            let target = try liveInTransaction(try resolveShoppingList(destination))
            let held = try shoppingItems(.active, on: id) + shoppingItems(.restock, on: id)
            if !held.isEmpty {
                guard let choice else {
                    throw HouseholdError.refuse(.listNotEmpty, ["name": .string(list.name ?? ""), "count": JSONValue(held.count)])
                }
                // The names already where they would go, by state: those are not put there twice.
                let there = choice == .delete ? [] : try shoppingItems(.active, on: target) + shoppingItems(.restock, on: target)
                // A name is there once, on the list or in its pool: a second one moved is deleted.
                var taken = Set(there.map(\.name.nameKey))
                for item in held {
                    if choice == .delete || !taken.insert(item.name.nameKey).inserted {
                        try tx.put(.shoppingItem, item.id, ["state": .text("deleted")])
                    } else {
                        try tx.put(.shoppingItem, item.id, ["list": target.map(FieldValue.text) ?? .null])
                    }
                }
            }
            try tx.put(.shoppingList, id, ["deleted": .bool(true)])
        }
        return list
    }

    /// Moves an item (on `list`'s list or in its restock pool) to another list, where it keeps its
    /// place (on the list, or in the pool). Refused when that list has an item of the same name
    /// there already (it would be there twice).
    @discardableResult
    public func moveShoppingItem(_ handle: String, on list: String? = nil, toList destination: String?) throws -> ShoppingItem {
        let item = try resolveShoppingItem(handle, in: [.active, .restock], on: list)
        var moved = item
        try store.write(member: memberID) { tx in
            let target = try liveInTransaction(try resolveShoppingList(destination))
            moved.list = target
            guard target != item.list else { return }
            // On the list or in its pool: the name is there already (never twice, in any place).
            let there = try shoppingItems(named: [item.name], on: target)
            if let twin = (there.active + there.pool).first {
                throw HouseholdError.refuse(.alreadyOnList, ["name": .string(twin.name)])
            }
            try tx.put(.shoppingItem, item.id, ["list": target.map(FieldValue.text) ?? .null])
        }
        return moved
    }

    /// The items of one list in `state`, ordered as ``shoppingItems(_:)`` orders them; `list`
    /// nil: the first list, which also shows the items of lists unknown here or deleted.
    func listItems(_ state: ShoppingItem.State, on list: String?) throws -> [ShoppingItem] {
        if let list {
            return try store.rows(.shoppingItem, RowQuery(where: [("list", .text(list)), ("state", .text(state.rawValue))], orderedBy: ["listed"]))
                .map(ShoppingItem.init(row:))
        }
        let rows = try store.rows(.shoppingItem, RowQuery(where: [("state", .text(state.rawValue))], orderedBy: ["listed"]))
        // Most households have one list: no list read when no row names one.
        guard rows.contains(where: { $0.optionalText("list") != nil }) else { return rows.map(ShoppingItem.init(row:)) }
        let live = Set(try liveShoppingLists().map(\.id))
        return rows.compactMap { row in
            var item = ShoppingItem(row: row)
            guard let named = item.list else { return item }
            if live.contains(named) { return nil }
            item.list = nil
            return item
        }
    }

    /// `list` as it stands inside a write's transaction: itself while live, else the first (nil):
    /// deleted by another process since it was resolved.
    func liveInTransaction(_ list: String?) throws -> String? {
        guard let list else { return nil }
        return try liveShoppingLists().contains { $0.id == list } ? list : nil
    }

    /// The list an item is shown on: its own when live here, else the first (nil).
    func shownList(of item: ShoppingItem, live: Set<String>) -> String? {
        item.list.flatMap { live.contains($0) ? $0 : nil }
    }
}
