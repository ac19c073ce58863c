import Crypto
import FoundationEssentials
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle
import PulseStore
import PulseProtocol
import PulseTransport
import PulseModel
import PulseHousehold
import PulseNotify

public struct AgentOptions: Sendable {
    public static let defaultPort = 47653

    public var home: HouseholdHome
    public var listenHost = "0.0.0.0"
    public var port = AgentOptions.defaultPort
    /// Added to the peers persisted in this machine's configuration.
    public var staticPeers: [PeerAddress] = []
    public var session = SessionOptions()
    /// Advertise and discover peers over mDNS (Avahi).
    public var mdns = true
    /// How far ahead of this clock a peer's change may be stamped and still be merged at
    /// once; later ones are held until this clock catches up (default 10 min).
    public var maxClockAheadMilliseconds = HybridClock.defaultMaxDriftMilliseconds
    /// How long after start the day's automatic backup is made (when it is missing): start-up
    /// and the first catch-up go first.
    public var firstBackupDelay: Duration = .seconds(120)
    /// Bounds on connections waiting for their handshake (docs/SECURITY.md).
    public var admission = AdmissionControl()
    /// Called after each batch from a peer is committed, with the changes it brought
    /// (notifications and benchmarks hang here). Runs on the session's task: keep it short.
    public var onApplied: (@Sendable (ApplyOutcome) -> Void)?
    /// Called at each hop of a change's way through this agent (``TraceHop``), for the
    /// benchmark's `--trace`; nil (the default) costs one nil check per hop.
    public var trace: (@Sendable (TraceHop) -> Void)?
    /// Desktop notifications through the session bus at this address (nil: none found),
    /// unless `desktopNotifications` is off.
    public var desktopNotifications = true
    public var notificationBus: String?
    /// `--on-notify`: a shell command run with each notification as JSON on its stdin.
    public var notifyHook: String?
    /// The language of notifications when this computer's person chose none (the agent's
    /// `--lang` or environment); nil: English.
    public var language: String?
    /// What the agent runs, as `--version` says it (status shows it: after an upgrade, which
    /// binary an agent runs).
    public var software: String?
    /// Front ends run beside sync (the web page), over ``LocalAPI``.
    public var frontEnds: [any AgentFrontEnd] = []

    public init(home: HouseholdHome) { self.home = home }

    /// The user's session bus: `DBUS_SESSION_BUS_ADDRESS`, else `$XDG_RUNTIME_DIR/bus` when it exists.
    public static func sessionBusAddress(environment: [String: String]) -> String? {
        DesktopNotifier.sessionBusAddress(environment: environment)
    }
}

/// What the agent reports once it listens.
public struct AgentReady: Sendable, Codable {
    public var event = "ready"
    public var port: Int
    public var machineID: String
    public var householdID: String
    public var controlSocket: String
    /// The web page's address, when one serves (`pulse-peer open` logs in to it).
    public var web: String?
}

/// The long-running agent: listens for peers, dials the configured ones (reconnecting
/// with backoff), runs a session per connection and the control socket, until its task
/// is cancelled or a graceful shutdown (SIGTERM/SIGINT through ServiceLifecycle) begins.
public struct PeerAgent: Service {
    let options: AgentOptions
    let logger: Logger
    let onReady: @Sendable (AgentReady) -> Void

    public init(options: AgentOptions, logger: Logger, onReady: @escaping @Sendable (AgentReady) -> Void) {
        self.options = options
        self.logger = logger
        self.onReady = onReady
    }

