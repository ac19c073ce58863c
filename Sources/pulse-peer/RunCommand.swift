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
        guard (0...65535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
        guard (1...3600).contains(keepalive) else { throw ValidationError("--keepalive must be between 1 and 3600 seconds") }
        guard (0...86_400).contains(firstBackupAfter) else { throw ValidationError("--first-backup-after must be between 0 and 86400 seconds") }
        guard (1...86_400).contains(maxClockAhead) else {
            throw ValidationError("--max-clock-ahead must be between 1 and 86400 seconds")
        }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
        if let onNotify, onNotify.allSatisfy({ $0 == " " || $0 == "\t" }) {
            throw ValidationError("--on-notify needs a command")
        }
        if let web, case let .failure(error) = WebAddress.parse(web) { throw ValidationError(error.description) }
        for peer in peers where PeerAddress(peer) == nil {
            throw ValidationError("--peer \(peer.debugDescription) is not HOST:PORT")
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
        agentOptions.listenHost = listen
        agentOptions.staticPeers = peers.compactMap(PeerAddress.init)
        agentOptions.session.keepalive = .seconds(keepalive)
        agentOptions.mdns = !noMdns
        agentOptions.maxClockAheadMilliseconds = Int64(maxClockAhead) * 1000
        agentOptions.firstBackupDelay = .seconds(firstBackupAfter)
        agentOptions.notifyHook = onNotify
        agentOptions.desktopNotifications = !noDesktopNotifications
        agentOptions.notificationBus = AgentOptions.sessionBusAddress(environment: ProcessInfo.processInfo.environment)
        switch web.map(WebAddress.parse) ?? .success(.default) {
        case let .success(address?):
            agentOptions.frontEnds = [WebFrontEnd(address: address, required: web != nil, logger: logger)]
        case .success(nil): break
        case let .failure(error): throw CLIError(error)
        }
        guard options.resolved.hasHousehold else { throw CLIError(HouseholdError.notInitialized(options.resolved.path)) }
        let agent = PeerAgent(options: agentOptions, logger: logger) { ready in
            if let line = try? JSONEncoder().encode(ready) {
                // One write(2) of the whole line: a reader waiting for it sees it at once.
                let bytes = [UInt8](line) + [UInt8(ascii: "\n")]
                _ = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
            }
        }
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
        guard (1...3600).contains(timeout) else { throw ValidationError("--timeout must be between 1 and 3600 seconds") }
        guard (0...1000).contains(peers) else { throw ValidationError("--peers must be between 0 and 1000") }
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
        let m = status.machine
        print("This machine  \(m.machineID.prefix(12))  \(m.household)\(m.member.map { "  member \($0)" } ?? "")")
        print("  listening on \(m.listenAddress):\(m.port), \(m.changes) changes")
        print("  discovery: \(m.discovery)")
        let n = m.notifications
        print(
            "  notifications: \(n.shown) shown" + (n.pendingEvents > 0 ? ", \(n.pendingEvents) event(s) gathering" : "")
                + (m.subscribers > 0 ? "; \(m.subscribers) live-feed client(s)" : ""))
        if let problem = n.desktopProblem { print("    desktop: \(problem)") }
        if let problem = n.hookProblem { print("    --on-notify: \(problem)") }
        for warning in m.warnings { print("  warning: \(warning)") }
        for refusal in m.refusals { print("  \(refusal.text) (\(Ago.describe(refusal.at)))") }
        if let expires = m.invitationExpires {
            print(
                "  a pairing invitation is open for \(max(0, (expires - WallClock.now()) / 60_000) + 1) min more, "
                    + "\(m.invitationAttemptsLeft ?? 0) attempt(s) left")
        }
        print(status.peers.isEmpty ? "No peers yet." : "Peers (\(status.peers.count)):")
        let now = WallClock.now()
        for peer in status.peers {
            let name = peer.name ?? "(unknown)"
            let id = peer.machineID.map { String($0.prefix(12)) } ?? "?"
            let seen = peer.lastSeen.map { "last seen \(max(0, now - $0) / 1000)s ago" } ?? "never seen"
            let sync: String
            if peer.inSync {
                sync = "in sync"
            } else if let lacks = peer.peerLacks, let weLack = peer.weLack {
                sync = "peer lacks \(lacks), we lack \(weLack)\(peer.state == .connected ? " (syncing)" : "")"
            } else {
                sync = "not synced yet"
            }
            print("  \(name)  \(id)  \(peer.state.rawValue)  via \(peer.foundBy.joined(separator: "+")) \(peer.addresses.joined(separator: ", "))")
            print("      \(seen); \(sync)\(peer.lastError.map { "; last error: \($0)" } ?? "")")
            if let problem = peer.problem { print("      not in sync: \(problem)") }
        }
    }
}

extension WaitCondition.Kind: ExpressibleByArgument {}
