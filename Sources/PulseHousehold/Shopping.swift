import FoundationEssentials
import PulseModel
import PulseStore

public struct ShoppingItem: Sendable, Codable, Equatable {
    public enum State: String, Sendable, Codable { case active, restock, deleted }
    public let id: String
    public let name: String
    public let state: State
    /// Ordering key: when the item entered its present state (the list: added or restocked;
    /// the restock pool: bought).
    public let listed: Int64
    /// How much ("2", "1 kg"), and a word about it ("the lactose-free one"): optional, kept
    /// through the restock pool (issue 57).
    public var quantity: String?
    public var note: String?
    /// The list it is on (a ``ShoppingList``'s id); nil: the household's first list.
    public var list: String?

    public init(id: String, name: String, state: State, listed: Int64, quantity: String? = nil, note: String? = nil, list: String? = nil) {
        self.id = id
        self.name = name
        self.state = state
        self.listed = listed
        self.quantity = quantity
        self.note = note
        self.list = list
    }

    /// This item in `state` since `listed`.
    func moved(to state: State, listed: Int64? = nil) -> ShoppingItem {
        ShoppingItem(id: id, name: name, state: state, listed: listed ?? self.listed, quantity: quantity, note: note, list: list)
    }
}

extension ShoppingItem {
    /// The item a complete `shopping_item` row holds.
    init(row: StoredRow) {
        self.init(
            id: row.id, name: row.text("name"), state: State(rawValue: row.text("state")) ?? .active, listed: row.integer("listed"),
            quantity: row.optionalText("quantity"), note: row.optionalText("note"), list: row.optionalText("list"))
    }

    /// The item of a row's fields as they have arrived (`store.row`).
    init(id: String, fields row: [String: FieldValue], name: String = "", state: State = .active) {
        self.init(
            id: id, name: row["name"]?.textValue ?? name, state: row["state"]?.textValue.flatMap(State.init(rawValue:)) ?? state,
            listed: row["listed"]?.integerValue ?? 0, quantity: row["quantity"]?.textValue, note: row["note"]?.textValue,
            list: row["list"]?.textValue)
    }
}

/// A change of an item's quantity and note: `nil` leaves a field as it is, `.some(nil)` clears it.
public struct ShoppingItemEdit: Sendable, Equatable {
    public var quantity: String??
    public var note: String??
    /// What the editor saw before, when it says (a phone's edit made with no computer in reach,
    /// sent later): a field someone else changed meanwhile is not overwritten
    /// (``ShoppingRules/edit(current:to:was:)``). nil: not said (an edit made online).
    public var wasQuantity: String??
    public var wasNote: String??
    public init(quantity: String?? = nil, note: String?? = nil, wasQuantity: String?? = nil, wasNote: String?? = nil) {
        self.quantity = quantity
        self.note = note
        self.wasQuantity = wasQuantity
        self.wasNote = wasNote
    }
}

/// What `shop add` did: the items now on the list, in the order given, and which of them
/// came back from the restock pool (the same item, not a second one).
public struct ShoppingAddition: Sendable, Codable, Equatable {
    public let items: [ShoppingItem]
    public let restocked: [String]
    /// The items that were on the list already (a name added again, in any case): answered
    /// as they are, nothing added (``ShoppingRules/plan(_:pool:active:)``).
    public var already: [String] = []
}

/// The shopping list's rules, shared by the CLI and the agent's local API.
extension Household {
    /// A list (`list`: its id; nil, the first list) in the order items were added (or
    /// restocked); its restock pool most recently bought first.
    public func shoppingItems(_ state: ShoppingItem.State = .active, on list: String? = nil) throws -> [ShoppingItem] {
        let items = try listItems(state, on: list)
        return state == .restock ? items.reversed() : items
    }

    /// The items on the list and in the restock pool whose names are among `names` (any case),
    /// ordered as ``shoppingItems(_:)`` orders each: all that ``ShoppingRules/plan(_:pool:active:)``
    /// needs of them, found by the store's index of names, whatever the list's length.
    /// Of `list`'s list only (nil: the first).
    func shoppingItems(named names: [String], on list: String?) throws -> (active: [ShoppingItem], pool: [ShoppingItem]) {
        var items = try store.liveRows(.shoppingItem, named: names).map(ShoppingItem.init(row:)).sorted { ($0.listed, $0.id) < ($1.listed, $1.id) }
        if list != nil || items.contains(where: { $0.list != nil }) {
            let live = Set(try liveShoppingLists().map(\.id))
            items = items.filter { shownList(of: $0, live: live) == list }
        }
        return (items.filter { $0.state == .active }, items.filter { $0.state == .restock }.reversed())
    }

