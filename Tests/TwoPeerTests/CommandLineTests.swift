import Foundation
import Testing

/// The command line itself: the version, `open --start` and its sign-in link, a home that is a
/// file, help with an example for every command, and the service unit.
@Suite(.serialized) struct CommandLineTests: TwoMachineFixture {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

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
        for group in ["HOUSEHOLD", "SHOPPING", "TASKS", "BACKLOG", "KIDS", "SYNC", "MACHINES", "APPS"] {
            #expect(help.stdout.contains("\(group) SUBCOMMANDS:"), "group \(group)")
        }
        let commands = [
            "init", "household", "member", "whoami", "settings", "export", "shop", "task", "recurring", "backlog",
            "kids", "run", "service", "status", "watch", "notifications", "conflicts", "invite", "join", "devices", "caldav",
        ]
        for command in commands {
            let page = try PulsePeer.run(["help", command]).stdout
            #expect(page.contains("Example"), "`pulse-peer help \(command)` has an example")
        }
    }

    /// Issue 59's app passwords on the command line: made (shown once, with the user name), listed
    /// without the password or its hash, revoked once; bad input refused with nothing changed.
    @Test func appPasswordsAreMadeListedAndRevokedOnTheCommandLine() throws {
        let home = try scratch.household("apps")[0]
        let made =
            try JSONSerialization.jsonObject(with: Data(try home.run(["caldav", "passwords", "add", "Anna's iPhone Reminders", "--json"]).stdout.utf8))
            as? [String: Any]
        let password = try #require(made?["password"] as? String)
        let record = try #require(made?["record"] as? [String: Any])
        #expect(password.range(of: "^[a-z2-9]{4}(-[a-z2-9]{4}){4}$", options: .regularExpression) != nil, "\(password)")
        #expect(record["login"] as? String == "Anna" && record["label"] as? String == "Anna's iPhone Reminders")
        let listed = try home.run(["caldav", "passwords"]).stdout
        #expect(listed.contains("Anna's iPhone Reminders — Anna (user name Anna)"))
        let listedJSON = try home.run(["caldav", "passwords", "--json"]).stdout
        #expect(!listed.contains(password) && !listedJSON.contains(password) && !listedJSON.contains("scrypt"))
        let before = try home.run(["export", "--json"]).stdout
        for bad in [
            ["add", " "], ["add", String(repeating: "x", count: 61)], ["add", "Siri", "--member", "Nobody"], ["add", "anna's iphone reminders"],
            ["revoke", "zzzzzz"],
        ] {
            let refused = try PulsePeer.run(["caldav", "passwords"] + bad + ["--home", home.path])
            #expect(refused.status == 1 && refused.stderr.hasPrefix("Error: "), "\(bad): \(refused.stderr)")
        }
        #expect(try home.run(["export", "--json"]).stdout == before, "nothing changed")
        let id = try #require(record["id"] as? String)
        #expect(try home.run(["caldav", "passwords", "revoke", String(id.suffix(8))]).stdout.contains(", revoked "))
        let again = try PulsePeer.run(["caldav", "passwords", "revoke", id, "--home", home.path])
        #expect(again.status == 1 && again.stderr.contains("is already revoked"))
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
