import FoundationEssentials
import PulseModel
import PulseStore

public struct BacklogCategory: Sendable, Codable, Equatable {
    public let id: String
    public let title: String
    public let position: Int64
    /// Deleted on some machine, but shown because it still holds items added concurrently.
    public let keptForItems: Bool
    public var items: [BacklogItem]
}

public struct BacklogItem: Sendable, Codable, Equatable {
    public let id: String
    public let title: String
    public let category: String
    /// Its place in the category: the `position` field, else (an item made before items
    /// could be reordered) when it was created.
    public let position: Int64
}

/// Long-term projects, always inside a category.
extension Household {
    /// Categories in order, each with its items. A category deleted elsewhere while an
    /// item was added to it stays visible (marked) as long as it holds live items: no item
    /// ever vanishes silently (docs/ARCHITECTURE.md, "References").
    public func backlog() throws -> [BacklogCategory] {
        var items: [String: [BacklogItem]] = [:]
        for row in try store.rows(.backlogItem, RowQuery(where: [("deleted", .bool(false))], orderedBy: ["created"])) {
            let item = BacklogItem(
                id: row.id, title: row.text("title"), category: row.text("category"),
                position: row["position"].integerValue ?? row.integer("created"))
            items[item.category, default: []].append(item)
        }
        for key in items.keys { items[key]!.sort { ($0.position, $0.id) < ($1.position, $1.id) } }
        var categories: [BacklogCategory] = []
        for row in try store.rows(.backlogCategory, RowQuery(orderedBy: ["position"])) {
            let deleted = row.bool("deleted")
            let held = items.removeValue(forKey: row.id) ?? []
            if deleted && held.isEmpty { continue }
            categories.append(
                BacklogCategory(
                    id: row.id, title: row.text("title"), position: row.integer("position"),
                    keptForItems: deleted, items: held))
        }
        // Items whose category has not arrived yet are kept visible too.
        for (category, held) in items.sorted(by: { $0.key < $1.key }) {
            categories.append(
                BacklogCategory(
                    id: category, title: "(category not yet synced)", position: Int64.max,
                    keptForItems: true, items: held))
        }
        return categories
    }

    public func resolveCategory(_ handle: String) throws -> BacklogCategory {
        try Handles.resolve(handle, in: backlog(), what: "category", list: "backlog", name: \.title, id: \.id)
    }

    @discardableResult
    public func addCategory(_ title: String) throws -> BacklogCategory {
        let title = try Validation.name(title, what: "category_title", max: 200)
        if try backlog().contains(where: { $0.title.lowercased() == title.lowercased() && !$0.keptForItems }) {
            throw HouseholdError.refuse(.duplicate, ["kind": "category", "name": .string(title)])
        }
        let id = RowIDRules.newRowID()
        let position = (try backlog().filter { $0.position != Int64.max }.map(\.position).max() ?? 0) + 1024
        try store.write(member: memberID) {
            try $0.create(.backlogCategory, id, ["title": .text(title), "position": .integer(position), "deleted": .bool(false)])
        }
        return try resolveCategory(id)
    }

    public func renameCategory(_ handle: String, to title: String) throws -> BacklogCategory {
        let title = try Validation.name(title, what: "category_title", max: 200)
        let category = try resolveCategory(handle)
        try store.write(member: memberID) { try $0.put(.backlogCategory, category.id, ["title": .text(title)]) }
        return try resolveCategory(category.id)
    }

    /// Moves a category to `position` (1 = first) by renumbering the order.
    public func moveCategory(_ handle: String, to position: Int) throws -> [BacklogCategory] {
        let category = try resolveCategory(handle)
        var order = try backlog().filter { $0.position != Int64.max }
        guard (1...max(1, order.count)).contains(position) else {
            throw HouseholdError.refuse(.positionOutOfRange, ["max": JSONValue(order.count)])
        }
        order.removeAll { $0.id == category.id }
        order.insert(category, at: position - 1)
        try store.write(member: memberID) { tx in
            for (index, item) in order.enumerated() where item.position != Int64(index + 1) * 1024 {
                try tx.put(.backlogCategory, item.id, ["position": .integer(Int64(index + 1) * 1024)])
            }
        }
        return try backlog()
    }

