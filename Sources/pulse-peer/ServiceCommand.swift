import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PeerSync

/// The background agent as a systemd user service: one command instead of six.
struct ServiceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "service",
        abstract: "Run the agent in the background, from login to logout (a systemd user service).",
        discussion: """
            Examples:
              pulse-peer service install     write ~/.config/systemd/user/pulse-peer.service, enable and start it
              pulse-peer service status      is it installed, enabled, running?
              pulse-peer service remove      stop it, disable it, delete the unit file
            The unit runs this very pulse-peer binary with this household's --home.
            """,
        subcommands: [Install.self, Status.self, Remove.self, UnitText.self])

    static let unitName = "pulse-peer.service"

    /// `$XDG_CONFIG_HOME/systemd/user/pulse-peer.service`, else under `~/.config`.
    static var unitPath: String {
        let environment = ProcessInfo.processInfo.environment
        let config =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? "/root") + "/.config"
        return config + "/systemd/user/" + unitName
    }

    /// The unit file: this binary, `run --home HOME`, restarted on failure, stopped
    /// with SIGTERM (the agent's shutdown is bounded well under TimeoutStopSec).
    static func unit(executable: String, home: String?) -> String {
        """
        \(home == nil ? "# The Debian package's: the default home; `pulse-peer open --start` enables it." : "# Written by `pulse-peer service install`; `pulse-peer service remove` deletes it.")
        [Unit]
        Description=House Pulse peer agent (keeps this household in step with the family's other computers)
        After=network-online.target avahi-daemon.service
        Wants=network-online.target

        [Service]
        Type=simple
        ExecStart=\(quoted(executable)) run\(home.map { " --home " + quoted($0) } ?? "")
        Restart=on-failure
        RestartSec=5
        # SIGTERM lets the agent finish in-flight work and close its sessions (bounded).
        KillSignal=SIGTERM
        TimeoutStopSec=20
        NoNewPrivileges=yes
        PrivateTmp=yes

        [Install]
        WantedBy=default.target

        """
    }

    /// A word of an ExecStart line: double-quoted, with systemd's escapes for `\`, `"`,
    /// `%` (a specifier) and `$` (a variable).
    static func quoted(_ word: String) -> String {
        var out = "\""
        for character in word {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "%": out += "%%"
            case "$": out += "$$"
            default: out.append(character)
            }
        }
        return out + "\""
    }

    /// The path of the running binary.
    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard count > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the systemd user unit, enable it and start the agent now.",
            discussion: "Example: pulse-peer service install --home ~/family")
        @OptionGroup var options: HomeOptions

        func run() throws {
            let home = options.resolved
            if let problem = home.problem { throw CLIError(message: problem.cliMessage(Words.current)) }
            guard home.hasHousehold else { throw CLIError(HouseholdError.notInitialized(home.path)) }
            let path = ServiceCommand.unitPath
            let text = ServiceCommand.unit(executable: ServiceCommand.executablePath(), home: home.path)
            do {
                try Directories.make(String(path.prefix(upTo: path.lastIndex(of: "/")!)), mode: 0o755)
                try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch let error as HouseholdError {
                throw CLIError(error)
            } catch {
                throw CLIError(message: say("cli.service.cannot_write", ["path": .string(path), "reason": .string(String(cString: strerror(errno)))]))
            }
            print(say("cli.service.wrote", ["path": .string(path)]))
            for step in [["daemon-reload"], ["enable", "--now", ServiceCommand.unitName]] {
                let result = Systemctl.run(step)
                guard result.status == 0 else {
                    let params: [String: JSONValue] = [
                        "step": .string(step.joined(separator: " ")), "reason": .string(result.reason), "unit": .string(ServiceCommand.unitName),
                    ]
                    throw CLIError(message: say("cli.service.systemctl_failed", params))
                }
            }
            print(say("cli.service.installed"))
        }
    }

    /// The unit for the default home, as the Debian package installs it (scripts/package-deb.sh).
    struct UnitText: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "unit",
            abstract: "Print the systemd user unit for the default home (what the Debian package installs).",
            discussion: "Example: pulse-peer service unit --executable /usr/bin/pulse-peer")

        @Option(help: "The binary the unit runs (default: this one).") var executable: String?

        func run() throws { print(ServiceCommand.unit(executable: executable ?? ServiceCommand.executablePath(), home: nil), terminator: "") }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Whether the service is installed, enabled and running.", discussion: "Example: pulse-peer service status")

        func run() throws {
            let path = ServiceCommand.unitPath
            guard FileManager.default.fileExists(atPath: path) else {
                print(say("cli.service.not_installed", ["path": .string(path)]))
                return
            }
            // A label column: each label, then the value one space past the longest.
            let labels = ["unit_file", "runs", "enabled", "running", "systemd"].map { say("cli.service.label.\($0)") }
            let width = max(10, labels.map(\.count).max() ?? 0) + 1
            func row(_ label: Int, _ value: String) { print(labels[label].padding(width) + value) }
            row(0, path)
            if let text = try? String(contentsOfFile: path, encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("ExecStart=") })
            {
                row(1, String(line.dropFirst("ExecStart=".count)))
            }
            let enabled = Systemctl.run(["is-enabled", ServiceCommand.unitName])
            let active = Systemctl.run(["is-active", ServiceCommand.unitName])
            // "enabled", "active"…: systemctl's own words.
            if enabled.launched && active.launched && !active.output.isEmpty {
                row(2, enabled.output.isEmpty ? say("cli.service.unknown") : enabled.output)
                row(3, active.output)
            } else {
                row(4, say("cli.service.not_reachable", ["reason": .string(active.launched ? active.reason : enabled.reason)]))
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Stop and disable the service, and delete its unit file.", discussion: "Example: pulse-peer service remove")

        func run() throws {
            let path = ServiceCommand.unitPath
            guard FileManager.default.fileExists(atPath: path) else {
                print(say("cli.service.nothing_to_remove", ["path": .string(path)]))
                return
            }
            let disabled = Systemctl.run(["disable", "--now", ServiceCommand.unitName])
            guard unlink(path) == 0 else {
                throw CLIError(message: say("cli.service.cannot_delete", ["path": .string(path), "reason": .string(String(cString: strerror(errno)))]))
            }
            _ = Systemctl.run(["daemon-reload"])
            print(say("cli.service.removed", ["path": .string(path)]))
            if disabled.status != 0 {
                print(say("cli.service.not_told", ["reason": .string(disabled.reason), "unit": .string(ServiceCommand.unitName)]))
            } else {
                print(say("cli.service.stopped"))
            }
        }
    }
}

