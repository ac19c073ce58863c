import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import PeerSync
import PulseWeb
import ServiceLifecycle

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the agent: keep this household in step with the other machines.",
        discussion: """
            Listens on TCP (default port \(AgentOptions.defaultPort)), connects to the configured peers, and runs until
            SIGINT or SIGTERM. When listening it prints one JSON line to standard output:
              {"event":"ready","port":…,"machineID":…,"householdID":…,"controlSocket":…,"web":"http://127.0.0.1:47654"}
            It serves the family's web page on this machine (`pulse-peer open`; --web off to not).
            Logs go to standard error. To keep it running in the background: `pulse-peer service install`.
            Example: pulse-peer run --on-notify 'notify-send "$(jq -r .summary)"'
            """
    )

    @OptionGroup var options: HomeOptions

    @Option(help: "TCP port to listen on (0: any free port, reported in the ready line).")
    var port = AgentOptions.defaultPort

    @Option(help: "Address to listen on.")
    var listen = "0.0.0.0"

    @Option(name: .customLong("peer"), help: "A peer's HOST:PORT (repeatable); remembered for later runs.")
    var peers: [String] = []

    @Flag(help: "Do not advertise or discover peers over mDNS (static peers keep working).")
    var noMdns = false

    @Option(help: "Seconds between keepalive pings; a peer silent for three is disconnected.")
    var keepalive = 15

    @Option(help: "Seconds after start before the day's automatic backup, when it is missing (the home's backups/).")
    var firstBackupAfter = 120

    @Option(
        help: ArgumentHelp(
            "Seconds a peer's change may be stamped ahead of this clock and still merge at once.",
            discussion: "Later ones are kept and merged when this clock catches up (docs/ARCHITECTURE.md)."))
    var maxClockAhead = Int(HybridClock.defaultMaxDriftMilliseconds / 1000)

    @Option(
        name: .customLong("on-notify"),
        help: ArgumentHelp(
            "A shell command run for each notification, with the notification as one JSON object on its standard input.",
            discussion: "Runs beside the desktop notifications (docs/API.md, \"Notifications\"); given 10 s each."))
    var onNotify: String?

    @Flag(help: "Show no desktop notifications (the --on-notify hook and the live feed still work).")
    var noDesktopNotifications = false

    @Option(
        help: ArgumentHelp(
            "Where the web page listens: HOST:PORT on this machine (loopback only), or off.",
            discussion: "Default 127.0.0.1:\(WebAddress.defaultPort); `pulse-peer open` opens it. When the default port is taken "
                + "the agent runs without its page (status says why); an address given here must be free."))
    var web: String?

    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel = "info"

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError(say("cli.run.port_range")) }
        guard (1...3600).contains(keepalive) else { throw ValidationError(say("cli.run.keepalive_range")) }
        guard (0...86_400).contains(firstBackupAfter) else { throw ValidationError(say("cli.run.first_backup_range")) }
        guard (1...86_400).contains(maxClockAhead) else { throw ValidationError(say("cli.run.max_clock_ahead_range")) }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError(say("cli.run.log_level_unknown", ["level": .string(logLevel)])) }
        if let onNotify, onNotify.allSatisfy({ $0 == " " || $0 == "\t" }) {
            throw ValidationError(say("cli.run.on_notify_empty"))
        }
        if let web, case let .failure(error) = WebAddress.parse(web) { throw ValidationError(Self.message(error)) }
        for peer in peers where PeerAddress(peer) == nil {
            throw ValidationError(say("cli.run.peer_format", ["peer": .string(peer.debugDescription)]))
        }
    }

    /// One write(2) of a whole line to standard output: a reader waiting for it sees it at once.
    static func printLine<Bytes: Sequence>(_ line: Bytes) where Bytes.Element == UInt8 {
        let bytes = [UInt8](line) + [UInt8(ascii: "\n")]
        _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
    }

    /// `--web`'s refusal in the reader's words.
    static func message(_ error: WebAddressError) -> String {
        switch error {
        case let .notHostPort(text): say("cli.run.web_not_host_port", ["port": JSONValue(WebAddress.defaultPort), "text": .string(text.debugDescription)])
        case let .notLoopback(host): say("cli.run.web_not_loopback", ["host": .string(host.debugDescription)])
        }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "pulse-peer")
        var agentOptions = AgentOptions(home: options.resolved)
        agentOptions.port = port
        agentOptions.software = BuildStamp.description
        agentOptions.listenHost = listen
        agentOptions.staticPeers = peers.compactMap(PeerAddress.init)
        agentOptions.session.keepalive = .seconds(keepalive)
        agentOptions.mdns = !noMdns
        agentOptions.maxClockAheadMilliseconds = Int64(maxClockAhead) * 1000
        agentOptions.firstBackupDelay = .seconds(firstBackupAfter)
        agentOptions.notifyHook = onNotify
        agentOptions.desktopNotifications = !noDesktopNotifications
        agentOptions.notificationBus = AgentOptions.sessionBusAddress(environment: ProcessInfo.processInfo.environment)
        var webAddress: WebAddress?
        switch web.map(WebAddress.parse) ?? .success(.default) {
        case let .success(address?):
            webAddress = address
            agentOptions.frontEnds = [WebFrontEnd(address: address, required: web != nil, logger: logger)]
        case .success(nil): break
        case let .failure(error): throw CLIError(message: Self.message(error))
        }
        // The phones' listener: off until the household turns it on (`phones on`, the page).
        agentOptions.frontEnds.append(PhoneFrontEnd(logger: logger))
        let ready: @Sendable (AgentReady) -> Void = { ready in
            if let line = try? JSONEncoder().encode(ready) { Self.printLine(line) }
        }
        // A computer with no household yet serves the page's welcome first (start or join),
        // then runs the agent on the household made: `run` (and the service unit) work from
        // the first minute, and the family never needs `init` or `join` in a terminal.
        let welcome =
            options.resolved.hasHousehold
            ? nil
            : WelcomeAgent(options: agentOptions, logger: logger) { [home = options.resolved] web in
                let line = #"{"event":"welcome","web":"# + (web.map { "\"\($0)\"" } ?? "null") + "}"
                Self.printLine(Array(line.utf8))
                // No page to welcome anyone (--web off): said, with what works.
                if web == nil { Output.toStderr(say("cli.run.welcome_no_page", ["path": .string(home.path)]) + "\n") }
            }
        let agent = FirstRunThenAgent(
            welcome: welcome, options: agentOptions, web: webAddress, webRequired: web != nil, logger: logger, onReady: ready)
        var configuration = ServiceGroupConfiguration(
            services: [.init(service: agent)], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        // Shutdown is bounded: what is still running 5 s after SIGTERM is cancelled, and a
        // cancellation that takes 3 s more ends the process (far inside systemd's 90 s).
        configuration.maximumGracefulShutdownDuration = .seconds(5)
        configuration.maximumCancellationDuration = .seconds(3)
        let group = ServiceGroup(configuration: configuration)
        do {
            try await group.run()
        } catch {
            throw CLIError(error)
        }
    }
}