    /// Adds items (names trimmed, empty ones skipped) in one transaction, in order.
    @discardableResult
    public func addShoppingItems(_ names: [String], on list: String? = nil) throws -> [ShoppingItem] {
        try addOrRestockShoppingItems(names.map { ShoppingEntry(name: $0) }, on: list).items
    }

    /// Adds items in one transaction, in order. A name that is in the restock pool (any
    /// case) brings that item back instead of making a second one: the seed's restock
    /// promise, one tap and no retyping (``ShoppingRules/plan(_:pool:)``).
    @discardableResult
    public func addOrRestockShoppingItems(_ names: [String]) throws -> ShoppingAddition {
        try addOrRestockShoppingItems(names.map { ShoppingEntry(name: $0) })
    }

    /// Adds items as ``addOrRestockShoppingItems(_:)-([String])`` does, each with its quantity and
    /// note: an item back from the restock pool takes those given and keeps its own otherwise.
    @discardableResult
    /// `list`: the list's id (nil: the first list); the name rules hold within it, each list
    /// with its own restock pool.
    public func addOrRestockShoppingItems(_ entries: [ShoppingEntry], on list: String? = nil) throws -> ShoppingAddition {
        // Blank names are skipped; each other one is checked.
        let checked = try entries.compactMap { $0.name.trimmed.isEmpty ? nil : try $0.checked() }
        let cleaned = checked.map(\.name)
        guard !cleaned.isEmpty else { throw HouseholdError.refuse(.nothingToAdd) }
        // The pool and the listing key are read inside the write's transaction: under its
        // lock, so a name another process restocks or adds meanwhile is seen, and without
        // two read transactions of their own before it (each takes and drops a WAL lock).
        let (addition, _) = try store.write(member: memberID, keepingChanges: false) { tx in
            let list = try liveInTransaction(list)
            let found = try shoppingItems(named: cleaned, on: list)
            let plan = ShoppingRules.plan(cleaned, pool: found.pool, active: found.active)
            let base = try store.orderingKey()
            var items: [ShoppingItem] = []
            items.reserveCapacity(plan.count)
            var already: [String] = []
            var answered = Set<String>() // the ids in `items` and `already` (both grow together)
            for (index, step) in plan.enumerated() {
                if let listed = step.onList {
                    if answered.insert(listed.id).inserted {
                        already.append(listed.id)
                        items.append(listed)
                    }
                    continue
                }
                if step.repeatOf != nil { continue } // the same name twice in one addition: once
                let entry = checked[index]
                var item = ShoppingItem(
                    id: step.restock?.id ?? RowIDRules.newRowID(), name: step.restock?.name ?? step.name, state: .active,
                    listed: base + Int64(index), quantity: entry.quantity ?? step.restock?.quantity, note: entry.note ?? step.restock?.note, list: list)
                if step.restock != nil {
                    try tx.put(.shoppingItem, item.id, with(["state": .text("active"), "listed": .integer(item.listed)], entry))
                } else {
                    try tx.create(
                        .shoppingItem, item.id,
                        with(["name": .text(item.name), "state": .text("active"), "listed": .integer(item.listed)], entry, list: list))
                    item.quantity = entry.quantity
                    item.note = entry.note
                }
                items.append(item)
            }
            var addition = ShoppingAddition(items: items, restocked: plan.compactMap { $0.restock?.id })
            addition.already = already
            return addition
        }
        return addition
    }

    public func renameShoppingItem(_ handle: String, to newName: String, on list: String? = nil) throws -> ShoppingItem {
        let name = try Validation.name(newName, what: "item_name", max: 200)
        let item = try resolveShoppingItem(handle, in: [.active, .restock], on: list)
        try store.write(member: memberID) { try $0.put(.shoppingItem, item.id, ["name": .text(name)]) }
        return ShoppingItem(id: item.id, name: name, state: item.state, listed: item.listed, quantity: item.quantity, note: item.note, list: item.list)
    }

