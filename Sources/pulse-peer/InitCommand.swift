import ArgumentParser
import PeerSync

struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a new household on this machine.",
        discussion: """
            Creates the household database in the home directory, with this machine's identity key.
            Without names: "\(Household.defaultName)" with members \(Household.defaultMembers.joined(separator: " and ")).
            This machine belongs to the first member listed. Refuses, changing nothing, if the home
            directory already holds a household.
            Example: pulse-peer init --household "The Smiths" --member Anna --member Tom
            """
    )

    @OptionGroup var options: HomeOptions

    @Option(name: .long, help: "The household's name.")
    var household: String?

    @Option(name: .long, help: "A member of the household (repeat for each; the first is this machine's member).")
    var member: [String] = []

    func run() throws {
        let household: Household
        do {
            household = try Household.create(options.resolved, name: self.household, members: member)
        } catch {
            throw CLIError(error)
        }
        print(say("cli.init.created", ["id": .string(household.householdID), "path": .string(household.home.path)]))
        print(say("cli.init.this_machine", ["id": .string(household.identity.shortID)]))
        AgentControl.notifyChanged(home: options.resolved) // an agent already welcoming here takes it up
    }
}
