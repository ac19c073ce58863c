import Foundation
import Testing
@testable import PeerSync
@testable import PulseStore
@testable import PulseProtocol
@testable import PulseDiscovery

/// The household commands end to end, through the built binary.
@Suite struct HouseholdCLITests {
    let scratch: Scratch
    let home: Home
    init() throws {
        scratch = try Scratch()
        home = Home(path: scratch.home("h"))
        try home.run(["init"])
    }

    func fails(_ args: [String], stdin: String? = nil) throws -> String {
        let result = try PulsePeer.run(args + ["--home", home.path], stdin: stdin)
        #expect(result.status != 0, "expected \(args) to fail")
        return result.stderr
    }

    @Test func rapidEntryFromStandardInputStopsAtAnEmptyLine() throws {
        let added = try home.run(["shop", "add"], stdin: "Milk\n  Eggs  \nBread\n\nNot added\n")
        #expect(added.stdout.contains("Added 3 items"))
        #expect(try home.shoppingNames() == ["Milk", "Eggs", "Bread"])
        #expect(try home.run(["shop"]).stdout.contains("Shopping (3)"))
        try home.run(["shop", "check", "2"])
        #expect(try home.run(["shop", "list", "--restock"]).stdout.contains("1  Eggs"))
        try home.run(["shop", "clear"])
        #expect(try home.shoppingNames().isEmpty)
        #expect(try home.run(["shop", "undo"]).stdout.contains("Restored 2 items"))
        #expect(try fails(["shop", "undo"]).contains("no clear to undo"))
        #expect(try fails(["shop", "add"], stdin: "\n").contains("nothing to add"))
    }

    @Test func refusalsExplainThemselvesAndChangeNothing() throws {
        for title in ["One", "Two", "Three"] { try home.run(["task", "add", title]) }
        let before = try home.export()
        #expect(try fails(["task", "add", "Four"]).contains("focus rule: at most 3 active tasks"))
        #expect(try fails(["task", "add", "Four", "--due", "next week"]).contains("not a date"))
        #expect(try fails(["task", "done", "9"]).contains("there is no task 9"))
        try home.run(["backlog", "category", "add", "Vacation"])
        try home.run(["backlog", "add", "Vacation", "Book hotel"])
        let backlog = try home.export()
        #expect(try fails(["backlog", "category", "remove", "Vacation"]).contains("holds 1 item"))
        #expect(try fails(["member", "add", "anna"]).contains("already a member"))
        #expect(try fails(["settings", "appearance", "purple"]).contains("light, dark or system"))
        #expect(try fails(["recurring", "add", "Bins"]).contains("exactly one of --daily"))
        #expect(try home.export() == backlog)
        #expect(before != backlog)
        try home.run(["task", "add", "Four", "--force"])
        #expect(try home.run(["task"]).stdout.contains("4 are active, more than the focus rule's 3"))
    }

    @Test func tasksShowDueTodayAndTheAssignee() throws {
        try home.run(["task", "add", "Dishes", "--assignee", "tom", "--due", "today"])
        try home.run(["task", "add", "Laundry", "--due", "2031-01-02"])
        let list = try home.run(["task", "list"]).stdout
        #expect(list.contains("Dishes  due today  [Tom]"))
        #expect(list.contains("Laundry  due 2031-01-02"))
        try home.run(["member", "remove", "Tom"])
        #expect(!(try home.run(["task"]).stdout.contains("[Tom]")))
        try home.run(["whoami", "--set", "Anna"])
        #expect(try home.run(["whoami"]).stdout == "Anna\n")
    }

    @Test func helpReadsWellAndCompletionScriptsAreGenerated() throws {
        let help = try PulsePeer.run(["--help"])
        #expect(help.status == 0)
        for command in ["init", "run", "status", "shop", "task", "backlog", "recurring", "member", "settings", "export"] {
            #expect(help.stdout.contains("  \(command)"), "--help lists \(command)")
        }
        let taskHelp = try PulsePeer.run(["help", "task", "add"])
        #expect(taskHelp.stdout.contains("--assignee") && taskHelp.stdout.contains("focus rule"))
        // The session outlives the agent's restarts, and `help open` says so (issue 52, item 16).
        let openHelp = try PulsePeer.run(["help", "open"]).stdout
        #expect(openHelp.contains("across agent restarts") && !openHelp.contains("until the agent restarts"), "\(openHelp)")
        for shell in ["bash", "zsh", "fish"] {
            let script = try PulsePeer.run(["--generate-completion-script", shell])
            #expect(script.status == 0 && script.stdout.contains("pulse-peer"))
        }
    }

    @Test func theLocalAPIAnswersOverTheControlSocket() throws {
        let agent = try AgentProcess(home: home.path)
        let homeURL = HouseholdHome(directory: URL(fileURLWithPath: home.path))
        let added = try AgentControl.request(
            ControlRequest(
                op: "call", method: "shop.add",
                params: ["names": .array([.string("Oats")])]), home: homeURL)
        #expect(added.ok)
        #expect(try home.shoppingNames() == ["Oats"])
        let refused = try AgentControl.request(
            ControlRequest(
                op: "call", method: "backlog.add",
                params: ["category": .string("Nope"), "title": .string("x")]), home: homeURL)
        #expect(!refused.ok && refused.error?.code == "not_found")
        #expect(refused.error?.params["kind"] == "category" && refused.error?.params["handle"] == "Nope")
        #expect(refused.error?.message == "no category \"Nope\" in the backlog")
        let listed = try AgentControl.request(ControlRequest(op: "call", method: "task.list"), home: homeURL)
        #expect(listed.result == .array([]))
        // The socket's own refusals come as codes too.
        #expect(try AgentControl.request(ControlRequest(op: "fly"), home: homeURL).error?.code == "unknown_op")
        #expect(try AgentControl.request(ControlRequest(op: "call"), home: homeURL).error?.code == "missing_parameter")
        #expect(try AgentControl.request(ControlRequest(op: "invite", minutes: 99), home: homeURL).error?.code == "invite_minutes")
        agent.stop()
    }
}