    public func run() async throws {
        // One agent per home, taken before anything in the home is opened (HomeLock.swift).
        let lock = try HomeLock(home: options.home)
        defer { withExtendedLifetime(lock) {} }
        let store = try StoreService(
            home: options.home, maxClockAheadMilliseconds: options.maxClockAheadMilliseconds,
            agentToken: lock.token)
        try await store.rememberStaticPeers(options.staticPeers)
        let identity = await store.identity()
        let tls = try PeerTLS(identity: identity)
        let secret = try await store.membershipKey()
        // "pulse-peer 0.10.0 (commit …)": the release, named to a peer too old to sync with.
        let release = options.software.flatMap { $0.split(separator: " ").dropFirst().first.map(String.init) }
        let engine = SyncEngine(localMachine: identity.machineID, release: release)
        let desktop = options.desktopNotifications ? options.notificationBus.map { DesktopNotifier(address: $0) } : nil
        let notifier = Notifier(
            store: store, desktop: desktop, hook: options.notifyHook.map { HookNotifier(command: $0) },
            language: options.language, logger: logger)
        if !options.desktopNotifications {
            logger.info("desktop notifications off (--no-desktop-notifications)")
        } else if options.notificationBus == nil {
            logger.notice("desktop notifications unavailable", metadata: ["reason": "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)"])
        }
        let feed = EventFeed()
        let events = try await EventPipeline(store: store, feed: feed, notifier: notifier, logger: logger)
        let context = Context(
            store: store, engine: engine, tls: tls, secret: secret,
            options: options.session.naming(release), logger: logger,
            onApplied: options.onApplied, trace: options.trace, invitations: InvitationBook(),
            events: events, feed: feed, notifier: notifier)

        let listener = try await PeerTransport.listen(
            host: options.listenHost, port: options.port, tls: tls,
            admission: options.admission)
        let port = listener.channel.localAddress?.port ?? options.port
        let socketPath = AgentControl.socketPath(options.home)
        let control = try await ControlServer.bind(path: socketPath)
        let noticePath = ChangeNotices.path(options.home)
        let notices = try ChangeNotices.openForReading(noticePath)
        let peers = try await store.staticPeers()
        var api = LocalAPI(
            callMethod: { method, params, caller in await call(method, params, as: caller, context: context) },
            inviteMethod: { member, minutes in await invite(member: member, minutes: minutes, context: context) },
            currentStatus: { try await status(context, port: port) }, feed: feed, logins: context.logins,
            frontEndMethods: context.frontEndMethods, home: options.home)
        api.alertMethod = { summary, body, params in await context.notifier.alert(summary: summary, body: body, params) }
        api.withHousehold = { writes, body in try await context.store.perform(writes: writes, body) }
        var started: [FrontEndHandle] = []
        for frontEnd in options.frontEnds {
            let handle = try await frontEnd.start(api)
            if let problem = handle.problem { logger.warning("front end not serving", metadata: ["reason": "\(problem)"]) }
            started.append(handle)
        }
        let frontEnds = started
        context.frontEnds.set(frontEnds.map { ($0.url, $0.problem) })
        context.frontEndMethods.set(frontEnds)
        logger.info("agent listening", metadata: ["port": "\(port)", "peers": "\(peers.map(\.description))"])
        // The kids' catalogue is checked at start (sync does not need it: a bad file is
        // reported here and in status, and the kids commands refuse it, naming it).
        do { _ = try Catalogue.load(home: options.home) } catch {
            logger.error("the kids' catalogue cannot be used", metadata: ["error": "\(error)"])
        }
        onReady(
            AgentReady(
                port: port, machineID: identity.machineID, householdID: store.householdID, controlSocket: socketPath,
                web: frontEnds.compactMap(\.url).first))

        do {
            try await cancelWhenGracefulShutdown {
                try await runAll(
                    listener: listener, control: control, notices: notices, peers: peers, context: context,
                    port: port, frontEnds: frontEnds, clicks: desktop?.clicks)
            }
        } catch is CancellationError {
            // A graceful shutdown (or the caller's cancellation): not a failure.
        }
        feed.finishAll()
        await engine.closeAll()
        try? FileManager.default.removeItem(atPath: socketPath)
        try? FileManager.default.removeItem(atPath: noticePath)
        logger.info("agent stopped")
    }

    private func runAll(
        listener: NIOAsyncChannel<PeerChannel, Never>,
        control: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>, notices: CInt,
        peers: [PeerAddress], context: Context, port: Int, frontEnds: [FrontEndHandle],
        clicks: AsyncStream<NotificationGroup>?
    ) async throws {
        let directory = PeerDirectory()
        try await withThrowingDiscardingTaskGroup { group in
            for frontEnd in frontEnds { group.addTask { try await frontEnd.serve() } }
            group.addTask { try await accept(listener, context) }
            group.addTask {
                try await ControlServer.serve(control, logger: logger, feed: context.feed) { request in
                    await handle(request, context: context, port: port)
                }
            }
            group.addTask { try await ChangeNotices.serve(notices) { await localChange(context) } }
            group.addTask { await context.events.run() }
            group.addTask {
                // Every commit of this agent's own, whoever made it, goes to the peers at once.
                for await _ in context.store.localWrites {
                    await context.engine.storeChanged()
                    await context.events.localChanged()
                }
            }
            group.addTask { await context.notifier.run() }
            if let clicks { group.addTask { await PageOpener.openOnClicks(clicks, context: context) } }
            for peer in peers {
                if let key = await directory.addStatic(peer) {
                    group.addTask { await keepSession(key, directory, context) }
                }
            }
            group.addTask { await announceSyncState(context) }
            group.addTask { await generateRecurringTasksDaily(context) }
            group.addTask { await backUpDaily(context) }
            group.addTask { try await watchDatabase(context) }
            group.addTask { await releaseHeldChanges(context) }
            if options.mdns {
                group.addTask { await runDiscovery(context, port: port, directory: directory) }
            } else {
                await context.engine.setDiscovery(AgentStatus.discoveryOff)
            }
        }
    }

