import ArgumentParser
import FoundationEssentials
import PeerSync
#if canImport(Glibc)
import Glibc
#endif

struct Open: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open House Pulse in the browser: the page the agent serves on this computer.",
        discussion: """
            Asks the running agent for a sign-in link (it works once, for two minutes) and opens it with
            xdg-open; the browser then stays signed in (across agent restarts; a session unused for 30 days ends, and
            Sign out ends it). Without a desktop, or with
            --print, the link is printed instead: open it in a browser on this computer.
            With --start (House Pulse in the applications menu), the agent is started first when it is not running.
            Example: pulse-peer open --print
            """
    )

    @OptionGroup var options: HomeOptions

    @Flag(name: .customLong("print"), help: "Print the sign-in link instead of opening a browser.")
    var printOnly = false

    @Flag(
        name: .customLong("start"),
        help: "Start this user's agent first when it is not running (with systemd, at every login from now on): House Pulse in the applications menu.")
    var start = false

    @Argument(
        parsing: .postTerminator,
        help: "After --: options for the agent --start starts without systemd (as `pulse-peer run` takes them).")
    var agentOptions: [String] = []

    func run() async throws {
        do {
            try openPage()
        } catch let error as CLIError where start && isatty(STDERR_FILENO) == 0 {
            // From the applications menu nothing shows our standard error: the desktop says it.
            _ = await DesktopAlert.show(summary: say("cli.open.failed_title"), body: error.description)
            throw error
        }
    }

    private func openPage() throws {
        let response: ControlResponse
        do {
            response =
                start
                ? try Launcher.openStartingTheAgent(home: options.resolved, agentOptions: agentOptions)
                : try AgentControl.request(ControlRequest(op: "open"), home: options.resolved)
        } catch let error as CLIError { throw error } catch { throw CLIError(error) }
        guard response.ok, case let .object(result)? = response.result, case let .string(login)? = result["login"],
            case let .string(url)? = result["url"]
        else {
            throw CLIError(message: response.error.map { Refusal.cliMessage(of: $0, Words.current) } ?? say("cli.open.no_link"))
        }
        if !printOnly, Spawned.launch("xdg-open", [login]) {
            print(say("cli.open.opened", ["url": .string(url)]))
            return
        }
        if !printOnly && start && isatty(STDOUT_FILENO) == 0 { throw CLIError(message: say("cli.open.no_browser")) }
        print(say("cli.open.link"))
        print("  \(login)")
    }
}

/// House Pulse from the applications menu (`pulse-peer open --start`): this user's agent is
/// started when it is not running — by the packaged systemd user unit, enabled then so that it
/// runs at every login, when the home is the default one and a systemd user session answers;
/// otherwise detached from this command (`setsid`), running until it is stopped or the computer
/// restarts — and then asked for a sign-in link.
enum Launcher {
    static let unit = "pulse-peer.service"
    static let packagedUnit = "/usr/lib/systemd/user/pulse-peer.service"
    static let startSeconds = 20

    static func openStartingTheAgent(home: HouseholdHome, agentOptions: [String] = []) throws -> ControlResponse {
        // An agent could not start there: said now, not after the wait.
        if let problem = home.problem { throw CLIError(problem) }
        let systemd = usesTheUserUnit(home)
        if systemd { _ = Systemctl.run(["enable", unit]) } // every login from now on
        if let answer = try? AgentControl.request(ControlRequest(op: "open"), home: home) { return answer }
        if !(systemd && Systemctl.run(["start", unit]).status == 0) {
            let me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
            // Detached (setsid returns at once, the agent lives on), its output on /dev/null, not
            // on a pipe of ours, and none of our descriptors: one this command inherited (a pipe a
            // caller reads to its end) must not stay open in the agent for as long as it runs.
            if case let .failure(error) = Subprocess.detach(me, ["run", "--home", home.path] + agentOptions) {
                throw CLIError(message: say("cli.open.cannot_start", ["reason": .string("\(error)")]))
            }
        }
        // The agent answers on its control socket once it is up (a condition with a deadline).
        let deadline = ContinuousClock.now + .seconds(startSeconds)
        while ContinuousClock.now < deadline {
            if let answer = try? AgentControl.request(ControlRequest(op: "open"), home: home) { return answer }
            usleep(100_000)
        }
        throw CLIError(message: say("cli.open.did_not_start", ["seconds": .integer(Int64(startSeconds))]))
    }

    /// The packaged unit serves the default home only (it runs `pulse-peer run`), in a systemd
    /// user session.
    static func usesTheUserUnit(_ home: HouseholdHome) -> Bool {
        FileManager.default.fileExists(atPath: packagedUnit) && home.path == HouseholdHome.resolve(nil).path
            && ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] != nil && Systemctl.run(["show-environment"]).status == 0
    }
}
