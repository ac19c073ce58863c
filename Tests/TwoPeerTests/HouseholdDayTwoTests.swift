import Foundation
import Testing

/// The day-two household operations, run as a person runs them: the binary, and two
/// machines with their own agents for everything that crosses machines.
@Suite(.serialized) struct HouseholdDayTwoTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    func pair() throws -> (Home, Home, AgentProcess, AgentProcess) { try scratch.twoAgents(bFor: "Tom") }

    func synced(_ homes: Home...) throws { for home in homes { try home.waitUntil("synced") } }

    func json(_ text: String) throws -> Any { try JSONSerialization.jsonObject(with: Data(text.utf8)) }

    /// B's agent stops; `offline` runs on B with no connection; B's agent comes back and both sync.
    func whileBIsOffline(
        _ a: Home, _ b: Home, _ agentB: AgentProcess, online: () throws -> Void,
        offline: () throws -> Void
    ) throws -> AgentProcess {
        agentB.stop()
        try a.waitUntil("disconnected")
        try online()
        try offline()
        let restarted = try AgentProcess(home: b.path)
        try synced(a, b)
        try synced(b, a)
        return restarted
    }

    @Test func aTaskEditedOnBothMachinesKeepsBothFieldsAndLogsTheSameFieldInWords() throws {
        let (a, b, agentA, agentB) = try pair()
        try a.run(["task", "add", "Water plants"])
        try synced(a, b)
        let restarted = try whileBIsOffline(
            a, b, agentB,
            online: {
                try a.run(["task", "edit", "1", "--title", "Water the plants", "--due", "2026-12-01"])
            },
            offline: {
                try b.run(["task", "edit", "Water plants", "--assignee", "me", "--due", "2026-12-24"])
            })
        #expect(try a.export() == b.export())
        let tasks = try json(try a.run(["task", "--json"]).stdout) as? [[String: Any]] ?? []
        #expect(tasks.count == 1)
        // Different fields: both kept. The same field (due): the later edit, B's.
        #expect(tasks.first?["title"] as? String == "Water the plants")
        #expect(tasks.first?["assignee"] as? String == "Tom")
        #expect(tasks.first?["due"] as? String == "2026-12-24")
        // Logged on the machine that received the other's due date, in people's words.
        let logs = try [a, b].map { try $0.run(["conflicts"]).stdout }.filter { !$0.hasPrefix("No conflicts") }
        #expect(!logs.isEmpty)
        for log in logs {
            #expect(log.contains("Tom (on ") && log.contains("Anna (on ") && log.contains("due date"), "\(log)")
            #expect(log.contains("the task “Water the plants”") && log.contains("“2026-12-24”, the later one, was kept"), "\(log)")
            let id = tasks.first?["id"] as? String ?? "?"
            #expect(!log.contains(id), "no row ids: \(log)")
        }
        // Tom's machine lists it as his; Anna's does not.
        #expect(try b.run(["task", "--mine"]).stdout.contains("Water the plants"))
        #expect(!(try a.run(["task", "--mine"]).stdout.contains("Water the plants")))
        restarted.stop()
        agentA.stop()
    }

    @Test func aBacklogItemMovedOnAWhileRenamedOnBKeepsBoth() throws {
        let (a, b, agentA, agentB) = try pair()
        try a.run(["backlog", "category", "add", "Garden"])
        try a.run(["backlog", "category", "add", "Outside"])
        for item in ["Fence", "Pond", "Shed"] { try a.run(["backlog", "add", "Garden", item]) }
        try synced(a, b)
        let restarted = try whileBIsOffline(
            a, b, agentB,
            online: {
                try a.run(["backlog", "move", "Fence", "--category", "Outside"])
                try a.run(["backlog", "move", "Shed", "--position", "1"])
            },
            offline: {
                try b.run(["backlog", "rename", "Fence", "Paint the fence"])
            })
        #expect(try a.export() == b.export())
        for home in [a, b] {
            let backlog = try json(try home.run(["backlog", "--json"]).stdout) as? [[String: Any]] ?? []
            let titles = backlog.map { ($0["items"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String } }
            #expect(titles == [["Shed", "Pond"], ["Paint the fence"]], "\(titles)")
            #expect(try home.run(["conflicts"]).stdout.hasPrefix("No conflicts"))
        }
        restarted.stop()
        agentA.stop()
    }

    /// Milk is in the restock pool on both. B, offline, restocks it and clears the list
    /// (Milk deleted there); later A adds "milk": the same item comes back from A's pool.
    /// The later action wins on both machines, and the other is in the log, in words.
    @Test func restockByNameOfAnItemTheOtherMachineDeleted() throws {
        let (a, b, agentA, agentB) = try pair()
        try a.run(["shop", "add", "Milk"])
        try a.run(["shop", "check", "Milk"])
        try synced(a, b)
        let restarted = try whileBIsOffline(
            a, b, agentB, online: {},
            offline: {
                try b.run(["shop", "restock", "Milk"])
                try b.run(["shop", "clear"])
                let added = try a.run(["shop", "add", "milk"]).stdout
                #expect(added.contains("Back from the restock pool: Milk"), "\(added)")
            })
        #expect(try a.export() == b.export())
        for home in [a, b] {
            #expect(try home.shoppingNames() == ["Milk"])
            let pool = try json(try home.run(["shop", "list", "--restock", "--json"]).stdout) as? [Any]
            #expect(pool?.isEmpty == true)
        }
        // One Milk row in the whole household: brought back, not made again.
        let export = try json(try a.export()) as? [String: Any]
        let items = (export?["entities"] as? [String: Any])?["shopping_item"] as? [String: Any] ?? [:]
        #expect(items.count == 1)
        let log = try b.run(["conflicts"]).stdout
        #expect(log.contains("the shopping item “Milk”") && log.contains("on the list, the later one, was kept; removed was not"), "\(log)")
        restarted.stop()
        agentA.stop()
    }

    @Test func clearAndUndoAcrossMachines() throws {
        let (a, b, agentA, agentB) = try pair()
        try a.run(["shop", "add", "Milk", "Eggs"])
        try a.run(["shop", "clear"])
        try synced(a, b)
        #expect(try b.shoppingNames().isEmpty) // B sees the clear
        let notHere = try PulsePeer.run(["shop", "undo", "--home", b.path])
        #expect(notHere.status != 0 && notHere.stderr.contains("undone on the machine that made it"))
        try b.run(["shop", "add", "Milk"]) // somebody re-adds Milk on B
        try synced(b, a)
        let before = try a.export()
        let refused = try PulsePeer.run(["shop", "undo", "--home", a.path])
        #expect(refused.status != 0 && refused.stderr.contains("“Milk”") && refused.stderr.contains("Nothing was restored"), "\(refused.stderr)")
        #expect(try a.export() == before)
        try a.run(["shop", "check", "Milk"]) // the new one is bought
        #expect(try a.run(["shop", "undo"]).stdout.contains("Restored 2 items"))
        try synced(a, b)
        #expect(try b.shoppingNames() == ["Milk", "Eggs"])
        #expect(try a.export() == b.export())
        agentB.stop()
        agentA.stop()
    }

    @Test func appearanceIsThisMachinesAndSuggestionsTheHouseholds() throws {
        let (a, b, agentA, agentB) = try pair()
        try a.run(["settings", "appearance", "dark"])
        try a.run(["settings", "suggestions", "off"])
        try synced(a, b)
        let onB = try json(try b.run(["settings", "--json"]).stdout) as? [String: Any]
        #expect(onB?["appearance"] as? String == "system" && onB?["suggestions"] as? Bool == false)
        let onA = try a.run(["settings"]).stdout
        #expect(onA.contains("appearance    dark   (this machine)") && onA.contains("suggestions   off    (the household)"), "\(onA)")
        agentB.stop()
        agentA.stop()
    }

    /// Every new command's bad inputs: a clear error, a non-zero exit, nothing changed.
    @Test func badInputsOfTheNewCommandsChangeNothing() throws {
        let home = try scratch.household("solo")[0]
        try home.run(["task", "add", "Dishes"])
        try home.run(["backlog", "category", "add", "Garden"])
        try home.run(["backlog", "add", "Garden", "Fence"])
        try home.run(["shop", "add", "Milk"])
        let export = try home.export()
        let cases: [([String], String)] = [
            (["task", "edit", "1"], "nothing to change"),
            (["task", "edit", "1", "--assignee", "Tom", "--no-assignee"], "not both"),
            (["task", "edit", "1", "--due", "today", "--no-due"], "not both"),
            (["task", "edit", "1", "--assignee", "Zed"], "no member called \"Zed\""),
            (["task", "edit", "1", "--due", "someday"], "is not a date"),
            (["task", "edit", "1", "--title", " "], "may not be empty"),
            (["task", "edit", "9", "--title", "x"], "there is no task 9"),
            (["backlog", "move", "Fence"], "say where to"),
            (["backlog", "move", "Fence", "--position", "0"], "counts from 1"),
            (["backlog", "move", "Fence", "--position", "5"], "between 1 and 1"),
            (["backlog", "move", "Fence", "--category", "Attic"], "no category \"Attic\""),
            (["backlog", "rename", "Fence", ""], "may not be empty"),
            (["backlog", "rename", "Shed", "x"], "no backlog item \"Shed\""),
            (["shop", "undo"], "no clear to undo"),
            (["member", "add", "me"], "may not be called \"me\""),
            (["task", "frobnicate"], "unknown task command “frobnicate”"),
            (["kid"], "unknown command “kid” (did you mean “kids”?)"),
            (["backlog", "category", "mv"], "unknown backlog category command “mv”"),
        ]
        for (args, message) in cases {
            let result = try PulsePeer.run(args + ["--home", home.path])
            #expect(result.status != 0, "\(args) should fail")
            #expect(result.stderr.contains(message), "\(args): \(result.stderr)")
            #expect(!result.stderr.contains("Error(") && !result.stderr.contains("CocoaError"), "\(args): \(result.stderr)")
        }
        #expect(try home.export() == export)
    }

    /// `pulse-peer phones` (issue 42): off until turned on, through the running agent; bad
    /// input is refused in words and changes nothing; with no agent, it says to start one.
    @Test func phonesAreOffUntilTurnedOnAndBadInputIsRefusedInWords() throws {
        let home = try scratch.household("phones")[0]
        let noAgent = try PulsePeer.run(["phones", "--home", home.path])
        #expect(noAgent.status != 0 && noAgent.stderr.contains("start it: pulse-peer run"), "\(noAgent.stderr)")
        let agent = try AgentProcess(home: home.path)
        defer { _ = agent.stop() }
        #expect(try home.run(["phones"]).stdout.contains("Phones: off"))
        let export = try home.export()
        for (args, message) in [
            (["phones", "add", "Anna's phone"], "phones are off on this computer"),
            (["phones", "on", "--port", "80"], "a port for phones is a number from 1024 to 65535"),
            (["phones", "approve", "0123456789abcdef"], "no phone is waiting to be added as 0123456789abcdef"),
            (["phones", "remove", "nope"], "no phone of the household is nope"),
        ] {
            let result = try PulsePeer.run(args + ["--home", home.path])
            #expect(result.status != 0, "\(args) should fail")
            #expect(result.stderr.contains(message), "\(args): \(result.stderr)")
        }
        #expect(try home.export() == export)
        let on = try home.run(["phones", "on", "--port", "0", "--json"]).stdout
        #expect(on.contains(#""on" : true"#) && on.contains("fingerprint"), "\(on)")
        for (args, message) in [
            (["phones", "add", " "], "may not be empty"),
            (["phones", "add", "x", "--member", "Zed"], "Zed"),
            (["phones", "add", "x", "--host", "bank.example.com"], "is not one of this computer's home-network names or addresses"),
        ] {
            let result = try PulsePeer.run(args + ["--home", home.path])
            #expect(result.status != 0, "\(args) should fail")
            #expect(result.stderr.contains(message), "\(args): \(result.stderr)")
        }
        let off = try home.run(["phones", "off"]).stdout
        #expect(off.contains("Phones: off"))
    }

    /// One household CA (decision 0014): the first computer to turn phones on keeps the root;
    /// the second waits for it to sign (said in words, the choice kept), then serves phones with
    /// a certificate a phone that installed the first computer's CA trusts — and never holds
    /// the root's key.
    @Test func theSecondComputerServesPhonesUnderTheFirstComputersCA() throws {
        let (a, b, agentA, agentB) = try pair()
        defer {
            _ = agentA.stop()
            _ = agentB.stop()
        }
        let onA = try json(try a.run(["phones", "on", "--port", "0", "--json"]).stdout) as? [String: Any] ?? [:]
        let fingerprint = try #require(onA["fingerprint"] as? String)
        try synced(a, b)
        // B's first answer may already be the served state (A signed quickly) or the wait, in words.
        let first = try PulsePeer.run(["phones", "on", "--port", "0", "--home", b.path])
        #expect(first.status == 0 || first.stderr.contains("is waiting for"), "\(first.stderr)")
        var state: [String: Any] = [:]
        _ = try eventually(timeout: 30) {
            state = try json(try b.run(["phones", "status", "--json"]).stdout) as? [String: Any] ?? [:]
            return state["fingerprint"] as? String != nil && state["problem"] is NSNull
        }
        #expect(state["on"] as? Bool == true && state["fingerprint"] as? String == fingerprint, "\(state)")
        let phonesDirectory = URL(fileURLWithPath: b.path).appendingPathComponent("phones")
        #expect(!FileManager.default.fileExists(atPath: phonesDirectory.appendingPathComponent("root-key.pem").path))
        // A TLS client trusting only A's root accepts B's certificate for B's name.
        let rootA = URL(fileURLWithPath: a.path).appendingPathComponent("phones/root.pem").path
        let host = try #require((state["hosts"] as? [String])?.first) // the `.local` name (the links' default)
        #expect(host.hasSuffix(".local"), "\(state)")
        let port = try #require(state["port"] as? Int)
        let check = try Shell.run([
            "sh", "-c",
            "openssl s_client -connect 127.0.0.1:\(port) -servername \(host) -verify_hostname \(host) -CAfile \(rootA) "
                + "-verify_return_error -brief </dev/null 2>&1",
        ])
        #expect(check.status == 0 && check.stdout.contains("Verification: OK"), "\(check.stdout)")
    }

    /// `--version` names the release, and the commit when the binary was stamped with one
    /// (scripts/package-deb.sh); a developer's build says it recorded none.
    @Test func theVersionNamesTheReleaseAndSaysWhetherACommitWasRecorded() throws {
        let result = try PulsePeer.run(["--version"])
        let line = result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(line.wholeMatch(of: /pulse-peer \d+\.\d+\.\d+ \((commit [0-9a-f]{7,40}|a development build: no commit recorded)\)/) != nil, "\(line)")
    }

    /// House Pulse from the applications menu (`open --start`): with no agent running, it starts
    /// one (detached: this home is not the packaged unit's) and gives a sign-in link that signs
    /// the browser in; with the agent running, the same without a second agent.
    @Test func openStartStartsTheAgentWhenNoneRunsAndTheLinkSignsIn() throws {
        let home = try scratch.household("launcher")[0]
        let agentOptions = ["--", "--port", "0", "--web", "127.0.0.1:0", "--no-mdns", "--no-desktop-notifications"]
        let first = try PulsePeer.run(["open", "--start", "--print", "--home", home.path, "--lang", "en"] + agentOptions)
        #expect(first.status == 0, "\(first.stderr)")
        // The agent it started, stopped at the end (whichever holds the home then).
        func agentPID() -> Int32? {
            (try? String(contentsOfFile: home.path + "/agent.lock", encoding: .utf8)).flatMap { Int32($0.split(separator: "\n").first ?? "") }
        }
        defer {
            if let pid = agentPID() {
                kill(pid, SIGTERM)
                let deadline = Date() + 20
                while kill(pid, 0) == 0, Date() < deadline { usleep(20_000) }
            }
        }
        let lock = try String(contentsOfFile: home.path + "/agent.lock", encoding: .utf8)
        #expect(agentPID() != nil)
        func link(_ output: String) -> String? {
            output.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.contains("/login?token=") }
        }
        let url = try #require(link(first.stdout), "\(first.stdout)")
        let fetched = try Shell.run([
            "python3", "-c",
            "import sys, urllib.request; r = urllib.request.urlopen(sys.argv[1]); print(r.status, r.headers.get('Set-Cookie', ''))", url,
        ])
        #expect(fetched.stdout.hasPrefix("200 pulse_session_") && fetched.stdout.contains("HttpOnly"), "\(fetched.stdout) \(fetched.stderr)")
        let again = try PulsePeer.run(["open", "--start", "--print", "--home", home.path, "--lang", "en"] + agentOptions)
        #expect(again.status == 0 && link(again.stdout) != nil && link(again.stdout) != url, "a new link, once each")
        let still = try String(contentsOfFile: home.path + "/agent.lock", encoding: .utf8)
        #expect(still == lock, "the same agent, not a second one")
    }

    @Test func aSignInLinkSignsInOnlyTheBrowserOfTheAgentsOwnUser() throws {
        let home = try scratch.household("owner")[0]
        let agent = try AgentProcess(home: home.path)
        defer { _ = agent.stop() }
        let opened = try PulsePeer.run(["open", "--print", "--home", home.path, "--lang", "en"])
        let link = try #require(
            opened.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.first { $0.contains("/login?token=") },
            "\(opened.stdout)")
        let fetch =
            "import sys, urllib.request, urllib.error\ntry:\n r = urllib.request.urlopen(sys.argv[1]); print(r.status, r.headers.get('Set-Cookie', ''))\nexcept urllib.error.HTTPError as e:\n print(e.code)"
        // Another account on this computer (it read the link off a command line) gets nothing.
        let stranger = try Shell.run(["runuser", "-u", "nobody", "--", "/usr/bin/python3", "-c", fetch, link])
        #expect(stranger.stdout.hasPrefix("401"), "\(stranger.stdout) \(stranger.stderr)")
        // The agent's own user's browser still signs in with it, once.
        let owner = try Shell.run(["/usr/bin/python3", "-c", fetch, link])
        #expect(owner.stdout.hasPrefix("200 pulse_session_"), "\(owner.stdout) \(owner.stderr)")
    }

    @Test func aHomeThatIsAFileOrEmptyIsRefusedInWords() throws {
        let file = scratch.home("plain-file")
        _ = FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        for (args, message) in [
            (["init", "--home", file], "is a file, not a directory"),
            (["init", "--home", file + "/sub"], "is a file, so"),
            (["shop", "--home", file], "is a file, not a directory"),
            (["init", "--home", ""], "--home needs a directory"),
            (["task", "--home", "  "], "--home needs a directory"),
        ] {
            let result = try PulsePeer.run(args, environment: ["HOME": scratch.home("nohome")])
            #expect(result.status != 0 && result.stderr.contains(message), "\(args): \(result.stderr)")
            #expect(!result.stderr.contains("CocoaError"))
        }
        // `--home ""` must not fall back to the default home and create a household there.
        #expect(!FileManager.default.fileExists(atPath: scratch.home("nohome")))
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "x")
    }

    @Test func helpIsGroupedAndEveryCommandHasAnExample() throws {
        let help = try PulsePeer.run(["help"])
        #expect(help.status == 0)
        for group in ["HOUSEHOLD", "SHOPPING", "TASKS", "BACKLOG", "KIDS", "SYNC", "MACHINES"] {
            #expect(help.stdout.contains("\(group) SUBCOMMANDS:"), "group \(group)")
        }
        let commands = [
            "init", "household", "member", "whoami", "settings", "export", "shop", "task", "recurring", "backlog",
            "kids", "run", "service", "status", "watch", "notifications", "conflicts", "invite", "join", "devices",
        ]
        for command in commands {
            let page = try PulsePeer.run(["help", command]).stdout
            #expect(page.contains("Example"), "`pulse-peer help \(command)` has an example")
        }
    }

    /// `service install|status|remove` with a stand-in `systemctl` on PATH that records
    /// what it was asked; then with none, and with one that cannot reach a user manager.
    @Test func theServiceUnitIsWrittenEnabledAndRemoved() throws {
        let home = try scratch.household("svc")[0]
        let config = scratch.home("config"), bin = scratch.home("bin"), calls = scratch.home("calls.log")
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        let fake = bin + "/systemctl"
        try """
        #!/bin/sh
        echo "$*" >> '\(calls)'
        case "$2" in is-enabled) echo enabled ;; is-active) echo active ;; esac
        exit 0
        """.write(toFile: fake, atomically: true, encoding: .utf8)
        chmod(fake, 0o755)
        let environment = ["XDG_CONFIG_HOME": config, "PATH": bin + ":/usr/bin:/bin"]
        let install = try PulsePeer.run(["service", "install", "--home", home.path], environment: environment)
        #expect(install.status == 0, "\(install.stderr)")
        let unitPath = config + "/systemd/user/pulse-peer.service"
        let unit = try String(contentsOfFile: unitPath, encoding: .utf8)
        let binary = PulsePeer.executable.resolvingSymlinksInPath().path
        #expect(unit.contains("ExecStart=\"\(binary)\" run --home \"\(home.path)\""), "\(unit)")
        #expect(unit.contains("[Install]\nWantedBy=default.target") && unit.contains("Restart=on-failure"))
        #expect(try String(contentsOfFile: calls, encoding: .utf8) == "--user daemon-reload\n--user enable --now pulse-peer.service\n")
        let status = try PulsePeer.run(["service", "status"], environment: environment).stdout
        #expect(status.contains("Enabled:   enabled") && status.contains("Running:   active"), "\(status)")
        let remove = try PulsePeer.run(["service", "remove"], environment: environment)
        #expect(remove.status == 0 && !FileManager.default.fileExists(atPath: unitPath))
        #expect(try String(contentsOfFile: calls, encoding: .utf8).contains("--user disable --now pulse-peer.service"))
        #expect(try PulsePeer.run(["service", "status"], environment: environment).stdout.contains("Not installed"))

        // No systemctl at all: the unit is written, and the person is told plainly.
        let none = try PulsePeer.run(
            ["service", "install", "--home", home.path],
            environment: ["XDG_CONFIG_HOME": config, "PATH": scratch.home("empty")])
        #expect(none.status != 0 && none.stderr.contains("systemctl was not found"), "\(none.stderr)")
        #expect(none.stderr.contains("pulse-peer run") && FileManager.default.fileExists(atPath: unitPath))
        // A systemctl that cannot reach the user manager (no login session): its words.
        try "#!/bin/sh\necho 'Failed to connect to bus: No medium found' >&2\nexit 1\n".write(toFile: fake, atomically: true, encoding: .utf8)
        chmod(fake, 0o755)
        let noBus = try PulsePeer.run(["service", "install", "--home", home.path], environment: environment)
        #expect(noBus.status != 0 && noBus.stderr.contains("Failed to connect to bus: No medium found"), "\(noBus.stderr)")
        // No household: nothing is written.
        try FileManager.default.removeItem(atPath: unitPath)
        let empty = try PulsePeer.run(["service", "install", "--home", scratch.home("nothing")], environment: environment)
        #expect(empty.status != 0 && empty.stderr.contains("no household in") && !FileManager.default.fileExists(atPath: unitPath))
    }
}