    /// Sets or clears an item's quantity and note (on the list or in the restock pool). An edit
    /// that changes nothing writes nothing; one that names no field is refused.
    public func editShoppingItem(_ handle: String, _ edit: ShoppingItemEdit, on list: String? = nil) throws -> ShoppingItem {
        guard edit.quantity != nil || edit.note != nil else { throw HouseholdError.refuse(.nothingToChange) }
        let quantity = try edit.quantity.map { try $0.flatMap { try ShoppingEntry.checkedQuantity($0) } }
        let note = try edit.note.map { try $0.flatMap { try ShoppingEntry.checkedNote($0) } }
        var item = try resolveShoppingItem(handle, in: [.active, .restock], on: list)
        var fields: [String: FieldValue] = [:]
        /// `field` to `new` (nil: left) by ``ShoppingRules/edit(current:to:was:)``: true when it is written.
        func change(_ field: String, to new: String??, from current: String?, was: String??) throws -> Bool {
            guard let new else { return false }
            switch ShoppingRules.edit(current: current, to: new, was: was) {
            case .unchanged: return false
            case .set:
                fields[field] = new.map(FieldValue.text) ?? .null
                return true
            case .changedMeanwhile: throw HouseholdError.refuse(.changedMeanwhile, ["name": .string(item.name), "field": .string(field)])
            }
        }
        if try change("quantity", to: quantity, from: item.quantity, was: edit.wasQuantity), let quantity { item.quantity = quantity }
        if try change("note", to: note, from: item.note, was: edit.wasNote), let note { item.note = note }
        if !fields.isEmpty { try store.write(member: memberID) { try $0.put(.shoppingItem, item.id, RowFields(fields)) } }
        return item
    }

    /// Deletes one item (a wrong one) from the list or the restock pool: gone on every
    /// machine (the seeds' Deleted state; the row stays, so an undo brings back the same item).
    /// `remembered` (the CLI's `shop delete`, which has no toast): it becomes this machine's last
    /// removal, which `shop undo` brings back where it was. A page or a phone undoes its own
    /// delete by the item's id (``undeleteShoppingItem(_:to:)``) and leaves a clear's undo alone.
    public func deleteShoppingItem(_ handle: String, remembered: Bool = false, on list: String? = nil) throws -> ShoppingItem {
        let item = try resolveShoppingItem(handle, in: [.active, .restock], on: list)
        try store.write(member: memberID) { try $0.put(.shoppingItem, item.id, ["state": .text("deleted")]) }
        if remembered { try store.setMeta(Self.lastClearKey(list), .text(item.state == .restock ? "\(item.id)@restock" : item.id)) }
        return item
    }

    /// Undoes ``deleteShoppingItem(_:)``: the item (by its id) goes back to `state`, where it
    /// was. Refused, changing nothing, when it is not deleted (someone brought it back or it
    /// never was), or when an item of the same name is there again (it would be there twice).
    public func undeleteShoppingItem(_ id: String, to state: ShoppingItem.State) throws -> ShoppingItem {
        guard state != .deleted else { throw HouseholdError.refuse(.invalidPool, ["value": .string(state.rawValue)]) }
        let row = try store.row(.shoppingItem, id)
        guard row["state"]?.textValue == ShoppingItem.State.deleted.rawValue, row["name"]?.textValue != nil, row["listed"]?.integerValue != nil else {
            throw HouseholdError.refuse(.nothingToUndo)
        }
        var item = ShoppingItem(id: id, fields: row)
        item.list = shownList(of: item, live: Set(try liveShoppingLists().map(\.id)))
        let found = try shoppingItems(named: [item.name], on: item.list)
        let again = ShoppingRules.readded([item], active: state == .active ? found.active : found.pool)
        guard again.isEmpty else {
            throw HouseholdError.refuse(.undoWouldDuplicate, ["names": JSONValue(again), "count": JSONValue(again.count)])
        }
        try store.write(member: memberID) { try $0.put(.shoppingItem, item.id, ["state": .text(state.rawValue)]) }
        return item.moved(to: state)
    }

