import ArgumentParser
import FoundationEssentials
import PeerSync

struct Shop: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The shopping list.",
        discussion: """
            Examples:
              pulse-peer shop add Milk Eggs Bread      add (a name in the restock pool comes back from it)
              pulse-peer shop check Milk               bought: to the restock pool
              pulse-peer shop list --restock           the restock pool, most recently bought first
              pulse-peer shop restock Milk             needed again
              pulse-peer shop clear; pulse-peer shop undo
            An item is named by its number in the list, its name, or the start of its id.
            """,
        subcommands: [Add.self, List.self, Rename.self, Check.self, Restock.self, Clear.self, Undo.self],
        defaultSubcommand: List.self
    )

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add items. Without names, reads one item per line from standard input until an empty line or EOF.",
            discussion: """
                A name that is in the restock pool (any case) brings that item back instead of adding a second one;
                a name already on the list (any case) adds nothing.
                Example: pulse-peer shop add Milk "Rye bread"
                """)
        @OptionGroup var options: HomeOptions
        @Argument(help: "Item names.") var names: [String] = []
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            var names = self.names
            if names.isEmpty {
                while let line = readLine(), !line.allSatisfy(\.isWhitespace) { names.append(line) }
            }
            let result = try options.write { try $0.addOrRestockShoppingItems(names) }
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
        @Flag(help: "Print JSON.") var json = false

        func run() throws {
            let household = try options.openHousehold()
            let items: [ShoppingItem]
            do { items = try household.shoppingItems(restock ? .restock : .active) } catch { throw CLIError(error) }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
                print(String(decoding: try encoder.encode(items), as: UTF8.self))
                return
            }
            print(say(restock ? "cli.shop.list.restock_heading" : "cli.shop.list.heading", ["count": JSONValue(items.count)]))
            for (index, item) in items.enumerated() { print("\(String(index + 1).leftPadded(3))  \(item.name)") }
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
        static let configuration = CommandConfiguration(abstract: "Undo the last clear.")
        @OptionGroup var options: HomeOptions
        func run() throws {
            let restored = try options.write { try $0.undoClearShoppingList() }
            print(say("cli.shop.restored", ["count": JSONValue(restored.count)]))
        }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
