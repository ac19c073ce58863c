import ArgumentParser
import PeerSync

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what this machine holds of the household; --json prints all of it canonically.",
        discussion: """
        Without --json: a summary for people (the household, its members, how many items, tasks and projects).
        With --json: every replicated row with its fields, keys and rows sorted; two machines that have
        converged print byte-identical output (compare them with diff).
        Example: pulse-peer export --json > household-backup.json
        """
    )

    @OptionGroup var options: HomeOptions

    @Flag(name: .long, help: "Print the whole household as canonical JSON.")
    var json = false

    func run() throws {
        let household = try options.openHousehold()
        do {
            if json {
                print(try household.canonicalExport(), terminator: "")
                return
            }
            let tasks = try household.tasks()
            let backlog = try household.backlog()
            print(try household.householdName())
            print("  members: \(try household.members().map(\.name).joined(separator: ", "))")
            print("  shopping: \(try household.shoppingItems(.active).count) on the list, "
                + "\(try household.shoppingItems(.restock).count) in the restock pool")
            print("  tasks: \(tasks.filter { !$0.done }.count) active, \(tasks.filter(\.done).count) done, "
                + "\(try household.recurringTemplates().count) recurring")
            print("  backlog: \(backlog.count) categories, \(backlog.reduce(0) { $0 + $1.items.count }) items")
            print("Everything, canonically: pulse-peer export --json")
        } catch {
            throw CLIError(error)
        }
    }
}
