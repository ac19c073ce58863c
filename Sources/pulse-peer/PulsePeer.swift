import ArgumentParser
import FoundationEssentials
import PeerSync

@main
struct PulsePeer: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pulse-peer",
        abstract: "House Pulse peer: a household kept in step between family computers, with no server.",
        subcommands: [Init.self, Invite.self, Join.self, Devices.self, Run.self, Status.self,
                      Shop.self, TaskCommand.self, BacklogCommand.self, RecurringCommand.self,
                      MemberCommand.self, HouseholdCommand.self, Whoami.self, SettingsCommand.self,
                      KidsCommand.self, Export.self, Conflicts.self, Watch.self, Notifications.self]
    )
}

/// Options every command that touches a household shares.
struct HomeOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The household directory.",
            discussion: "Default: $PULSE_HOME, else $XDG_DATA_HOME/house-pulse, else ~/.local/share/house-pulse."),
            completion: .directory)
    var home: String?

    var resolved: HouseholdHome { HouseholdHome.resolve(home) }

    func openHousehold() throws -> Household {
        do { return try Household.open(resolved) } catch { throw CLIError(error) }
    }
}

/// Prints a person-readable error (no Swift type names) and exits non-zero.
struct CLIError: Error, CustomStringConvertible {
    let description: String
    init(_ error: Error) { description = String(describing: error) }
    init(message: String) { description = message }
}

extension HomeOptions {
    /// Runs a household write, then tells a running agent so peers get it at once.
    func write<T>(_ body: (Household) throws -> T) throws -> T {
        let household = try openHousehold()
        let result: T
        do { result = try body(household) } catch { throw CLIError(error) }
        AgentControl.notifyChanged(home: resolved)
        return result
    }
}