    /// Bought: the item leaves the list for the restock pool. `once` (a phone's queued
    /// check, which may arrive twice): an item already in the pool is answered as it is,
    /// unchanged, instead of refused.
    /// Each check is recorded (`shopping_checkoff`: the name, who, when): the shop's walking
    /// order is learned from them (``shoppingItems(inWalkingOrder:)``).
    public func checkShoppingItem(_ handle: String, once: Bool = false, on list: String? = nil) throws -> ShoppingItem {
        if once, let item = try? resolveShoppingItem(handle, in: [.restock], on: list) { return item }
        return try move(try resolveShoppingItem(handle, in: [.active], on: list), to: .restock)
    }

    /// The list in the shop's walking order, learned from the household's check-offs
    /// (``WalkingOrder``); the restock pool as ``shoppingItems(_:)`` orders it.
    /// Each list learns its own shop, from the check-offs made on it.
    public func shoppingItems(inWalkingOrder state: ShoppingItem.State, on list: String? = nil) throws -> [ShoppingItem] {
        let items = try shoppingItems(state, on: list)
        guard state == .active, items.count > 1 else { return items }
        let evidence = try walkingEvidence(on: list)
        let keys = items.map(\.name.nameKey)
        var byKey: [String: [ShoppingItem]] = [:]
        for item in items { byKey[item.name.nameKey, default: []].append(item) }
        let order = WalkingOrder.order(
            keys, trips: WalkingOrder.trips(evidence.checkoffs), corrections: evidence.corrections, lastChecked: evidence.lastChecked)
        return order.compactMap { key in
            guard var same = byKey[key], !same.isEmpty else { return nil }
            let first = same.removeFirst()
            byKey[key] = same
            return first
        }
    }

    /// The check-offs the walking order reads (the newest ``WalkingOrder/evidence``, with the corrections).
    public func shoppingCheckoffs(on list: String? = nil) throws -> [WalkingOrder.CheckOff] { try walkingEvidence(on: list).checkoffs }

    /// The check-offs, the people's corrections, and each name's last check-off: the newest
    /// ``WalkingOrder/evidence`` of them (a read bounded whatever the household's history).
    /// Of one list (the first: the check-offs that name none, as every one before lists did).
    func walkingEvidence(
        on list: String? = nil
    ) throws -> (
        checkoffs: [WalkingOrder.CheckOff], corrections: [WalkingOrder.Correction], lastChecked: [String: HybridTimestamp]
    ) {
        var checkoffs: [WalkingOrder.CheckOff] = [], corrections: [WalkingOrder.Correction] = [], last: [String: HybridTimestamp] = [:]
        let query = RowQuery(where: [("list", list.map(FieldValue.text) ?? .null)], orderedBy: ["at"], last: WalkingOrder.evidence)
        for row in try store.rows(.shoppingCheckoff, query) {
            let name = row.text("name").nameKey, at = HybridTimestamp(rawValue: row.integer("at"))
            let after = row.optionalText("after"), before = row.optionalText("before")
            if after != nil || before != nil {
                corrections.append(WalkingOrder.Correction(name: name, after: after?.nameKey, before: before?.nameKey, at: at))
            } else {
                checkoffs.append(WalkingOrder.CheckOff(name: name, member: row.optionalText("member"), at: at))
                last[name] = max(last[name] ?? at, at)
            }
        }
        return (checkoffs, corrections, last)
    }

    /// A person's correction of the walking order: the item (on the list) put at `position`
    /// (1 = first) of the list in the shop's order. Recorded as evidence beside the check-offs
    /// (its neighbours' names), so every computer shows it, until the item is walked again.
    /// Returns the list in the shop's order.
    @discardableResult
    public func moveShoppingItemInWalkingOrder(_ handle: String, to position: Int, on list: String? = nil) throws -> [ShoppingItem] {
        let ordered = try shoppingItems(inWalkingOrder: .active, on: list)
        // A number is a place in the list as it is shown here: in the shop's order.
        let item = try Handles.resolve(handle, in: ordered, positional: ordered, what: "item", list: "shopping_list", name: \.name, id: \.id)
        guard (1...max(1, ordered.count)).contains(position) else {
            throw HouseholdError.refuse(.positionOutOfRange, ["max": JSONValue(ordered.count)])
        }
        let rest = ordered.filter { $0.id != item.id }
        let after = position >= 2 ? rest[position - 2].name : nil
        let before = position - 1 < rest.count ? rest[position - 1].name : nil
        guard after != nil || before != nil, ordered.firstIndex(where: { $0.id == item.id }) != position - 1 else { return ordered }
        try store.write(member: memberID) { tx in
            var fields: [String: FieldValue] = [
                "name": .text(item.name), "member": memberID.map(FieldValue.text) ?? .null, "at": .integer(try store.orderingKey()),
            ]
            if let after { fields["after"] = .text(after) }
            if let before { fields["before"] = .text(before) }
            if let list { fields["list"] = .text(list) }
            try tx.create(.shoppingCheckoff, RowIDRules.newRowID(), RowFields(fields))
        }
        return try shoppingItems(inWalkingOrder: .active, on: list)
    }

