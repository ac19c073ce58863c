import ArgumentParser
import PeerSync

struct BacklogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backlog",
        abstract: "Long-term projects, kept in categories.",
        discussion: """
            Examples:
              pulse-peer backlog category add Garden
              pulse-peer backlog add Garden "Build a raised bed"
              pulse-peer backlog move "Build a raised bed" --position 1     first in its category
              pulse-peer backlog move 3 --category Kitchen                  to another category
              pulse-peer backlog rename 3 "Paint the fence"
              pulse-peer backlog promote 1 --assignee me                    make it a task
            An item is named by its number in the list, its title, or the start of its id.
            """,
        subcommands: [List.self, Add.self, Rename.self, Move.self, Remove.self, Promote.self, Category.self],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Categories in order, each with its items.")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let backlog = try options.read { try $0.backlog() }
            if json { return try Output.json(backlog) }
            if backlog.isEmpty { print("No categories yet: add one with `pulse-peer backlog category add NAME`.") }
            var number = 0
            for category in backlog {
                print(category.title.uppercased() + (category.keptForItems ? Output.dim("  (deleted elsewhere; kept for its items)") : ""))
                if category.items.isEmpty { print(Output.dim("     (empty)")) }
                for item in category.items {
                    number += 1
                    print("\(String(number).leftPadded(3))  • \(item.title)")
                }
            }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add an item to a category (never outside one).")
        @OptionGroup var options: HomeOptions
        @Argument(help: "The category (position, name or id).") var category: String
        @Argument(help: "The item.") var title: String
        func run() throws {
            let item = try options.write { try $0.addBacklogItem(title, to: category) }
            print("Added \(item.title)")
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Rename an item.", discussion: "Example: pulse-peer backlog rename 2 \"Paint the fence\"")
        @OptionGroup var options: HomeOptions
        @Argument(help: "The item (number, title or id).") var item: String
        @Argument(help: "Its new title.") var title: String
        func run() throws {
            let renamed = try options.write { try $0.renameBacklogItem(item, to: title) }
            print("Renamed to \(renamed.title)")
        }
    }

    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Move an item to another category, or to another place in its own (1 = first).",
            discussion: """
                Examples:
                  pulse-peer backlog move "Paint the fence" --position 1
                  pulse-peer backlog move 4 --category Garden --position 2
                """)
        @OptionGroup var options: HomeOptions
        @Argument(help: "The item (number, title or id).") var item: String
        @Option(help: "The category to move it to (default: its own).") var category: String?
        @Option(help: "Its place in the category, 1 = first (default: the end).") var position: Int?
        func validate() throws {
            if category == nil && position == nil { throw ValidationError("say where to: --category, --position, or both") }
            if let position, position < 1 { throw ValidationError("--position counts from 1 (the first place)") }
        }
        func run() throws {
            let target = try options.write { try $0.moveBacklogItem(item, to: category, position: position) }
            print("\(target.title): " + target.items.map(\.title).joined(separator: ", "))
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an item.")
        @OptionGroup var options: HomeOptions
        @Argument var item: String
        func run() throws {
            let removed = try options.write { try $0.removeBacklogItem(item) }
            print("Removed \(removed.title)")
        }
    }

    struct Promote: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Move an item to the daily tasks (focus rule applies).")
        @OptionGroup var options: HomeOptions
        @Argument var item: String
        @Option(help: "The member it is for.") var assignee: String?
        @Option(help: "Due date: today, tomorrow or YYYY-MM-DD.") var due: String?
        @Flag(help: "Even if it breaks the focus rule.") var force = false
        func run() throws {
            let task = try options.write { try $0.promoteBacklogItem(item, assignee: assignee, due: due, force: force) }
            print("\(task.title) is now a task")
        }
    }

    struct Category: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Manage categories: add, rename, move, remove.",
            subcommands: [CategoryAdd.self, CategoryRename.self, CategoryMove.self, CategoryRemove.self])
    }

    struct CategoryAdd: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Add a category at the end.")
        @OptionGroup var options: HomeOptions
        @Argument var title: String
        func run() throws {
            let category = try options.write { try $0.addCategory(title) }
            print("Added category \(category.title)")
        }
    }

    struct CategoryRename: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rename", abstract: "Rename a category.")
        @OptionGroup var options: HomeOptions
        @Argument var category: String
        @Argument var title: String
        func run() throws {
            let renamed = try options.write { try $0.renameCategory(category, to: title) }
            print("Renamed to \(renamed.title)")
        }
    }

    struct CategoryMove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "move", abstract: "Move a category to a position (1 = first).")
        @OptionGroup var options: HomeOptions
        @Argument var category: String
        @Argument var position: Int
        func run() throws {
            let order = try options.write { try $0.moveCategory(category, to: position) }
            print("Order: " + order.map(\.title).joined(separator: ", "))
        }
    }

    struct CategoryRemove: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "remove", abstract: "Remove a category; one holding items needs --force (its items go too).")
        @OptionGroup var options: HomeOptions
        @Argument var category: String
        @Flag(help: "Also delete the items it holds.") var force = false
        func run() throws {
            let removed = try options.write { try $0.removeCategory(category, force: force) }
            print("Removed category \(removed.title)" + (removed.items.isEmpty ? "" : " and its \(removed.items.count) items"))
        }
    }
}
