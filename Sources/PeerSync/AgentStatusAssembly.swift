import FoundationEssentials
import PulseModel
import PulseProtocol
import PulseNotify
import PulseStore

/// What `pulse-peer status` says (``AgentStatus``): this machine, its peers, and its notices
/// as data (each reader renders them in their words) and in English.
extension PeerAgent {
    func status(_ context: Context, port: Int) async throws -> AgentStatus {
        let store = context.store
        let vector = try await store.versionVector()
        let summary = try await store.summary()
        var labels: [ReplicaID: String] = [:]
        for replica in await context.engine.knownReplicas() {
            if let label = try await store.label(of: replica) { labels[replica] = label }
        }
        let machine = AgentStatus.Machine(
            machineID: store.machineID, replicaID: await store.replicaID.description, householdID: store.householdID,
            household: summary.household, member: summary.member, listenAddress: options.listenHost, port: port,
            changes: vector.total, discovery: await context.engine.discoveryState,
            appliedChanges: await context.engine.appliedChanges, pendingWaits: await context.engine.pendingWaits,
            warnings: await context.engine.warnings, refusals: await context.engine.refusals,
            invitationExpires: context.invitations.current()?.expires,
            invitationAttemptsLeft: context.invitations.current()?.attemptsLeft)
        var status = AgentStatus(machine: machine, peers: await context.engine.peerStatus(localVector: vector, labels: labels))
        status.machine.notifications = await context.notifier.currentStatus()
        if !options.desktopNotifications {
            status.machine.notifications.desktopProblem = nil
            status.machine.notifications.desktopProblemCode = nil
            status.machine.notifications.desktopProblemDetail = nil
        } else if options.notificationBus == nil {
            let problem = DesktopUnavailable(.noBus)
            status.machine.notifications.desktopProblem = problem.description
            status.machine.notifications.desktopProblemCode = problem.kind.rawValue
        }
        status.machine.subscribers = context.feed.subscriberCount
        status.machine.web = context.frontEnds.url
        status.machine.software = options.software
        let spoken = PeerMessage.Hello.supportedVersions
        status.machine.protocols = spoken.count == 1 ? "\(spoken.lowerBound)" : "\(spoken.lowerBound)–\(spoken.upperBound)"
        // Warnings as data (each reader renders them in their words), and in English.
        var notices = status.machine.warnings.map(AgentStatus.Notice.problem)
        if let problem = context.frontEnds.problem { notices.append(.problem(problem)) }
        let bound = options.maxClockAheadMilliseconds
        notices += AgentStatus.clockWarnings(status.peers, maxAheadMilliseconds: bound)
        do { _ = try Catalogue.load(home: options.home) } catch {
            let refusal = Refusal(error)
            notices.append(AgentStatus.Notice("refusal.\(refusal.code.rawValue)", refusal.params))
        }
        if let back = try await store.lastWentBackInTime(), ReplicaStore.systemClock() - back.at < 7 * 86_400_000 {
            notices.append(back.notice(ago: AgentStatus.describe(milliseconds: ReplicaStore.systemClock() - back.at)))
        }
        let held = try await store.heldChanges()
        if held.count > 0 {
            notices.append(
                AgentStatus.Notice(
                    "status.held_changes",
                    [
                        "count": JSONValue(held.count), "ahead": .string(AgentStatus.describe(milliseconds: held.aheadMilliseconds)),
                        "limit": .string(AgentStatus.describe(milliseconds: bound)),
                    ]))
        }
        status.machine.notices = notices
        status.machine.warnings = notices.map { $0.text() }
        return status
    }
}
