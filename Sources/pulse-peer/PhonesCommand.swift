import ArgumentParser
import FoundationEssentials
import PeerSync

/// `pulse-peer phones`: the family's phones on the home network (issue 42), through the
/// running agent (the listener lives in it): the same methods as the page's More → Phones.
struct PhonesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "phones",
        abstract: "Serve House Pulse to the family's phones on the home network, and add or remove phones.",
        discussion: """
            Off until turned on. When on, the agent listens on the home network (HTTPS with the household's own \
            certificate authority, which vouches only for .local names and home addresses). Adding a phone shows two \
            QR codes on the computer's page (More → Phones): the first installs the household's certificate, the \
            second signs the phone in once this computer approves it.
            Example: pulse-peer phones on && pulse-peer phones add "Anna's phone" --member Anna
            """,
        subcommands: [Show.self, On.self, Off.self, Add.self, Approve.self, Decline.self, Remove.self],
        defaultSubcommand: Show.self)

    /// Calls `method` on the running agent; its result, or the refusal in the reader's words.
    static func call(_ method: String, _ params: [String: JSONValue], home: HouseholdHome) throws -> JSONValue {
        let response: ControlResponse
        do {
            response = try AgentControl.request(ControlRequest(op: "call", method: method, params: params), home: home)
        } catch {
            throw CLIError(message: say("cli.phones.no_agent", ["error": .string(CLIError(error).description)]))
        }
        guard response.ok, let result = response.result else {
            throw CLIError(message: response.error.map { Refusal.cliMessage(of: $0, Words.current) } ?? say("cli.phones.no_answer"))
        }
        return result
    }

    static func printState(_ result: JSONValue, json: Bool) throws {
        if json { return try Output.json(result) }
        guard case let .object(state) = result else { return }
        if case .bool(true)? = state["on"], state["problem"] == nil || state["problem"] == .null, case let .array(addresses)? = state["addresses"] {
            print(
                say(
                    "cli.phones.on",
                    ["addresses": .string(addresses.compactMap { if case let .string(text) = $0 { text } else { nil } }.joined(separator: "  "))]))
            if case let .string(fingerprint)? = state["fingerprint"] { print(say("cli.phones.fingerprint", ["fingerprint": .string(fingerprint)])) }
        } else {
            print(say("cli.phones.off"))
        }
        printProblem(state["problem"])
        if case let .array(phones)? = state["phones"] {
            for case let .object(phone) in phones {
                print(
                    "  "
                        + say(
                            "cli.phones.phone",
                            [
                                "id": phone["id"] ?? "", "name": phone["name"] ?? "",
                                "seen": .string(Output.dateTime(milliseconds: phone["lastSeen"]?.integerValue ?? 0)),
                            ]))
            }
        }
        if case let .array(requests)? = state["requests"] {
            for case let .object(request) in requests {
                print(
                    "  "
                        + say(
                            "cli.phones.request",
                            ["id": request["id"] ?? "", "name": request["name"] ?? "", "address": request["address"] ?? "", "code": request["code"] ?? ""]))
            }
        }
    }

    /// Why phones or CalDAV are not served although on (`problem` of `phones.get`, `caldav.get`),
    /// in the reader's language; nothing when there is none.
    static func printProblem(_ value: JSONValue?) {
        guard case let .object(problem)? = value, case let .string(code)? = problem["code"], case let .string(message)? = problem["message"]
        else { return }
        let params: [String: JSONValue] = if case let .object(params)? = problem["params"] { params } else { [:] }
        let body = ErrorBody(code: code, params: params, message: message)
        print(say("cli.phones.problem", ["problem": .string(Refusal.cliMessage(of: body, Words.current))]))
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "status", abstract: "Whether phones are served, where, and the phones added and waiting.")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Print JSON.") var json = false
        func run() throws { try PhonesCommand.printState(try PhonesCommand.call("phones.get", [:], home: options.resolved), json: json) }
    }

    struct On: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Serve phones on the home network (remembered across restarts).")
        @OptionGroup var options: HomeOptions
        @Option(help: "The port (default 47655; 0: any free port).") var port: Int?
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            var params: [String: JSONValue] = ["on": .bool(true)]
            if let port { params["port"] = .integer(Int64(port)) }
            try PhonesCommand.printState(try PhonesCommand.call("phones.set", params, home: options.resolved), json: json)
        }
    }

    struct Off: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Stop serving phones (open phone connections close; paired phones stay paired).")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Print JSON.") var json = false
        func run() throws { try PhonesCommand.printState(try PhonesCommand.call("phones.set", ["on": .bool(false)], home: options.resolved), json: json) }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Invite a phone: print the two links (install the certificate; then sign in, once approved).")
        @OptionGroup var options: HomeOptions
        @Argument(help: "What to call the phone, like \"Anna's phone\".") var name: String
        @Option(help: "Whose phone it is.") var member: String?
        @Option(
            help:
                "The name or address the links use (default: this computer's .local name, which stays when its address changes; an address for a phone that cannot resolve it)."
        ) var host: String?
        @Flag(help: "Print JSON (with the QR codes as SVG).") var json = false
        func run() throws {
            var params: [String: JSONValue] = ["name": .string(name)]
            if let member { params["member"] = .string(member) }
            if let host { params["host"] = .string(host) }
            let result = try PhonesCommand.call("phones.invite", params, home: options.resolved)
            if json { return try Output.json(result) }
            guard case let .object(invitation) = result else { return }
            print(say("cli.phones.step1", ["url": invitation["setup"] ?? ""]))
            print(say("cli.phones.fingerprint", ["fingerprint": invitation["fingerprint"] ?? ""]))
            print(say("cli.phones.step2", ["url": invitation["pair"] ?? ""]))
            print(say("cli.phones.approve_hint"))
        }
    }

    struct Approve: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a phone that opened its link (its id: `pulse-peer phones`).")
        @OptionGroup var options: HomeOptions
        @Argument(help: "The waiting phone's id.") var id: String
        func run() throws {
            _ = try PhonesCommand.call("phones.approve", ["id": .string(id)], home: options.resolved)
            print(say("cli.phones.approved"))
        }
    }

    struct Decline: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Refuse a phone that opened its link.")
        @OptionGroup var options: HomeOptions
        @Argument(help: "The waiting phone's id.") var id: String
        func run() throws {
            _ = try PhonesCommand.call("phones.decline", ["id": .string(id)], home: options.resolved)
            print(say("cli.phones.declined"))
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Sign a phone out for good (it must be added again to come back).")
        @OptionGroup var options: HomeOptions
        @Argument(help: "The phone's id.") var id: String
        func run() throws {
            _ = try PhonesCommand.call("phones.remove", ["id": .string(id)], home: options.resolved)
            print(say("cli.phones.removed"))
        }
    }
}
