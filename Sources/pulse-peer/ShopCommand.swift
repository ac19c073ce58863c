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
            An item is named by its number in the list, its name, or the start of its id.
            """,
        subcommands: [Add.self, List.self, Rename.self, Edit.self, Check.self, Restock.self, Delete.self, Clear.self, Undo.self],
        defaultSubcommand: List.self
    )

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
            let result = try options.write { try $0.addOrRestockShoppingItems(entries) }
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
                items = try order == .shop ? household.shoppingItems(inWalkingOrder: state) : household.shoppingItems(state)
            } catch { throw CLIError(error) }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(items), as: UTF8.self))
                return
            }
            print(say(restock ? "cli.shop.list.restock_heading" : "cli.shop.list.heading", ["count": JSONValue(items.count)]))
            for (index, item) in items.enumerated() { print("\(String(index + 1).leftPadded(3))  \(item.described)") }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set an item's quantity or note (by position, name or id); an empty text clears it.",
            discussion: "Example: pulse-peer shop edit Milk --quantity 2 --note \"the lactose-free one\"; pulse-peer shop edit 1 --note \"\"")
        @OptionGroup var options: HomeOptions
        @Argument var item: String
        @Option(help: "The quantity (\"2\", \"1 kg\"; \"\" clears it).") var quantity: String?
        @Option(help: "The note (\"\" clears it).") var note: String?
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let edit = ShoppingItemEdit(quantity: quantity.map { Optional($0) }, note: note.map { Optional($0) })
            let edited = try options.write { try $0.editShoppingItem(item, edit) }
            if json { return try Output.json(edited) }
            print(say("cli.shop.edited", ["item": .string(edited.described)]))
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Delete one item from the list or the restock pool (by position, name or id). `shop undo` brings it back.")
        @OptionGroup var options: HomeOptions
        @Argument var item: String
        func run() throws {
            let deleted = try options.write { try $0.deleteShoppingItem(item, remembered: true) }
            print(say("cli.shop.deleted", ["name": .string(deleted.name)]))
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename an item (by position, name or id).")
        @OptionGroup var options: HomeOptions
        @Argument var item: String
        @Argument var newName: String
        func run() throws {
            let renamed = try options.write { try $0.renameShoppingItem(item, to: newName) }
            print(say("cli.shop.renamed", ["name": .string(renamed.name)]))
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Bought: move an item to the restock pool.")
        @OptionGroup var options: HomeOptions
        @Argument var item: String
        func run() throws {
            let moved = try options.write { try $0.checkShoppingItem(item) }
            print(say("cli.shop.checked", ["name": .string(moved.name)]))
        }
    }

    struct Restock: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Needed again: bring an item back from the restock pool.")
        @OptionGroup var options: HomeOptions
        @Argument var item: String
        func run() throws {
            let moved = try options.write { try $0.restockShoppingItem(item) }
            print(say("cli.shop.restocked", ["name": .string(moved.name)]))
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clear the whole list. `shop undo` restores it (the last clear stays undoable until the next one).")
        @OptionGroup var options: HomeOptions
        func run() throws {
            let cleared = try options.write { try $0.clearShoppingList() }
            print(say("cli.shop.cleared", ["count": JSONValue(cleared.count)]))
        }
    }

    struct Undo: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Undo the last clear, or the last item deleted, on this computer.")
        @OptionGroup var options: HomeOptions
        func run() throws {
            let restored = try options.write { try $0.undoClearShoppingList() }
            print(say("cli.shop.restored", ["count": JSONValue(restored.count)]))
        }
    }
}

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
