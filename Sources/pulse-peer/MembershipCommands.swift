import ArgumentParser
import PeerSync

struct Invite: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a code that lets another machine join this household.",
        discussion: "The code carries the household secret: give it only to a machine of the family, never post it."
    )

    @OptionGroup var options: HomeOptions

    @Option(help: "The member the new machine belongs to (default: this machine's member).")
    var member: String?

    func run() throws {
        let household = try options.openHousehold()
        do {
            print(try household.invitation(forMember: member).code)
        } catch {
            throw CLIError(error)
        }
    }
}

struct Join: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make this machine a replica of a household, with a code from `pulse-peer invite`.",
        discussion: "Then run the agent with a peer of the household (`pulse-peer run --peer HOST:PORT`) to receive it."
    )

    @OptionGroup var options: HomeOptions

    @Argument(help: "The invitation code.")
    var code: String

    func run() throws {
        do {
            let invitation = try Invitation(code: code)
            let household = try Household.join(options.resolved, invitation: invitation)
            print("Joined household \(household.householdID) in \(household.home.path)")
            print("This machine: \(household.identity.shortID)")
        } catch {
            throw CLIError(error)
        }
    }
}