/// The welcome while the home has no household (``WelcomeAgent``), then the agent; the agent
/// serves the page where the welcome did (a page open in a browser carries on signed in).
struct FirstRunThenAgent: Service {
    let welcome: WelcomeAgent?
    let options: AgentOptions
    let web: WebAddress?
    let webRequired: Bool
    let logger: Logger
    let onReady: @Sendable (AgentReady) -> Void

    func run() async throws {
        var options = self.options
        if let welcome {
            let outcome = try await welcome.run()
            guard outcome.household, !Task.isCancelled else { return }
            if let peer = outcome.peer, !options.staticPeers.contains(peer) { options.staticPeers.append(peer) }
            if let web, let port = outcome.web.flatMap(URL.init(string:))?.port {
                options.frontEnds = [WebFrontEnd(address: web.on(port: port), required: webRequired, logger: logger), PhoneFrontEnd(logger: logger)]
            }
        }
        try await PeerAgent(options: options, logger: logger, onReady: onReady).run()
    }
}

struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show this machine and its peers, as the running agent sees them.",
        discussion: """
            Exits non-zero when no agent is running for the home directory.
            Example: pulse-peer status --wait synced --timeout 30   (wait until in step with every peer)
            """
    )

    @OptionGroup var options: HomeOptions

    @Flag(help: "Print JSON.")
    var json = false

    @Option(help: "Wait until the peers are `synced` or `disconnected`, then print the status.")
    var wait: WaitCondition.Kind?

    @Option(help: "With --wait: how many peers (default 1).")
    var peers = 1

    @Option(help: "With --wait: give up (exit non-zero) after this many seconds.")
    var timeout = 60

    func validate() throws {
        guard (1...3600).contains(timeout) else { throw ValidationError(say("cli.status.timeout_range")) }
        guard (0...1000).contains(peers) else { throw ValidationError(say("cli.status.peers_range")) }
    }

    func run() throws {
        let status: AgentStatus
        do {
            if let wait {
                status = try AgentControl.wait(until: WaitCondition(wait, peers: peers), timeout: timeout, home: options.resolved)
            } else {
                status = try AgentControl.status(home: options.resolved)
            }
        } catch {
            throw CLIError(error)
        }
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            print(String(decoding: try encoder.encode(status), as: UTF8.self))
            return
        }
        // The discovery, problem, warning, refusal and last-error texts are the agent's own
        // words (PeerSync's AgentStatus), shown as they come.
        let m = status.machine
        let machine: [String: JSONValue] = [
            "id": .string(String(m.machineID.prefix(12))), "household": .string(m.household), "member": .string(m.member ?? ""),
        ]
        print(say(m.member == nil ? "cli.status.this_machine" : "cli.status.this_machine_member", machine))
        let changes = JSONValue.integer(Int64(clamping: m.changes))
        print("  " + say("cli.status.listening", ["address": .string(m.listenAddress), "port": JSONValue(m.port), "changes": changes]))
        // The agent's own state for --no-mdns, in the reader's words (other states are Avahi's).
        let discovery = m.discovery == AgentStatus.discoveryOff ? say("cli.status.discovery_off") : m.discovery
        print("  " + say("cli.status.discovery", ["discovery": .string(discovery)]))
        if let software = m.software, let protocols = m.protocols {
            print("  " + say("cli.status.software", ["software": .string(software), "protocol": .string(protocols)]))
        }
        let n = m.notifications
        let counts: [String: JSONValue] = ["shown": JSONValue(n.shown), "pending": JSONValue(n.pendingEvents), "clients": JSONValue(m.subscribers)]
        print("  " + say("cli.status.notifications", counts))
        if let problem = n.desktopProblem {
            // In the reader's words when the agent gave a code (the system's detail as it said it).
            let words = n.desktopProblemCode.map { say("desktop.problem.\($0)", or: problem, ["detail": .string(n.desktopProblemDetail ?? "")]) } ?? problem
            print("    " + say("cli.status.desktop_problem", ["problem": .string(words)]))
        }
        if let problem = n.hookProblem { print("    " + say("cli.status.hook_problem", ["problem": .string(problem)])) }
        for notice in m.notices { print("  " + say("cli.status.warning", ["warning": .string(notice.text(Words.current))])) }
        for refusal in m.refusals { print("  " + say("cli.status.refusal", ["text": .string(refusal.text), "ago": .string(Ago.describe(refusal.at))])) }
        if let expires = m.invitationExpires {
            let minutes = JSONValue.integer(max(0, (expires - WallClock.now()) / 60_000) + 1)
            print("  " + say("cli.status.invitation", ["minutes": minutes, "attempts": JSONValue(m.invitationAttemptsLeft ?? 0)]))
        }
        print(status.peers.isEmpty ? say("cli.status.no_peers") : say("cli.status.peers", ["count": JSONValue(status.peers.count)]))
        let now = WallClock.now()
        for peer in status.peers {
            let name = peer.name ?? say("cli.status.unknown_peer")
            let id = peer.machineID.map { String($0.prefix(12)) } ?? "?"
            let seen = peer.lastSeen.map { say("cli.status.last_seen", ["seconds": .integer(max(0, now - $0) / 1000)]) } ?? say("cli.status.never_seen")
            let sync: String
            if peer.inSync {
                sync = say("cli.status.in_sync")
            } else if let lacks = peer.peerLacks, let weLack = peer.weLack {
                let params: [String: JSONValue] = ["lacks": .integer(Int64(clamping: lacks)), "weLack": .integer(Int64(clamping: weLack))]
                sync = say(peer.state == .connected ? "cli.status.lacks_syncing" : "cli.status.lacks", params)
            } else {
                sync = say("cli.status.not_synced")
            }
            let how = peer.foundBy.map { say("cli.status.found_by", ["how": .string($0)]) }.joined(separator: "+")
            let params: [String: JSONValue] = [
                "name": .string(name), "id": .string(id), "state": .string(peer.state.rawValue), "how": .string(how),
                "addresses": JSONValue(peer.addresses),
            ]
            print("  " + say("cli.status.peer", params))
            let error = peer.lastError.map { "; " + say("cli.status.last_error", ["error": .string($0)]) } ?? ""
            let software =
                peer.protocolVersion.map { version in
                    "; " + say("cli.status.peer_software", ["release": .string(peer.release ?? "?"), "protocol": .string("\(version)")])
                } ?? ""
            print("      \(seen); \(sync)\(software)\(error)")
            if let problem = peer.notice?.text(Words.current) ?? peer.problem {
                print("      " + say("cli.status.not_in_sync", ["problem": .string(problem)]))
            }
        }
    }
}

extension WaitCondition.Kind: ExpressibleByArgument {}
