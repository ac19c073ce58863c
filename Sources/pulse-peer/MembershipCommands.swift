import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PeerSync

struct Invite: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Open a pairing invitation: print a short code another machine joins with.",
        discussion: """
            The running agent checks the code: it works once, for --minutes (default 10), and dies after 3 wrong \
            attempts. Read it aloud or type it on the new machine: `pulse-peer join CODE`. A new invitation replaces \
            the open one.
            Example: pulse-peer invite --member Tom --minutes 5
            """
    )

    @OptionGroup var options: HomeOptions

    @Option(help: "The member the new machine belongs to (default: this machine's member).")
    var member: String?

    @Option(help: "How long the code works, in minutes (1–60).")
    var minutes = 10

    func validate() throws {
        guard (1...60).contains(minutes) else { throw ValidationError("--minutes must be between 1 and 60") }
    }

    func run() throws {
        _ = try options.openHousehold()
        let response: ControlResponse
        do {
            response = try AgentControl.request(ControlRequest(op: "invite", member: member, minutes: minutes), home: options.resolved)
        } catch {
            throw CLIError(
                message: "the agent is not running: start it (`pulse-peer run`) — it is the agent that checks the code "
                    + "when the new machine joins (\(error))")
        }
        guard response.ok, case let .object(result)? = response.result, case let .string(code)? = result["code"] else {
            throw CLIError(message: response.error.map { Refusal.cliMessage(of: $0) } ?? "the agent gave no code")
        }
        print(code)
        let hint = """
            On the new machine: pulse-peer join \(code)
            The code works once, for \(minutes) minute\(minutes == 1 ? "" : "s"), and dies after 3 wrong attempts.

            """
        _ = hint.withCString { write(2, $0, strlen($0)) }
    }
}

struct Join: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Join a household with a pairing code from `pulse-peer invite`.",
        discussion: """
            Finds the inviting machine on the LAN (mDNS), or at --peer, proves the code (SPAKE2: nothing an eavesdropper \
            can crack), and sets up this machine's home. Then start the agent: `pulse-peer run`.
            Example: pulse-peer join 1234-567-890   (or with --peer 192.168.1.20:47653 when mDNS is blocked)
            """
    )

    @OptionGroup var options: HomeOptions

    @Argument(help: "The pairing code (10 digits; dashes and spaces are ignored).")
    var code: String

    @Option(help: "The inviting machine's address (HOST:PORT) instead of looking for it over mDNS.")
    var peer: String?

    @Option(help: "How long to look for the inviting machine, in seconds.")
    var timeout = 30

    @Option(help: "This machine's name in the household (default: its host name).")
    var name: String?

    func validate() throws {
        if let peer, PeerAddress(peer) == nil { throw ValidationError("--peer must be HOST:PORT, e.g. 192.168.1.20:47653") }
        guard (1...600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 600 seconds") }
    }

    func run() async throws {
        do {
            let joined = try await Pairing.join(
                home: options.resolved, code: code, peer: peer.flatMap(PeerAddress.init),
                timeout: .seconds(timeout), label: name)
            print("Joined \(joined.householdName) through \(joined.inviterName) (\(joined.inviterMachine.prefix(12))).")
            print("This machine: \(joined.machineID.prefix(12)), in \(options.resolved.path)")
            print(
                "Start the agent to receive the household: pulse-peer run"
                    + (peer.map { " (it finds the household over mDNS; where mDNS does not work: --peer \($0))" } ?? ""))
        } catch {
            throw CLIError(error)
        }
    }
}

struct Devices: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "The household's machines: list them, remove one.",
        discussion: """
            Examples:
              pulse-peer devices                     every machine, its member and when it was last seen
              pulse-peer devices remove old-laptop   shut a lost or sold machine out for good
            """,
        subcommands: [List.self, Remove.self],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the household's machines and their state.")

        @OptionGroup var options: HomeOptions

        @Flag(help: "Print JSON.")
        var json = false

        func run() throws {
            let household = try options.openHousehold()
            let machines: [MachineRecord]
            do { machines = try household.machines() } catch { throw CLIError(error) }
            let peers = (try? AgentControl.status(home: options.resolved))?.peers ?? []
            let agentRunning = (try? AgentControl.status(home: options.resolved)) != nil
            func state(_ machine: MachineRecord) -> String {
                if machine.isRemoved { return "removed" }
                if machine.isThisMachine { return "this machine" + (agentRunning ? "" : " (agent not running)") }
                guard let peer = peers.first(where: { $0.machineID == machine.id }) else { return "not seen since the agent started" }
                return peer.state == .connected ? "connected" : "\(peer.state.rawValue)"
            }
            if json {
                let rows: [[String: JSONValue]] = machines.map { m in
                    let peer = peers.first { $0.machineID == m.id }
                    return [
                        "id": .string(m.id), "name": .string(m.name), "member": m.member.map(JSONValue.string) ?? .null,
                        "addedBy": m.addedBy.map(JSONValue.string) ?? .null, "added": m.added.map { .integer($0) } ?? .null,
                        "removed": m.removed.map { .integer($0) } ?? .null,
                        "removedBy": m.removedBy.map(JSONValue.string) ?? .null,
                        "thisMachine": .bool(m.isThisMachine), "state": .string(state(m)),
                        "lastSeen": peer?.lastSeen.map { .integer($0) } ?? .null,
                    ]
                }
                let data = try JSONEncoder().encode(rows.map(JSONValue.object))
                print(String(decoding: data, as: UTF8.self))
                return
            }
            for m in machines {
                var line = "\(m.id.prefix(12))  \(m.name)"
                if let member = m.member { line += " (\(member))" }
                line += " — \(state(m))"
                if let seen = peers.first(where: { $0.machineID == m.id })?.lastSeen, !m.isThisMachine {
                    line += ", last seen \(Ago.describe(seen))"
                }
                print(line)
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Shut a machine out of the household for good.",
            discussion: """
                Every machine refuses it from then on (one offline now learns at its next sync with any machine), and \
                the household's advertisements get a new key it never learns. It can come back only as a new machine \
                (a new identity) through a new pairing. Give the first digits of its id (see `pulse-peer devices`).
                """
        )

        @OptionGroup var options: HomeOptions

        @Argument(help: "The machine id, or its first 6 or more hex digits.")
        var id: String

        func run() throws {
            let removed = try options.write { try $0.removeMachine(id) }
            print("Removed \(removed.name) (\(removed.id.prefix(12))): no machine of the household will sync with it again.")
        }
    }
}

/// "3 min ago" from Unix milliseconds.
enum Ago {
    static func describe(_ milliseconds: Int64) -> String {
        let seconds = max(0, (WallClock.now() - milliseconds) / 1000)
        if seconds < 60 { return "\(seconds) s ago" }
        if seconds < 3600 { return "\(seconds / 60) min ago" }
        if seconds < 86_400 { return "\(seconds / 3600) h ago" }
        return "\(seconds / 86_400) days ago"
    }
}
