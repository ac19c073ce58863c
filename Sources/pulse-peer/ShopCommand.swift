import ArgumentParser
import FoundationEssentials
import PeerSync

struct Shop: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The shopping list.",
        discussion: """
            Examples:
              pulse-peer shop add Milk Eggs Bread      add (a name in the restock pool comes back from it)
              pulse-peer shop add "2 milk" "500 g flour"   with an amount first: 2 × Milk, 500 g of flour
              pulse-peer shop edit Milk --note "the lactose-free one"
              pulse-peer shop delete Eggs; pulse-peer shop undo
              pulse-peer shop check Milk               bought: to the restock pool
              pulse-peer shop list --restock           the restock pool, most recently bought first
              pulse-peer shop restock Milk             needed again
              pulse-peer shop clear; pulse-peer shop undo
              pulse-peer shop lists add Lidl           a second list; then: pulse-peer shop --list Lidl add Butter
              pulse-peer shop transfer Butter Lidl      move an item to another list
            An item is named by its number in the list, its name, or the start of its id. Every command works
            on the household's first list unless --list names another (by name, any case, or the start of its id).
            """,
        subcommands: [
            Add.self, List.self, Rename.self, Edit.self, Check.self, Restock.self, Delete.self, Clear.self, Undo.self, Transfer.self,
            Lists.self, Going.self, Back.self, Trips.self,
        ],
        defaultSubcommand: List.self
    )
    /// `shop --list NAME add …`: the same option as each subcommand's, accepted before its name.
    @OptionGroup var list: ListOption

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add items. Without names, reads one item per line from standard input until an empty line or EOF.",
            discussion: """
                A name that is in the restock pool (any case) brings that item back instead of adding a second one
                (with its last quantity and note, unless new ones are given); a name already on the list (any case) adds nothing.
                A name may start with an amount: "2 milk", "500 g flour", "1,5 l mleka", "3 Dosen Tomaten", "2x eggs";
                a name that merely starts with a digit stays whole ("7up", "100% juice"). --exact takes names as they are.
                Example: pulse-peer shop add Milk "Rye bread" "2 kg potatoes"
                """)
        @OptionGroup var options: HomeOptions
        @OptionGroup var list: ListOption
        @Argument(help: "Item names.") var names: [String] = []
        @Option(help: "The quantity of every item added (\"2\", \"1 kg\").") var quantity: String?
        @Option(help: "A note on every item added (\"the lactose-free one\").") var note: String?
        @Flag(help: "Take the names as they are: no amount read from them.") var exact = false
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            var names = self.names
            if names.isEmpty {
                while let line = readLine(), !line.allSatisfy(\.isWhitespace) { names.append(line) }
            }
            let entries = names.map { name in
                var entry = exact ? ShoppingEntry(name: name) : ShoppingEntry.parse(name)
                if let quantity { entry.quantity = quantity }
                if let note { entry.note = note }
                return entry
            }
            let result = try options.write { try $0.addOrRestockShoppingItems(entries, on: $0.resolveShoppingList(list.list)) }
            if json { return try Output.json(result) }
            let back = result.items.filter { result.restocked.contains($0.id) }
            let onList = result.items.filter { result.already.contains($0.id) }
            let new = result.items.filter { !result.restocked.contains($0.id) && !result.already.contains($0.id) }
            if new.count == 1 {
                print(say("cli.shop.added_one", ["name": .string(new[0].name)]))
            } else if !new.isEmpty {
                print(say("cli.shop.added_many", ["count": JSONValue(new.count)]))
            }
            if !back.isEmpty { print(say("cli.shop.back_from_restock", ["names": JSONValue(back.map(\.name))])) }
            if !onList.isEmpty { print(say("cli.shop.already", ["names": JSONValue(onList.map(\.name))])) }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the active items, in order.")
        @OptionGroup var options: HomeOptions
        @OptionGroup var list: ListOption
        @Flag(help: "List the restock pool (most recently bought first) instead.") var restock = false
        @Option(help: "added (the default): as added; shop: in the shop's walking order, learned from the family's check-offs.")
        var order: Order = .added
        @Flag(help: "Print JSON.") var json = false

        enum Order: String, ExpressibleByArgument, CaseIterable { case added, shop }

        func run() throws {
            let household = try options.openHousehold()
            let items: [ShoppingItem]
            do {
                let state: ShoppingItem.State = restock ? .restock : .active
                let on = try household.resolveShoppingList(list.list)
                items = try order == .shop ? household.shoppingItems(inWalkingOrder: state, on: on) : household.shoppingItems(state, on: on)
            } catch { throw CLIError(error) }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(items), as: UTF8.self))
                return
            }
            let on = try? household.resolveShoppingList(list.list)
            if let on, let named = try? household.shoppingLists().first(where: { $0.id == on }) {
                print(
                    say(
                        restock ? "cli.shop.list.restock_heading_named" : "cli.shop.list.heading_named",
                        ["count": JSONValue(items.count), "name": .string(listName(named))]))
            } else {
                print(say(restock ? "cli.shop.list.restock_heading" : "cli.shop.list.heading", ["count": JSONValue(items.count)]))
            }
            for (index, item) in items.enumerated() { print("\(String(index + 1).leftPadded(3))  \(item.described)") }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set an item's quantity or note (by position, name or id); an empty text clears it.",
            discussion: "Example: pulse-peer shop edit Milk --quantity 2 --note \"the lactose-free one\"; pulse-peer shop edit 1 --note \"\"")
        @OptionGroup var options: HomeOptions
        @OptionGroup var list: ListOption
        @Argument var item: String
        @Option(help: "The quantity (\"2\", \"1 kg\"; \"\" clears it).") var quantity: String?
        @Option(help: "The note (\"\" clears it).") var note: String?
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let edit = ShoppingItemEdit(quantity: quantity.map { Optional($0) }, note: note.map { Optional($0) })
            let edited = try options.write { try $0.editShoppingItem(item, edit, on: $0.resolveShoppingList(list.list)) }
            if json { return try Output.json(edited) }
            print(say("cli.shop.edited", ["item": .string(edited.described)]))
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete one item from the list or the restock pool (by position, name or id). `shop undo` brings it back.")
        @OptionGroup var options: HomeOptions
        @OptionGroup var list: ListOption
        @Argument var item: String
        func run() throws {
            let deleted = try options.write { try $0.deleteShoppingItem(item, remembered: true, on: $0.resolveShoppingList(list.list)) }
            print(say("cli.shop.deleted", ["name": .string(deleted.name)]))
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename an item (by position, name or id).")
        @OptionGroup var options: HomeOptions
        @OptionGroup var list: ListOption
        @Argument var item: String
        @Argument var newName: String
        func run() throws {
            let renamed = try options.write { try $0.renameShoppingItem(item, to: newName, on: $0.resolveShoppingList(list.list)) }
            print(say("cli.shop.renamed", ["name": .string(renamed.name)]))
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Bought: move an item to the restock pool.")
        @OptionGroup var options: HomeOptions
        @OptionGroup var list: ListOption
        @Argument var item: String
        func run() throws {
            let moved = try options.write { try $0.checkShoppingItem(item, on: $0.resolveShoppingList(list.list)) }
            print(say("cli.shop.checked", ["name": .string(moved.name)]))
        }
    }

    struct Restock: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Needed again: bring an item back from the restock pool.")
        @OptionGroup var options: HomeOptions
        @OptionGroup var list: ListOption
        @Argument var item: String
        func run() throws {
            let moved = try options.write { try $0.restockShoppingItem(item, on: $0.resolveShoppingList(list.list)) }
            print(say("cli.shop.restocked", ["name": .string(moved.name)]))
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clear the whole list. `shop undo` restores it (the last clear stays undoable until the next one).")
        @OptionGroup var options: HomeOptions
        @OptionGroup var list: ListOption
        func run() throws {
            let cleared = try options.write { try $0.clearShoppingList(on: $0.resolveShoppingList(list.list)) }
            print(say("cli.shop.cleared", ["count": JSONValue(cleared.count)]))
        }
    }

    struct Undo: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Undo the last clear, or the last item deleted, on this computer.")
        @OptionGroup var options: HomeOptions
        @OptionGroup var list: ListOption
        func run() throws {
            let restored = try options.write { try $0.undoClearShoppingList(on: $0.resolveShoppingList(list.list)) }
            print(say("cli.shop.restored", ["count": JSONValue(restored.count)]))
        }
    }
}

