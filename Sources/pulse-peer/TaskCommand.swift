import ArgumentParser
import PeerSync

struct TaskCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "task",
        abstract: "Daily tasks, with the focus rule: at most 3 active at once.",
        discussion: """
            Examples:
              pulse-peer task                                   list (active first)
              pulse-peer task --mine                            what is assigned to me
              pulse-peer task add "Water plants" --assignee me --due today
              pulse-peer task edit 1 --title "Water the plants" --no-due
              pulse-peer task done 1
            A task is named by its number in the list, its title, or the start of its id.
            """,
        subcommands: [List.self, Add.self, Edit.self, Done.self, Reopen.self, Delete.self],
        defaultSubcommand: List.self
    )

    static func show(_ tasks: [HouseholdTask]) {
        let today = Days.today().description
        let active = tasks.filter { !$0.done }, completed = tasks.filter(\.done)
        let counts: [String: JSONValue] = ["active": JSONValue(active.count), "limit": JSONValue(Household.focusLimit)]
        print(say("cli.task.heading", counts))
        if active.count > Household.focusLimit { print("  " + say("cli.task.over_limit", counts)) }
        for (index, task) in tasks.enumerated() {
            if index == active.count && !completed.isEmpty { print(say("cli.task.completed_heading")) }
            var line = "\(String(index + 1).leftPadded(3))  \(task.done ? "[x]" : "[ ]") \(task.title)"
            if let due = task.due {
                line += "  " + (due == today ? Output.orange(say("cli.task.due_today")) : say("cli.task.due", ["date": .string(due)]))
            }
            if let assignee = task.assignee { line += "  " + Output.pill(assignee) }
            if task.template != nil { line += Output.dim("  " + say("cli.task.recurring")) }
            print(task.done ? Output.dim(line) : line)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Active tasks first, then completed ones.", discussion: "Example: pulse-peer task list --mine")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Only the tasks assigned to this machine's member (\"Assigned to Me\").") var mine = false
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let household = try options.openHousehold()
            let tasks: [HouseholdTask]
            do {
                // Today's recurring tasks are made here when missing, unless another process
                // is writing: a listing never waits for a writer (the agent makes them too).
                if try household.generateRecurringTasks(onlyIfIdle: true) > 0 { AgentControl.notifyChanged(home: options.resolved) }
                tasks = try household.tasks(mine: mine)
            } catch {
                throw CLIError(error)
            }
            if json { try Output.json(tasks) } else { TaskCommand.show(tasks) }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Add a task (refused when 3 are already active, unless --force).",
            discussion: "Example: pulse-peer task add \"Take out the bins\" --assignee Tom --due tomorrow")
        @OptionGroup var options: HomeOptions
        @Argument(help: "The task.") var title: String
        @Option(help: "The member it is for (\"me\": this machine's member).") var assignee: String?
        @Option(help: "Due date: today, tomorrow or YYYY-MM-DD.") var due: String?
        @Flag(help: "Add it even if it breaks the focus rule.") var force = false
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let task = try options.write { try $0.addTask(title, assignee: assignee, due: due, force: force) }
            if json { try Output.json(task) } else { print(say("cli.task.added", ["title": .string(task.title)])) }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Change a task's title, assignee or due date.",
            discussion: """
                Only what you name changes; the same task edited on another machine keeps that machine's
                other changes. Examples:
                  pulse-peer task edit 2 --assignee me --due 2026-12-24
                  pulse-peer task edit "Water plants" --no-assignee --no-due
                """)
        @OptionGroup var options: HomeOptions
        @Argument(help: "The task (number, title or id).") var task: String
        @Option(help: "A new title.") var title: String?
        @Option(help: "The member it is for (\"me\": this machine's member).") var assignee: String?
        @Flag(help: "Assigned to nobody.") var noAssignee = false
        @Option(help: "Due date: today, tomorrow or YYYY-MM-DD.") var due: String?
        @Flag(help: "No due date.") var noDue = false
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            if assignee != nil && noAssignee { throw ValidationError(say("cli.task.edit.assignee_both")) }
            if due != nil && noDue { throw ValidationError(say("cli.task.edit.due_both")) }
            if title == nil && assignee == nil && !noAssignee && due == nil && !noDue {
                throw ValidationError(say("cli.task.edit.nothing"))
            }
        }

        func run() throws {
            let edit = Household.TaskEdit(
                title: title, assignee: noAssignee ? .some(nil) : assignee.map { .some($0) },
                due: noDue ? .some(nil) : due.map { .some($0) })
            let edited = try options.write { try $0.editTask(task, edit) }
            if json { return try Output.json(edited) }
            let params: [String: JSONValue] = [
                "title": .string(edited.title), "assigned": edited.assignee == nil ? "no" : "yes", "assignee": .string(edited.assignee ?? ""),
                "dated": edited.due == nil ? "no" : "yes", "due": .string(edited.due ?? ""),
            ]
            print(say("cli.task.edited", params))
        }
    }

    struct Done: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Complete a task (by position, title or id).")
        @OptionGroup var options: HomeOptions
        @Argument var task: String
        func run() throws {
            let done = try options.write { try $0.completeTask(task) }
            print(say("cli.task.done", ["title": .string(done.title)]))
        }
    }

    struct Reopen: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a completed task active again (focus rule applies).")
        @OptionGroup var options: HomeOptions
        @Argument var task: String
        @Flag(help: "Reopen it even if it breaks the focus rule.") var force = false
        func run() throws {
            let reopened = try options.write { try $0.reopenTask(task, force: force) }
            print(say("cli.task.reopened", ["title": .string(reopened.title)]))
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a task.")
        @OptionGroup var options: HomeOptions
        @Argument var task: String
        func run() throws {
            let deleted = try options.write { try $0.deleteTask(task) }
            print(say("cli.task.deleted", ["title": .string(deleted.title)]))
        }
    }
}