    /// Removes a category. One that holds items is refused unless `force` (then its
    /// items go too); an empty one goes at once.
    public func removeCategory(_ handle: String, force: Bool = false) throws -> BacklogCategory {
        let category = try resolveCategory(handle)
        guard category.items.isEmpty || force else {
            throw HouseholdError.refuse(.categoryNotEmpty, ["title": .string(category.title), "count": JSONValue(category.items.count)])
        }
        try store.write(member: memberID) { tx in
            for item in category.items { try tx.put(.backlogItem, item.id, ["deleted": .bool(true)]) }
            try tx.put(.backlogCategory, category.id, ["deleted": .bool(true)])
        }
        return category
    }

    @discardableResult
    public func addBacklogItem(_ title: String, to categoryHandle: String) throws -> BacklogItem {
        let title = try Validation.name(title, what: "item_title", max: 200)
        let category = try resolveCategory(categoryHandle)
        let id = RowIDRules.newRowID()
        let created = try store.orderingKey()
        try store.write(member: memberID) { tx in
            try tx.create(
                .backlogItem, id,
                [
                    "title": .text(title), "category": .text(category.id),
                    "created": .integer(created), "position": .integer(created), "deleted": .bool(false),
                ])
        }
        return BacklogItem(id: id, title: title, category: category.id, position: created)
    }

    public func renameBacklogItem(_ handle: String, to newTitle: String) throws -> BacklogItem {
        let title = try Validation.name(newTitle, what: "item_title", max: 200)
        let item = try resolveBacklogItem(handle)
        guard title != item.title else { return item }
        try store.write(member: memberID) { try $0.put(.backlogItem, item.id, ["title": .text(title)]) }
        return try resolveBacklogItem(item.id)
    }

    /// Moves an item to another category (at its end, or at `position`, 1 = first), or to
    /// `position` within its own category when `categoryHandle` is nil (the seed's drag to
    /// reorder). Writes only `category` and the `position`s that change: a rename of the
    /// same item on another machine meanwhile is kept.
    public func moveBacklogItem(_ handle: String, to categoryHandle: String? = nil, position: Int? = nil) throws -> BacklogCategory {
        guard categoryHandle != nil || position != nil else {
            throw HouseholdError.refuse(.missingDestination)
        }
        let item = try resolveBacklogItem(handle)
        let target = try categoryHandle.map { try resolveCategory($0) } ?? resolveCategory(item.category)
        var order = target.items.filter { $0.id != item.id }
        let slot = position ?? order.count + 1
        guard (1...order.count + 1).contains(slot) else {
            throw HouseholdError.refuse(.positionOutOfRangeIn, ["max": JSONValue(order.count + 1), "category": .string(target.title)])
        }
        order.insert(item, at: slot - 1)
        if item.category == target.id && order.map(\.id) == target.items.map(\.id) { return target }
        let positions = BacklogRules.positions(order.map(\.position), movedTo: slot - 1, end: try store.orderingKey())
        try store.write(member: memberID) { tx in
            if item.category != target.id { try tx.put(.backlogItem, item.id, ["category": .text(target.id)]) }
            for (entry, value) in zip(order, positions) where entry.id == item.id || entry.position != value {
                try tx.put(.backlogItem, entry.id, ["position": .integer(value)])
            }
        }
        return try resolveCategory(target.id)
    }

    public func resolveBacklogItem(_ handle: String) throws -> BacklogItem {
        try Handles.resolve(
            handle, in: backlog().flatMap(\.items), what: "backlog_item", list: "backlog",
            name: \.title, id: \.id)
    }

    public func removeBacklogItem(_ handle: String) throws -> BacklogItem {
        let item = try resolveBacklogItem(handle)
        try store.write(member: memberID) { try $0.put(.backlogItem, item.id, ["deleted": .bool(true)]) }
        return item
    }

    /// Undoes ``removeBacklogItem(_:)`` (the page's Undo): the item, by its id, comes back where
    /// it was. Refused, changing nothing, when it is not removed.
    public func restoreBacklogItem(_ id: String) throws -> BacklogItem {
        let row = try store.row(.backlogItem, id)
        guard !row.isEmpty, row["deleted"]?.boolValue == true else {
            throw HouseholdError.refuse(.notFound, ["kind": "backlog_item", "list": "backlog", "handle": .string(id)])
        }
        try store.write(member: memberID) { try $0.put(.backlogItem, id, ["deleted": .bool(false)]) }
        return try resolveBacklogItem(id)
    }

