import ArgumentParser
import PeerSync

struct Open: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open House Pulse in the browser: the page the agent serves on this computer.",
        discussion: """
            Asks the running agent for a sign-in link (it works once, for two minutes) and opens it with
            xdg-open; the browser then stays signed in (until the agent restarts). Without a desktop, or with
            --print, the link is printed instead: open it in a browser on this computer.
            Example: pulse-peer open --print
            """
    )

    @OptionGroup var options: HomeOptions

    @Flag(name: .customLong("print"), help: "Print the sign-in link instead of opening a browser.")
    var printOnly = false

    func run() throws {
        let response: ControlResponse
        do { response = try AgentControl.request(ControlRequest(op: "open"), home: options.resolved) } catch { throw CLIError(error) }
        guard response.ok, case let .object(result)? = response.result, case let .string(login)? = result["login"],
            case let .string(url)? = result["url"]
        else {
            throw CLIError(message: response.error.map { Refusal.cliMessage(of: $0, Words.current) } ?? say("cli.open.no_link"))
        }
        if !printOnly, Spawned.launch("xdg-open", [login]) {
            print(say("cli.open.opened", ["url": .string(url)]))
            return
        }
        print(say("cli.open.link"))
        print("  \(login)")
    }
}
