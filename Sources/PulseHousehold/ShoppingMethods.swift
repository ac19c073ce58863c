import FoundationEssentials
import PulseModel

/// The shopping list's API methods (docs/API.md). Every item method takes an optional `list`:
/// a list's name (any case) or id; absent, "" or the first list's name in any language: the
/// household's first list.
extension Household {
    static let shoppingMethods: [APIMethod] = [
        // `order`: `added` (the default) or `shop` (the walking order learned from check-offs).
        .read("shop.list", for: APIMethod.everyone) { a, h in
            let list = try h.resolveShoppingList(a.optional("list"))
            switch try a.optional("order") ?? "added" {
            case "added": return try h.shoppingItems(shoppingPool(a), on: list)
            case "shop": return try h.shoppingItems(inWalkingOrder: shoppingPool(a), on: list)
            case let other: throw HouseholdError.refuse(.invalidOrder, ["value": .string(String(other.prefix(40)))])
            }
        },
        .write("shop.add", for: APIMethod.everyone) { a, h in
            // Each item says whether it came back from the restock pool (the page tells so).
            // With `ids` (a phone's queued addition): those ids, once (see addShoppingItems(_:ids:)).
            // Each name is read as rapid entry reads a line ("2 milk": ShoppingEntry), unless `exact`;
            // `quantity` and `note`, when given, go with every name.
            let entries = try shoppingEntries(a)
            let list = try h.resolveShoppingList(a.optional("list"))
            let addition =
                a["ids"] == nil
                ? try h.addOrRestockShoppingItems(entries, on: list) : try h.addShoppingItems(entries, ids: a.strings("ids"), on: list)
            // `already`: the name was on the list (any case): that item, nothing added.
            let restocked = Set(addition.restocked), already = Set(addition.already)
            return JSONValue.array(
                try addition.items.map { item in
                    guard case var .object(fields) = try JSONValue.from(item) else { return try .from(item) }
                    fields["restocked"] = .bool(restocked.contains(item.id))
                    fields["already"] = .bool(already.contains(item.id))
                    return .object(fields)
                })
        },
        .write("shop.check", for: APIMethod.everyone) { a, h in
            try h.checkShoppingItem(a.string("item"), once: a.flag("once"), on: h.resolveShoppingList(a.optional("list")))
        },
        .write("shop.restock", for: APIMethod.everyone) { a, h in
            try h.restockShoppingItem(a.string("item"), once: a.flag("once"), on: h.resolveShoppingList(a.optional("list")))
        },
        // `position`: 1 = first, in the list in the shop's order (a person's correction of it).
        .write("shop.move", for: APIMethod.everyone) { a, h in
            try h.moveShoppingItemInWalkingOrder(a.string("item"), to: a.integer("position"), on: h.resolveShoppingList(a.optional("list")))
        },
        .write("shop.rename", for: APIMethod.everyone) { a, h in
            try h.renameShoppingItem(a.string("item"), to: a.string("name"), on: h.resolveShoppingList(a.optional("list")))
        },
        // `quantity`, `note`: a text sets it, "" or null clears it, absent leaves it.
        .write("shop.edit", for: APIMethod.everyone) { a, h in
            // `was`: what the editor saw ({quantity, note}, each null for none): a phone's queued edit.
            let was = try a.object("was")
            return try h.editShoppingItem(
                a.string("item"),
                ShoppingItemEdit(
                    quantity: try a.edit("quantity"), note: try a.edit("note"), wasQuantity: try was?.edit("quantity"),
                    wasNote: try was?.edit("note")),
                on: h.resolveShoppingList(a.optional("list")))
        },
        .write("shop.delete", for: APIMethod.everyone) { a, h in try h.deleteShoppingItem(a.string("item"), on: h.resolveShoppingList(a.optional("list"))) },
        .write("shop.undelete", for: APIMethod.everyone) { a, h in try h.undeleteShoppingItem(a.string("item"), to: shoppingPool(a)) },
        .write("shop.clear", for: APIMethod.everyone) { a, h in try h.clearShoppingList(on: h.resolveShoppingList(a.optional("list"))) },
        .write("shop.undo", for: APIMethod.everyone) { a, h in try h.undoClearShoppingList(on: h.resolveShoppingList(a.optional("list"))) },
        // `to`: the list the item goes to (absent or "": the first).
        .write("shop.transfer", for: APIMethod.everyone) { a, h in
            try h.moveShoppingItem(a.string("item"), on: h.resolveShoppingList(a.optional("list")), toList: a.optional("to"))
        },
        // The household's lists, the first first (`id` and `name` null: named in the reader's language).
        .read("shop.lists", for: APIMethod.everyone) { _, h in try h.shoppingLists() },
        .write("shop.lists.add", for: APIMethod.everyone) { a, h in try h.addShoppingList(a.string("name")) },
        .write("shop.lists.rename", for: APIMethod.everyone) { a, h in try h.renameShoppingList(a.string("list"), to: a.string("name")) },
        // `items`: `move` (to `to`, absent: the first list) or `delete`; needed when the list holds items.
        .write("shop.lists.delete", for: APIMethod.everyone) { a, h in
            let items: String? = try a.optional("items")
            let choice = try items.map { word in
                guard let choice = ShoppingListItemsChoice(rawValue: word) else {
                    throw HouseholdError.refuse(.invalidChoice, ["key": "items", "value": .string(String(word.prefix(40)))])
                }
                return choice
            }
            return try h.deleteShoppingList(a.string("list"), items: choice, to: a.optional("to"))
        },
    ]

    /// `names`, each read as a line of rapid entry unless `exact`, with `quantity` and `note`.
    private static func shoppingEntries(_ a: APIArguments) throws -> [ShoppingEntry] {
        let quantity: String? = try a.optional("quantity"), note: String? = try a.optional("note")
        let exact = a.flag("exact")
        return try a.strings("names").map { name in
            var entry = exact ? ShoppingEntry(name: name) : ShoppingEntry.parse(name)
            if let quantity { entry.quantity = quantity }
            if let note { entry.note = note }
            return entry
        }
    }

    /// `pool`: `active` (the default) or `restock`.
    private static func shoppingPool(_ a: APIArguments) throws -> ShoppingItem.State {
        let pool = try a.optional("pool") ?? "active"
        guard let state = ShoppingItem.State(rawValue: pool), state != .deleted else {
            throw HouseholdError.refuse(.invalidPool, ["value": .string(pool)])
        }
        return state
    }
}