    /// What a family does with a backlog: the item becomes a task (focus rule applies),
    /// in one transaction.
    public func promoteBacklogItem(_ handle: String, assignee: String? = nil, due: String? = nil, force: Bool = false) throws -> HouseholdTask {
        let item = try resolveBacklogItem(handle)
        let assigneeID = try assignee.map { try memberID(named: $0) }
        let dueDate = try due.map { try Validation.date($0).description }
        let active = try tasks().filter { !$0.done }
        guard force || active.count < Self.focusLimit else {
            throw HouseholdError.refuse(
                .focusRule, ["limit": JSONValue(Self.focusLimit), "active": JSONValue(active.count), "titles": JSONValue(active.map(\.title))])
        }
        let id = RowIDRules.newRowID()
        try store.write(member: memberID) { tx in
            try tx.create(.task, id, newTaskFields(item.title, assigneeID: assigneeID, due: dueDate, created: try store.orderingKey()))
            try tx.put(.backlogItem, item.id, ["deleted": .bool(true)])
        }
        return try task(id)
    }
}

/// The backlog rules that need no I/O.
public enum BacklogRules {
    /// Positions for a category's items in their new order, where the item at `moved` was
    /// just put there and the others keep their order. The moved item takes a value
    /// between its neighbours when there is room (one write); otherwise every item is
    /// renumbered 1024 apart (a few writes, rare). `end`: a key after every position so far
    /// (the store's ordering key), for an item moved to the end.
    public static func positions(_ current: [Int64], movedTo moved: Int, end: Int64) -> [Int64] {
        var result = current
        let before: Int64? = moved > 0 ? current[moved - 1] : nil
        let after: Int64? = moved + 1 < current.count ? current[moved + 1] : nil
        switch (before, after) {
        case (nil, nil):
            result[moved] = end
            return result
        case let (before?, nil):
            result[moved] = max(end, before &+ 1024)
            if result[moved] > before { return result }
        case let (nil, after?):
            if after > Int64.min + 2048 {
                result[moved] = after - 1024
                return result
            }
        case let (before?, after?):
            // The midpoint, computed without overflow for any two positions a peer wrote.
            let mid = before / 2 + after / 2 + (before % 2 + after % 2) / 2
            if before < mid && mid < after {
                result[moved] = mid
                return result
            }
        }
        return current.indices.map { Int64($0 + 1) * 1024 }
    }
}

extension Household {
    static let backlogMethods: [APIMethod] = [
        .read("backlog.list", for: APIMethod.everyone) { _, h in try h.backlog() },
        .write("backlog.category.add") { a, h in try h.addCategory(a.string("title")) },
        .write("backlog.category.rename") { a, h in try h.renameCategory(a.string("category"), to: a.string("title")) },
        .write("backlog.category.move") { a, h in
            guard let position = a["position"]?.integerValue, (1...1_000_000).contains(position) else { throw a.missing("position", "position") }
            return try h.moveCategory(a.string("category"), to: Int(position))
        },
        .write("backlog.category.remove") { a, h in try h.removeCategory(a.string("category"), force: a.flag("force")) },
        .write("backlog.add") { a, h in try h.addBacklogItem(a.string("title"), to: a.string("category")) },
        .write("backlog.rename") { a, h in try h.renameBacklogItem(a.string("item"), to: a.string("title")) },
        .write("backlog.move") { a, h in
            var position: Int?
            if let value = a["position"], value != .null {
                guard let number = value.integerValue, (1...1_000_000).contains(number) else {
                    throw HouseholdError.refuse(.wrongType, ["key": "position", "type": "position"])
                }
                position = Int(number)
            }
            return try h.moveBacklogItem(a.string("item"), to: a.optional("category"), position: position)
        },
        .write("backlog.remove") { a, h in try h.removeBacklogItem(a.string("item")) },
        .write("backlog.restore") { a, h in try h.restoreBacklogItem(a.string("item")) },
        .write("backlog.promote") { a, h in
            try h.promoteBacklogItem(a.string("item"), assignee: a.optional("assignee"), due: a.optional("due"), force: a.flag("force"))
        },
    ]
}
