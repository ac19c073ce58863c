import FoundationEssentials
import PulseModel
import PulseStore

public struct ShoppingItem: Sendable, Codable, Equatable {
    public enum State: String, Sendable, Codable { case active, restock, deleted }
    public let id: String
    public let name: String
    public let state: State
    /// Ordering key: when the item (re)entered the list.
    public let listed: Int64
}

/// The shopping list's rules, shared by the CLI and the agent's local API.
extension Household {
    public func shoppingItems(_ state: ShoppingItem.State = .active) throws -> [ShoppingItem] {
        try store.rows(.shoppingItem, RowQuery(where: [("state", .text(state.rawValue))], orderedBy: ["listed"])).map { row in
            ShoppingItem(id: row.id, name: row.text("name"), state: ShoppingItem.State(rawValue: row.text("state")) ?? .active,
                         listed: row.integer("listed"))
        }
    }

    /// Adds items (names trimmed, empty ones skipped) in one transaction, in order.
    @discardableResult
    public func addShoppingItems(_ names: [String]) throws -> [ShoppingItem] {
        let cleaned = try names.map { $0.trimmed }.filter { !$0.isEmpty }
            .map { try Validation.name($0, what: "item name", max: 200) }
        guard !cleaned.isEmpty else { throw HouseholdError.invalidInput("nothing to add: give at least one item name") }
        let base = try store.orderingKey()
        let items = cleaned.enumerated().map { index, name in
            ShoppingItem(id: RowIDRules.random(), name: name, state: .active, listed: base + Int64(index))
        }
        try store.write(member: memberID) { tx in
            for item in items {
                try tx.create(.shoppingItem, item.id, ["name": .text(item.name), "state": .text("active"), "listed": .integer(item.listed)])
            }
        }
        return items
    }

    public func renameShoppingItem(_ handle: String, to newName: String) throws -> ShoppingItem {
        let name = try Validation.name(newName, what: "item name", max: 200)
        let item = try resolveShoppingItem(handle, in: [.active, .restock])
        try store.write(member: memberID) { try $0.put(.shoppingItem, item.id, ["name": .text(name)]) }
        return ShoppingItem(id: item.id, name: name, state: item.state, listed: item.listed)
    }

    /// Bought: the item leaves the list for the restock pool.
    public func checkShoppingItem(_ handle: String) throws -> ShoppingItem {
        try move(try resolveShoppingItem(handle, in: [.active]), to: .restock)
    }

    /// Needed again: the same item comes back to the end of the list.
    public func restockShoppingItem(_ handle: String) throws -> ShoppingItem {
        try move(try resolveShoppingItem(handle, in: [.restock]), to: .active)
    }

    private func move(_ item: ShoppingItem, to state: ShoppingItem.State) throws -> ShoppingItem {
        var fields: [String: FieldValue] = ["state": .text(state.rawValue)]
        var listed = item.listed
        if state == .active {
            listed = try store.orderingKey()
            fields["listed"] = .integer(listed)
        }
        try store.write(member: memberID) { try $0.put(.shoppingItem, item.id, fields) }
        return ShoppingItem(id: item.id, name: item.name, state: state, listed: listed)
    }

    /// An item by its position in the list (1, 2, …), its exact name (any case), or a
    /// prefix of its id (4+ characters). Ambiguity is an error naming the candidates.
    public func resolveShoppingItem(_ handle: String, in states: [ShoppingItem.State]) throws -> ShoppingItem {
        let lists = try states.map { try shoppingItems($0) }
        return try Handles.resolve(handle, in: lists.flatMap { $0 }, positional: lists[0], what: "item",
                                   list: states == [.restock] ? "restock pool" : "shopping list", name: \.name, id: \.id)
    }
}

/// Clear all, and its undo. The last clear stays undoable on this machine until the
/// next clear (a CLI has no 4-second toast); undo brings back exactly the items that
/// clear removed and that nobody has changed since.
extension Household {
    package static let lastClearKey = "last_shopping_clear"

    @discardableResult
    public func clearShoppingList() throws -> [ShoppingItem] {
        let items = try shoppingItems(.active)
        guard !items.isEmpty else { throw HouseholdError.invalidInput("the shopping list is already empty") }
        try store.write(member: memberID) { tx in
            for item in items { try tx.put(.shoppingItem, item.id, ["state": .text("deleted")]) }
        }
        try store.setMeta(Self.lastClearKey, .text(items.map(\.id).joined(separator: ",")))
        return items
    }

    @discardableResult
    public func undoClearShoppingList() throws -> [ShoppingItem] {
        guard case let .text(list)? = try store.meta(Self.lastClearKey), !list.isEmpty else {
            throw HouseholdError.invalidInput("there is no clear to undo")
        }
        let ids = list.split(separator: ",").map(String.init)
        let deleted = Set(try shoppingItems(.deleted).map(\.id))
        let restorable = ids.filter { deleted.contains($0) }
        try store.write(member: memberID) { tx in
            for id in restorable { try tx.put(.shoppingItem, id, ["state": .text("active")]) }
        }
        try store.setMeta(Self.lastClearKey, .text(""))
        let restored = Set(restorable)
        return try shoppingItems(.active).filter { restored.contains($0.id) }
    }
}
