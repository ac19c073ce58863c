import ArgumentParser
import FoundationEssentials
import PeerSync

struct Shop: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "The shopping list.",
        subcommands: [Add.self, List.self, Rename.self, Check.self, Restock.self, Clear.self, Undo.self],
        defaultSubcommand: List.self
    )

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add items. Without names, reads one item per line from standard input until an empty line or EOF.")
        @OptionGroup var options: HomeOptions
        @Argument(help: "Item names.") var names: [String] = []

        func run() throws {
            var names = self.names
            if names.isEmpty {
                while let line = readLine(), !line.allSatisfy(\.isWhitespace) { names.append(line) }
            }
            let added = try options.write { try $0.addShoppingItems(names) }
            print(added.count == 1 ? "Added \(added[0].name)" : "Added \(added.count) items")
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the active items, in order.")
        @OptionGroup var options: HomeOptions
        @Flag(help: "List the restock pool (recently purchased) instead.") var restock = false
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
            print("\(restock ? "Restock pool" : "Shopping") (\(items.count))")
            for (index, item) in items.enumerated() { print("\(String(index + 1).leftPadded(3))  \(item.name)") }
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename an item (by position, name or id prefix).")
        @OptionGroup var options: HomeOptions
        @Argument var item: String
        @Argument var newName: String
        func run() throws {
            let renamed = try options.write { try $0.renameShoppingItem(item, to: newName) }
            print("Renamed to \(renamed.name)")
        }
    }

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Bought: move an item to the restock pool.")
        @OptionGroup var options: HomeOptions
        @Argument var item: String
        func run() throws {
            let moved = try options.write { try $0.checkShoppingItem(item) }
            print("Checked \(moved.name): moved to the restock pool")
        }
    }

    struct Restock: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Needed again: bring an item back from the restock pool.")
        @OptionGroup var options: HomeOptions
        @Argument var item: String
        func run() throws {
            let moved = try options.write { try $0.restockShoppingItem(item) }
            print("\(moved.name) is back on the list")
        }
    }

    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Clear the whole list. `shop undo` restores it (the last clear stays undoable until the next one).")
        @OptionGroup var options: HomeOptions
        func run() throws {
            let cleared = try options.write { try $0.clearShoppingList() }
            print("Cleared \(cleared.count) item\(cleared.count == 1 ? "" : "s") (undo: pulse-peer shop undo)")
        }
    }

    struct Undo: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Undo the last clear.")
        @OptionGroup var options: HomeOptions
        func run() throws {
            let restored = try options.write { try $0.undoClearShoppingList() }
            print("Restored \(restored.count) item\(restored.count == 1 ? "" : "s")")
        }
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