/// `--list`: the list a command works on (absent: the household's first).
struct ListOption: ParsableArguments {
    @Option(name: .long, help: "The list: its name (any case) or the start of its id; absent: the household's first list.")
    var list: String?
}

extension Shop {
    struct Transfer: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move an item (on the list or in its restock pool) to another list.",
            discussion: "Example: pulse-peer shop transfer Butter Lidl; pulse-peer shop --list Lidl transfer Butter \"\" (back to the first list)")
        @OptionGroup var options: HomeOptions
        @OptionGroup var list: ListOption
        @Argument(help: "The item: its number, name or the start of its id.") var item: String
        @Argument(help: "The list it goes to (\"\": the first list).") var destination: String
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let moved = try options.write { h in
                let item = try h.moveShoppingItem(item, on: h.resolveShoppingList(list.list), toList: destination)
                return (item, try h.shoppingLists().first { $0.id == item.list })
            }
            if json { return try Output.json(moved.0) }
            print(say("cli.shop.transferred", ["name": .string(moved.0.name), "list": .string(moved.1.map(listName) ?? destination)]))
        }
    }

    struct Lists: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The household's shopping lists: list them, add, rename or delete one.",
            discussion: """
                Examples:
                  pulse-peer shop lists                      every list, with its counts
                  pulse-peer shop lists add Lidl
                  pulse-peer shop lists rename Lidl "Lidl on Main Street"
                  pulse-peer shop lists delete Lidl --move-items-to ""   its items to the first list
                """,
            subcommands: [Show.self, AddList.self, RenameList.self, DeleteList.self], defaultSubcommand: Show.self)

        struct Show: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "show", abstract: "Every list, the first first, with its counts.")
            @OptionGroup var options: HomeOptions
            @Flag(help: "Print JSON.") var json = false
            func run() throws {
                let lists: [ShoppingList]
                do { lists = try options.openHousehold().shoppingLists() } catch { throw CLIError(error) }
                if json { return try Output.json(lists) }
                for list in lists {
                    print(say("cli.shop.lists.line", ["name": .string(listName(list)), "active": JSONValue(list.active), "restock": JSONValue(list.restock)]))
                }
            }
        }

        struct AddList: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a list.")
            @OptionGroup var options: HomeOptions
            @Argument var name: String
            @Flag(help: "Print JSON.") var json = false
            func run() throws {
                let list = try options.write { try $0.addShoppingList(name) }
                if json { return try Output.json(list) }
                print(say("cli.shop.lists.added", ["name": .string(listName(list))]))
            }
        }

        struct RenameList: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "rename", abstract: "Rename a list (not the first).")
            @OptionGroup var options: HomeOptions
            @Argument var list: String
            @Argument var newName: String
            func run() throws {
                let renamed = try options.write { try $0.renameShoppingList(list, to: newName) }
                print(say("cli.shop.lists.renamed", ["name": .string(listName(renamed))]))
            }
        }

        struct DeleteList: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "delete", abstract: "Delete a list (not the first); a list holding items needs --move-items-to or --delete-items.")
            @OptionGroup var options: HomeOptions
            @Argument var list: String
            @Option(help: "Move its items (and its restock pool) to this list (\"\": the first).") var moveItemsTo: String?
            @Flag(help: "Delete its items.") var deleteItems = false
            func validate() throws {
                if moveItemsTo != nil && deleteItems { throw ValidationError("--move-items-to and --delete-items exclude each other") }
            }
            func run() throws {
                let choice: ShoppingListItemsChoice? = deleteItems ? .delete : moveItemsTo != nil ? .move : nil
                let deleted = try options.write { try $0.deleteShoppingList(list, items: choice, to: moveItemsTo) }
                let count = deleted.active + deleted.restock
                print(
                    say(
                        "cli.shop.lists.deleted",
                        [
                            "name": .string(listName(deleted)), "count": JSONValue(count),
                            "what": .string(count == 0 ? "empty" : deleteItems ? "deleted" : "moved"),
                        ]))
            }
        }
    }
}

