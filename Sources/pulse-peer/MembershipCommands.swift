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
    var minutes = Invitation.defaultMinutes

    func validate() throws {
        guard Invitation.minutes.contains(minutes) else { throw ValidationError(say("cli.invite.minutes_range")) }
    }

    func run() throws {
        _ = try options.openHousehold()
        let response: ControlResponse
        do {
            response = try AgentControl.request(ControlRequest(op: "invite", member: member, minutes: minutes), home: options.resolved)
        } catch {
            throw CLIError(message: say("cli.invite.no_agent", ["error": .string(CLIError(error).description)]))
        }
        guard response.ok, case let .object(result)? = response.result, case let .string(code)? = result["code"] else {
            throw CLIError(message: response.error.map { Refusal.cliMessage(of: $0, Words.current) } ?? say("cli.invite.no_code"))
        }
        print(code)
        Output.toStderr(say("cli.invite.join_hint", ["code": .string(code)]) + "\n" + say("cli.invite.expiry", ["minutes": JSONValue(minutes)]) + "\n")
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

    @Option(
        help: ArgumentHelp(
            "Who uses this computer: a member's name (a new member when the household has nobody of that name).",
            discussion: "Their name signs what is added here, their tasks show as “Me”, they are told of the others' changes."))
    var member: String?

    func validate() throws {
        if let peer, PeerAddress(peer) == nil { throw ValidationError(say("cli.join.peer_format")) }
        guard (1...600).contains(timeout) else { throw ValidationError(say("cli.join.timeout_range")) }
    }

    func run() async throws {
        do {
            let joined = try await Pairing.join(
                home: options.resolved, code: code, peer: peer.flatMap(PeerAddress.init),
                timeout: .seconds(timeout), label: name, member: member)
            print(
                say(
                    "cli.join.joined",
                    [
                        "household": .string(joined.householdName), "inviter": .string(joined.inviterName),
                        "machine": .string(String(joined.inviterMachine.prefix(12))),
                    ]))
            print(say("cli.join.this_machine", ["machine": .string(String(joined.machineID.prefix(12))), "path": .string(options.resolved.path)]))
            if let member = joined.member {
                print(say("cli.join.member", ["name": .string(member)]))
            } else if !joined.suggestedMember {
                print(say("cli.join.no_member"))
            }
            print(peer.map { say("cli.join.start_peer", ["peer": .string($0)]) } ?? say("cli.join.start"))
            AgentControl.notifyChanged(home: options.resolved) // an agent already welcoming here takes it up
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
            /// The state as `--json` gives it (English, for scripts), and its code for people.
            func state(_ machine: MachineRecord) -> (json: String, code: String) {
                if machine.isRemoved { return ("removed", "removed") }
                if machine.isThisMachine {
                    return agentRunning ? ("this machine", "this_machine") : ("this machine (agent not running)", "this_machine_alone")
                }
                guard let peer = peers.first(where: { $0.machineID == machine.id }) else { return ("not seen since the agent started", "unseen") }
                return (peer.state.rawValue, peer.state.rawValue)
            }
            if json {
                let rows: [[String: JSONValue]] = machines.map { m in
                    let peer = peers.first { $0.machineID == m.id }
                    return [
                        "id": .string(m.id), "name": .string(m.name), "member": m.member.map(JSONValue.string) ?? .null,
                        "addedBy": m.addedBy.map(JSONValue.string) ?? .null, "added": m.added.map { .integer($0) } ?? .null,
                        "removed": m.removed.map { .integer($0) } ?? .null,
                        "removedBy": m.removedBy.map(JSONValue.string) ?? .null,
                        "thisMachine": .bool(m.isThisMachine), "state": .string(state(m).json),
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
                let seen = peers.first(where: { $0.machineID == m.id })?.lastSeen.flatMap { m.isThisMachine ? nil : $0 }
                let params: [String: JSONValue] = [
                    "state": .string(state(m).code), "seen": seen == nil ? "no" : "yes", "ago": .string(seen.map(Ago.describe) ?? ""),
                ]
                print(line + " — " + say("cli.devices.state", params))
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
            print(say("cli.devices.removed", ["name": .string(removed.name), "id": .string(String(removed.id.prefix(12)))]))
        }
    }
}

/// "3 min ago" from Unix milliseconds.
enum Ago {
    static func describe(_ milliseconds: Int64) -> String {
        let seconds = max(0, (WallClock.now() - milliseconds) / 1000)
        if seconds < 60 { return say("cli.ago.seconds", ["count": .integer(seconds)]) }
        if seconds < 3600 { return say("cli.ago.minutes", ["count": .integer(seconds / 60)]) }
        if seconds < 86_400 { return say("cli.ago.hours", ["count": .integer(seconds / 3600)]) }
        return say("cli.ago.days", ["count": .integer(seconds / 86_400)])
    }
}