    /// Needed again: the same item comes back to the end of the list (`once`: as for a check).
    public func restockShoppingItem(_ handle: String, once: Bool = false, on list: String? = nil) throws -> ShoppingItem {
        if once, let item = try? resolveShoppingItem(handle, in: [.active], on: list) { return item }
        return try move(try resolveShoppingItem(handle, in: [.restock], on: list), to: .active)
    }

    /// Adds items under ids the caller chose (a phone's queued additions, made offline), each
    /// id once: an id the household already has (this call arriving again, here or through
    /// another agent) is answered as that item is, unchanged; two agents receiving the same
    /// addition make the same row, which merges into one. The restock rule holds as for any
    /// addition (a name in the pool brings that item back); the id is then kept by a deleted
    /// row of that name, so that the addition arriving again still finds it and changes nothing.
    public func addShoppingItems(_ names: [String], ids: [String], on list: String? = nil) throws -> ShoppingAddition {
        try addShoppingItems(names.map { ShoppingEntry(name: $0) }, ids: ids, on: list)
    }

    /// Adds items under ids the caller chose, as ``addShoppingItems(_:ids:)-([String],_)`` does,
    /// each with its quantity and note (as ``addOrRestockShoppingItems(_:)-([ShoppingEntry])`` takes them).
    public func addShoppingItems(_ entries: [ShoppingEntry], ids: [String], on list: String? = nil) throws -> ShoppingAddition {
        guard ids.count == entries.count else {
            throw HouseholdError.refuse(.wrongType, ["key": "ids", "type": "strings"])
        }
        for id in ids where !RowIDRules.isValid(id) { throw HouseholdError.refuse(.invalidID, ["kind": "item", "value": .string(String(id.prefix(64)))]) }
        let checked = try entries.map { try $0.checked() }
        let cleaned = checked.map(\.name)
        guard !cleaned.isEmpty else { throw HouseholdError.refuse(.nothingToAdd) }
        let (addition, _) = try store.write(member: memberID, keepingChanges: false) { tx in
            let list = try liveInTransaction(list)
            var known: [Int: ShoppingItem] = [:]
            for (index, id) in ids.enumerated() {
                let row = try store.row(.shoppingItem, id)
                guard !row.isEmpty else { continue }
                let item = ShoppingItem(id: id, fields: row, name: cleaned[index])
                known[index] = item
                // The id kept by a restock (below): answered as the item it brought back, while
                // that item is where this addition put it (same name, same place in the list),
                // so that a phone whose first answer was lost learns that item's id again and
                // its changes queued after the addition reach it (issue 51).
                if item.state == .deleted {
                    let found = try shoppingItems(named: [item.name], on: list)
                    if let back = (found.active + found.pool).first(where: { $0.listed == item.listed }) {
                        known[index] = back
                    }
                }
            }
            let fresh = cleaned.indices.filter { known[$0] == nil }
            let found = try shoppingItems(named: fresh.map { cleaned[$0] }, on: list)
            let plan = ShoppingRules.plan(fresh.map { cleaned[$0] }, pool: found.pool, active: found.active)
            let base = try store.orderingKey()
            var items = known
            var restocked: [String] = []
            var already: [String] = []
            for (step, index) in zip(plan, fresh) {
                let listed = base + Int64(index)
                // On the list already (or earlier in this addition): nothing added; the id is
                // kept by a deleted row of that name at that item's place, so that this addition
                // arriving again is answered as that item (as for a restock, above).
                if let twin = step.onList ?? step.repeatOf.flatMap({ items[fresh[$0]] }) {
                    try tx.create(
                        .shoppingItem, ids[index], with(["name": .text(step.name), "state": .text("deleted"), "listed": .integer(twin.listed)], list: list))
                    items[index] = twin
                    if !already.contains(twin.id) { already.append(twin.id) }
                    continue
                }
                let entry = checked[index]
                if let back = step.restock {
                    try tx.put(.shoppingItem, back.id, with(["state": .text("active"), "listed": .integer(listed)], entry))
                    try tx.create(
                        .shoppingItem, ids[index], with(["name": .text(step.name), "state": .text("deleted"), "listed": .integer(listed)], list: list))
                    items[index] = ShoppingItem(
                        id: back.id, name: back.name, state: .active, listed: listed, quantity: entry.quantity ?? back.quantity,
                        note: entry.note ?? back.note, list: list)
                    restocked.append(back.id)
                } else {
                    try tx.create(
                        .shoppingItem, ids[index], with(["name": .text(step.name), "state": .text("active"), "listed": .integer(listed)], entry, list: list))
                    items[index] = ShoppingItem(
                        id: ids[index], name: step.name, state: .active, listed: listed, quantity: entry.quantity, note: entry.note, list: list)
                }
            }
            var addition = ShoppingAddition(items: cleaned.indices.compactMap { items[$0] }, restocked: restocked)
            addition.already = already
            return addition
        }
        return addition
    }