    /// What every session needs.
    struct Context: Sendable {
        let store: StoreService
        let engine: SyncEngine
        let tls: PeerTLS
        let secret: SymmetricKey
        let options: SessionOptions
        let logger: Logger
        let onApplied: (@Sendable (ApplyOutcome) -> Void)?
        let trace: (@Sendable (TraceHop) -> Void)?
        /// The open pairing invitation.
        let invitations: InvitationBook
        /// Changes → events → the feed and the notifier.
        let events: EventPipeline
        let feed: EventFeed
        let notifier: Notifier
        /// Login tokens for the front ends (`open`), and where they serve.
        let logins = FrontEndLogins()
        let frontEnds = FrontEndBook()
        let frontEndMethods = FrontEndMethods()
        /// Resumed when a session holds changes stamped ahead of this clock.
        let heldArrived = Waiters()

        func session(_ connection: PeerChannel, role: MembershipProof.Role, origin: PeerOrigin) async -> String? {
            let id = await engine.newSessionID()
            var logger = self.logger
            logger[metadataKey: "remote"] = "\(connection.remoteAddress)"
            return await PeerSession(
                id: id, connection: connection, role: role, origin: origin,
                host: self, logger: logger
            ).run()
        }
    }

    private func accept(_ listener: NIOAsyncChannel<PeerChannel, Never>, _ context: Context) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            try await listener.executeThenClose { connections in
                for try await connection in connections {
                    group.addTask {
                        let remote = connection.remoteAddress
                        if let reason = await context.session(connection, role: .server, origin: .inbound) {
                            context.logger.info("inbound session ended", metadata: ["remote": "\(remote)", "reason": "\(reason)"])
                        }
                    }
                }
            }
        }
    }

    /// Stops the agent (the error ends `run()`) when the database file is deleted, replaced
    /// or truncated under it: its connection would go on reading and writing a file that
    /// is no longer the household's. Woken by the kernel when the file or its directory
    /// changes (``DatabaseWatch``), then one `stat` (never an open: see DatabaseFile).
    private func watchDatabase(_ context: Context) async throws {
        let file = context.store.file
        let logger = context.logger
        try await DatabaseWatch.run(path: file.path, logger: logger) {
            do {
                try file.checkUnchanged()
            } catch {
                logger.critical("database gone", metadata: ["error": "\(error)"])
                throw error
            }
        }
    }

    /// Merges the changes held for being stamped too far ahead of this clock once it has
    /// caught up with them. Sleeps until the earliest is due (at most a minute at a time,
    /// in case this machine's clock is set right meanwhile), or, with none held, until a
    /// session holds some (``Context/heldArrived``): no timer while nothing is held.
    private func releaseHeldChanges(_ context: Context) async {
        while !Task.isCancelled {
            let ticket = context.heldArrived.register()
            var wait: Int64?
            do {
                if let outcome = try await context.store.releaseHeldChanges(), !outcome.applied.isEmpty {
                    await context.events.applied(outcome)
                    context.logger.notice("merged changes held for a clock ahead", metadata: ["changes": "\(outcome.applied.count)"])
                    await context.engine.applied(outcome.applied.count)
                    await context.engine.storeChanged()
                }
                wait = try await context.store.millisecondsUntilHeldDue().map { min($0 + 1, 60_000) }
            } catch {
                context.logger.warning("cannot merge held changes", metadata: ["error": "\(error)"])
                wait = 60_000
            }
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await context.heldArrived.wait(ticket) }
                if let wait { group.addTask { try? await LoopTimer.sleep(for: .milliseconds(wait)) } }
                await group.next()
                group.cancelAll()
            }
        }
    }

    /// Tells the live feed each time the household's sync state, as `status` judges it,
    /// changes (``HouseholdEvent/Kind/peerSync``): woken by the engine's changes, judged at
    /// most every 100 ms, so a catch-up's many batches cost a few vector reads.
    private func announceSyncState(_ context: Context) async {
        var last: AgentStatus.SyncSummary?
        while !Task.isCancelled {
            // Nobody listening (no page, no `watch`): nothing read, nothing kept, no wake-up
            // per change — asleep until a subscriber comes.
            if !context.feed.listens(to: .sync) {
                last = nil
                let ticket = context.feed.subscribed.register()
                if !context.feed.listens(to: .sync) { await context.feed.subscribed.wait(ticket) }
                continue
            }
            let seen = await context.engine.generation
            if let vector = try? await context.store.versionVector() {
                let summary = AgentStatus.SyncSummary(await context.engine.peerStatus(localVector: vector, labels: [:]))
                // First judged for a listener: told too (it may have loaded the status just before).
                if last != summary {
                    context.feed.publish([HouseholdEvent(type: .peerSync, title: summary.state.rawValue, time: WallClock.now())])
                }
                last = summary
            }
            // A change after a quiet spell is judged at once; then at most every 100 ms.
            do { try await LoopTimer.sleep(for: .milliseconds(100)) } catch { return }
            await context.engine.changed(after: seen)
        }
    }

    /// Creates the recurring tasks of each new day: at start, then just after every local
    /// midnight (the only timer of an idle agent besides keepalive, which runs only with a peer).
    private func generateRecurringTasksDaily(_ context: Context) async {
        while !Task.isCancelled {
            do {
                _ = try await context.store.generateRecurringTasks() // told by ``StoreService/localWrites``
            } catch {
                context.logger.warning("cannot generate recurring tasks", metadata: ["error": "\(error)"])
            }
            do { try await LoopTimer.sleep(for: .seconds(Days.secondsUntilNextMidnight())) } catch { return }
        }
    }

    /// The automatic backups (`Household.backUpDaily`): `firstBackupDelay` after start when
    /// today's are missing, then a few minutes after every local midnight; on a dispatch
    /// thread (``onDispatchThread(_:)``).
    private func backUpDaily(_ context: Context) async {
        let home = options.home
        do { try await LoopTimer.sleep(for: options.firstBackupDelay) } catch { return }
        while !Task.isCancelled {
            let outcome: Result<[String], Error>
            do { outcome = .success(try await onDispatchThread { try Household.backUpDaily(home) }) } catch { outcome = .failure(error) }
            var next = Duration.seconds(Days.secondsUntilNextMidnight() + 300)
            switch outcome {
            case let .success(made):
                if !made.isEmpty { context.logger.info("backed up the household", metadata: ["files": "\(made.joined(separator: ", "))"]) }
                await context.engine.setBackupProblem(nil)
            case let .failure(error):
                context.logger.warning("cannot back up the household; trying again in 10 min", metadata: ["error": "\(error)"])
                await context.engine.setBackupProblem("the automatic backup failed (tried again every 10 min): \(error)")
                next = min(next, .seconds(600))
            }
            // After midnight, a few minutes late: the recurring tasks of the day are made first.
            do { try await LoopTimer.sleep(for: next) } catch { return }
        }
    }

    /// A writer on this machine committed (its notice): every session looks for what to send,
    /// and the change becomes events.
    func localChange(_ context: Context) async {
        context.trace?(.noticeReceived)
        await context.engine.storeChanged()
        context.trace?(.sessionsSignalled)
        await context.events.localChanged()
    }
}

/// The hops of one change through two agents, in order (`AgentOptions.trace`): on the
/// writer's agent, the CLI's notice read from the pipe, every session told, the session's
/// sender awake, the snapshot opened and the peer's standing read from it (on the sender's
/// connection), the batch read from the snapshot, written to TLS; on the receiver's, the batch decoded, its apply started on
/// the store, committed, and the session back from the store.
public enum TraceHop: String, Sendable, CaseIterable {
    case noticeReceived = "notice: read from the pipe"
    case sessionsSignalled = "engine: sessions told"
    case senderWoken = "sender: awake"
    case standingChecked = "sender: snapshot opened, standing checked"
    case batchRead = "sender: batch read"
    case batchWritten = "sender: written to TLS"
    case batchDecoded = "receiver: batch decoded"
    case applyStarted = "store: apply started"
    case committed = "store: committed"
    case batchApplied = "receiver: back from the store"
}
