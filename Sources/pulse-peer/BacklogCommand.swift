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
            if backlog.isEmpty { print(say("cli.backlog.empty")) }
            var number = 0
            for category in backlog {
                print(category.title.uppercased() + (category.keptForItems ? Output.dim("  " + say("cli.backlog.kept_for_items")) : ""))
                if category.items.isEmpty { print(Output.dim("     " + say("cli.backlog.category_empty"))) }
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
            print(say("cli.backlog.added", ["title": .string(item.title)]))
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
            print(say("cli.backlog.renamed", ["title": .string(renamed.title)]))
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
            if category == nil && position == nil { throw ValidationError(say("cli.backlog.move.where")) }
            if let position, position < 1 { throw ValidationError(say("cli.backlog.move.position")) }
        }
        func run() throws {
            let target = try options.write { try $0.moveBacklogItem(item, to: category, position: position) }
            print(say("cli.backlog.moved", ["category": .string(target.title), "titles": JSONValue(target.items.map(\.title))]))
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove an item.")
        @OptionGroup var options: HomeOptions
        @Argument var item: String
        func run() throws {
            let removed = try options.write { try $0.removeBacklogItem(item) }
            print(say("cli.backlog.removed", ["title": .string(removed.title)]))
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
            print(say("cli.backlog.promoted", ["title": .string(task.title)]))
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
            print(say("cli.backlog.category.added", ["title": .string(category.title)]))
        }
    }

    struct CategoryRename: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rename", abstract: "Rename a category.")
        @OptionGroup var options: HomeOptions
        @Argument var category: String
        @Argument var title: String
        func run() throws {
            let renamed = try options.write { try $0.renameCategory(category, to: title) }
            print(say("cli.backlog.category.renamed", ["title": .string(renamed.title)]))
        }
    }

    struct CategoryMove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "move", abstract: "Move a category to a position (1 = first).")
        @OptionGroup var options: HomeOptions
        @Argument var category: String
        @Argument var position: Int
        func run() throws {
            let order = try options.write { try $0.moveCategory(category, to: position) }
            print(say("cli.backlog.category.order", ["titles": JSONValue(order.map(\.title))]))
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
            let params: [String: JSONValue] = ["title": .string(removed.title), "count": JSONValue(removed.items.count)]
            print(say(removed.items.isEmpty ? "cli.backlog.category.removed" : "cli.backlog.category.removed_with_items", params))
        }
    }
}