    /// `fields` and the quantity and note `entry` gives (most entries give none: the literal as
    /// it is), and the list when it is not the first.
    private func with(_ fields: RowFields, _ entry: ShoppingEntry = ShoppingEntry(name: ""), list: String? = nil) -> RowFields {
        var extra = entry.fields
        if let list { extra["list"] = .text(list) }
        guard !extra.isEmpty else { return fields }
        return RowFields(Dictionary(fields.pairs, uniquingKeysWith: { $1 }).merging(extra) { $1 })
    }

    /// Moves an item between the list and the pool; `listed` records when (the list's
    /// order, and the pool's most-recently-bought-first order).
    private func move(_ item: ShoppingItem, to state: ShoppingItem.State) throws -> ShoppingItem {
        let (listed, _) = try store.write(member: memberID) { tx in
            let listed = try store.orderingKey()
            try tx.put(.shoppingItem, item.id, ["state": .text(state.rawValue), "listed": .integer(listed)])
            if state == .restock {
                var fields: [String: FieldValue] = ["name": .text(item.name), "member": memberID.map(FieldValue.text) ?? .null, "at": .integer(listed)]
                if let list = item.list { fields["list"] = .text(list) }
                try tx.create(.shoppingCheckoff, RowIDRules.newRowID(), RowFields(fields))
            }
            return listed
        }
        return item.moved(to: state, listed: listed)
    }

    /// An item by its position in the list (1, 2, …), its exact name (any case), or a
    /// prefix of its id (4+ characters). Ambiguity is an error naming the candidates.
    /// Its whole id (a page's or a phone's call) finds it on whichever list it is now: moved
    /// meanwhile to another list, or its list deleted, a queued check still reaches it.
    public func resolveShoppingItem(_ handle: String, in states: [ShoppingItem.State], on list: String? = nil) throws -> ShoppingItem {
        if handle.utf8.count == 36, RowIDRules.isValid(handle) {
            let row = try store.row(.shoppingItem, handle)
            var item = ShoppingItem(id: handle, fields: row)
            if row["name"] != nil, row["listed"] != nil, states.contains(item.state) {
                item.list = shownList(of: item, live: Set(try liveShoppingLists().map(\.id)))
                return item
            }
        }
        let lists = try states.map { try shoppingItems($0, on: list) }
        return try Handles.resolve(
            handle, in: lists.flatMap { $0 }, positional: lists[0], what: "item",
            list: states == [.restock] ? "restock_pool" : "shopping_list", name: \.name, id: \.id)
    }
}

/// Clear all, and its undo. The last removal (a clear, or one item deleted) stays undoable on
/// this machine until the next one (a CLI has no 4-second toast); undo brings back exactly the
/// items it removed and that nobody has changed since, where they were.
extension Household {
    /// Each list's last removal is its own: the first list's key is the one of every release before lists.
    package static func lastClearKey(_ list: String? = nil) -> String { list.map { "last_shopping_clear:\($0)" } ?? "last_shopping_clear" }