extension Shop {
    struct Going: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "I'm going shopping: everyone else is told at once, and the list says so until you are back.",
            discussion: """
                The trip ends with `shop back`, when the list is done (empty after a check-off), or after two hours.
                Example: pulse-peer shop --list Lidl going --shop "Lidl on Main Street"
                """)
        @OptionGroup var options: HomeOptions
        @OptionGroup var list: ListOption
        @Option(help: "The shop (optional).") var shop: String?
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let trip = try options.write { try $0.startShoppingTrip(on: $0.resolveShoppingList(list.list), shop: shop) }
            if json { return try Output.json(trip) }
            print(say("cli.shop.going", ["until": .string(Output.clock(milliseconds: HybridTimestamp(rawValue: trip.until).milliseconds))]))
        }
    }

    struct Back: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Back from the shops: your trip for the list ends.")
        @OptionGroup var options: HomeOptions
        @OptionGroup var list: ListOption
        func run() throws {
            _ = try options.write { try $0.endShoppingTrip(on: $0.resolveShoppingList(list.list)) }
            print(say("cli.shop.back"))
        }
    }

    struct Trips: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Who is out shopping now, for which list.")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let trips: [ShoppingTrip]
            do { trips = try options.openHousehold().shoppingTrips() } catch { throw CLIError(error) }
            if json { return try Output.json(trips) }
            if trips.isEmpty { print(say("cli.shop.trips.none")) }
            for trip in trips {
                print(
                    say(
                        "cli.shop.trips.line",
                        [
                            "name": .string(trip.memberName ?? say("notify.someone")), "list": .string(trip.listName ?? say("shop.first_list")),
                            "shop": trip.shop.map { .string($0) } ?? .null, "where": .string(trip.shop == nil ? "none" : "shop"),
                            "since": .string(Output.clock(milliseconds: HybridTimestamp(rawValue: trip.started).milliseconds)),
                        ]))
            }
        }
    }
}

/// A list's name as this reader reads it (the first list's, in their language).
func listName(_ list: ShoppingList) -> String { list.name ?? say("shop.first_list") }

extension ShoppingItem {
    /// "Milk (2) — the lactose-free one": the name, then the quantity and the note it has.
    var described: String {
        var line = name
        if let quantity { line += " (\(quantity))" }
        if let note { line += " — \(note)" }
        return line
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
