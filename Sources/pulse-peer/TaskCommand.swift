import ArgumentParser
import PeerSync

struct TaskCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "task",
        abstract: "Daily tasks, with the focus rule: at most 3 active at once.",
        subcommands: [List.self, Add.self, Done.self, Reopen.self, Delete.self],
        defaultSubcommand: List.self
    )

    static func show(_ tasks: [HouseholdTask]) {
        let today = Days.today().description
        let active = tasks.filter { !$0.done }, completed = tasks.filter(\.done)
        print("Tasks: \(active.count) active (focus rule: at most \(Household.focusLimit))")
        if active.count > Household.focusLimit {
            print("  \(active.count) are active, more than the focus rule's \(Household.focusLimit) "
                + "(tasks added on different machines met, or recurring tasks came due); nothing was lost.")
        }
        for (index, task) in tasks.enumerated() {
            if index == active.count && !completed.isEmpty { print("Completed") }
            var line = "\(String(index + 1).leftPadded(3))  \(task.done ? "[x]" : "[ ]") \(task.title)"
            if let due = task.due { line += "  " + (due == today ? Output.orange("due today") : "due \(due)") }
            if let assignee = task.assignee { line += "  " + Output.pill(assignee) }
            if task.template != nil { line += Output.dim("  (recurring)") }
            print(task.done ? Output.dim(line) : line)
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Active tasks first, then completed ones.")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let household = try options.openHousehold()
            let tasks: [HouseholdTask]
            do {
                // Today's recurring tasks are made here when missing, unless another process
                // is writing: a listing never waits for a writer (the agent makes them too).
                if try household.generateRecurringTasks(onlyIfIdle: true) > 0 { AgentControl.notifyChanged(home: options.resolved) }
                tasks = try household.tasks()
            } catch {
                throw CLIError(error)
            }
            if json { try Output.json(tasks) } else { TaskCommand.show(tasks) }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a task (refused when 3 are already active, unless --force).")
        @OptionGroup var options: HomeOptions
        @Argument(help: "The task.") var title: String
        @Option(help: "The member it is for.") var assignee: String?
        @Option(help: "Due date: today, tomorrow or YYYY-MM-DD.") var due: String?
        @Flag(help: "Add it even if it breaks the focus rule.") var force = false
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let task = try options.write { try $0.addTask(title, assignee: assignee, due: due, force: force) }
            if json { try Output.json(task) } else { print("Added task \(task.title)") }
        }
    }

    struct Done: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Complete a task (by position, title or id prefix).")
        @OptionGroup var options: HomeOptions
        @Argument var task: String
        func run() throws {
            let done = try options.write { try $0.completeTask(task) }
            print("Done: \(done.title)")
        }
    }

    struct Reopen: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make a completed task active again (focus rule applies).")
        @OptionGroup var options: HomeOptions
        @Argument var task: String
        @Flag(help: "Reopen it even if it breaks the focus rule.") var force = false
        func run() throws {
            let reopened = try options.write { try $0.reopenTask(task, force: force) }
            print("Reopened: \(reopened.title)")
        }
    }

    struct Delete: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Delete a task.")
        @OptionGroup var options: HomeOptions
        @Argument var task: String
        func run() throws {
            let deleted = try options.write { try $0.deleteTask(task) }
            print("Deleted: \(deleted.title)")
        }
    }
}