    @discardableResult
    public func clearShoppingList(on list: String? = nil) throws -> [ShoppingItem] {
        let items = try shoppingItems(.active, on: list)
        guard !items.isEmpty else { throw HouseholdError.refuse(.listAlreadyEmpty) }
        try store.write(member: memberID, keepingChanges: false) { tx in
            for item in items { try tx.put(.shoppingItem, item.id, ["state": .text("deleted")]) }
        }
        try store.setMeta(Self.lastClearKey(list), .text(items.map(\.id).joined(separator: ",")))
        return items
    }

    /// Undoes this machine's last removal (a clear, or a deleted item): the items that are still
    /// deleted come back where they were (the same rows, so every machine sees them return).
    /// Refused, changing nothing, when one of them was added there again since (it would be
    /// there twice), or when none is left to bring back. Another machine sees the removal, then
    /// the undo, as ordinary changes; its own `shop undo` knows only its own removals.
    @discardableResult
    public func undoClearShoppingList(on shoppingList: String? = nil) throws -> [ShoppingItem] {
        let key = Self.lastClearKey(shoppingList)
        guard case let .text(list)? = try store.meta(key), !list.isEmpty else {
            throw HouseholdError.refuse(.noClearToUndo)
        }
        // Each removed item: its id, and "@restock" when it was taken from the pool.
        var whereFrom: [String: ShoppingItem.State] = [:]
        for entry in list.split(separator: ",") {
            let parts = entry.split(separator: "@")
            whereFrom[String(parts[0])] = parts.count > 1 && parts[1] == "restock" ? .restock : .active
        }
        let deletedItems = try shoppingItems(.deleted, on: shoppingList)
        let deleted = Set(deletedItems.map(\.id))
        let restorable = whereFrom.keys.filter { deleted.contains($0) }
        let back = deletedItems.filter { whereFrom[$0.id] != nil }
        let again =
            ShoppingRules.readded(back.filter { whereFrom[$0.id] == .active }, active: try shoppingItems(.active, on: shoppingList))
            + ShoppingRules.readded(back.filter { whereFrom[$0.id] == .restock }, active: try shoppingItems(.restock, on: shoppingList))
        guard again.isEmpty else {
            throw HouseholdError.refuse(.undoWouldDuplicate, ["names": JSONValue(again), "count": JSONValue(again.count)])
        }
        guard !restorable.isEmpty else {
            try store.setMeta(key, .text(""))
            throw HouseholdError.refuse(.nothingToUndo)
        }
        try store.write(member: memberID, keepingChanges: false) { tx in
            for id in restorable.sorted() { try tx.put(.shoppingItem, id, ["state": .text((whereFrom[id] ?? .active).rawValue)]) }
        }
        try store.setMeta(key, .text(""))
        let restored = Set(restorable)
        return try (shoppingItems(.active, on: shoppingList) + shoppingItems(.restock, on: shoppingList)).filter { restored.contains($0.id) }
    }
}

#if DEBUG
extension Household {
    /// The "next" test release's note (TwoReleasesTests): its row id.
    public func addNote(_ title: String) throws -> String {
        let id = RowIDRules.newRowID()
        let title = try Validation.name(title, what: "title", max: 200)
        try store.write(member: memberID) { tx in
            _ = try tx.put(.note, id, ["title": .text(title), "done": .bool(false), "deleted": .bool(false)])
        }
        return id
    }

    /// The "next" test release's brand of the active item named `name`.
    public func setBrand(item name: String, _ brand: String) throws {
        guard let item = try shoppingItems(.active).first(where: { $0.name.lowercased() == name.lowercased() }) else {
            throw HouseholdError.refuse(.notFound, ["name": .string(name)])
        }
        try store.write(member: memberID) { tx in _ = try tx.put(.shoppingItem, item.id, ["brand": .text(brand)]) }
    }

    /// The "next" test release's methods, which this release lacks (Tests/web_phones.py).
    static let nextMethods: [APIMethod] = [
        .write("next.note.add", for: APIMethod.everyone) { a, h in try h.addNote(a.string("title")) },
        .write("next.shop.brand", for: APIMethod.everyone) { a, h in
            try h.setBrand(item: a.string("name"), a.string("brand"))
            return true
        },
    ]
}
#endif