/// `systemctl --user …`, found on PATH, its output gathered.
enum Systemctl {
    struct Result {
        var launched: Bool
        var status: Int32
        var output: String
        /// Why it failed, in one line: its own words, or that it is not installed.
        var reason: String {
            if !launched { return say("cli.service.no_systemctl") }
            return output.split(separator: "\n").first.map(String.init) ?? say("cli.service.exit_status", ["status": JSONValue(Int(status))])
        }
    }

    static func run(_ arguments: [String]) -> Result { Spawned.run("systemctl", ["--user"] + arguments) }
}

/// Runs a program found on PATH and collects what it prints (``Subprocess``: a clean
/// signal mask, always reaped).
enum Spawned {
    typealias Result = Systemctl.Result

    static func run(_ program: String, _ arguments: [String]) -> Result {
        guard let (termination, text) = Subprocess.run(program, arguments) else { return Result(launched: false, status: -1, output: "") }
        let output = String(text.drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
        return Result(launched: true, status: termination.code, output: output)
    }

    /// Starts `program` detached from our output (a browser it starts may live on) and
    /// waits at most `seconds` for it to exit: true when it exited 0 or is still running
    /// (a browser in the foreground), false when it is missing or failed.
    static func launch(_ program: String, _ arguments: [String], seconds: Int = 5) -> Bool {
        guard case let .success(pid) = Subprocess.spawn(program, arguments, stdin: .null, stdout: .null, stderr: .null) else { return false }
        for _ in 0..<(seconds * 20) {
            switch Subprocess.poll(pid) {
            case let .ended(termination): return termination == .exited(0)
            case .gone: return false
            case .running: usleep(50_000)
            }
        }
        return true
    }
}
