import FoundationEssentials
import Logging
import Synchronization
import PulseModel
import PulseStore
import PulseHousehold
import PulseNotify

/// Shows notifications for this machine's person: the policy picks the events, the batcher
/// folds them, the desktop service and the hook deliver. Its timer runs only while a burst
/// is open (an idle agent has nothing to wake for).
actor Notifier {
    private var batcher = NotificationBatcher()
    private let store: StoreService
    private let desktop: DesktopNotifier?
    private let hook: HookNotifier?
    private let logger: Logger
    private let wake = Waiters()
    /// The last problem logged per channel (each logged once until it changes).
    private var reported: [String: String] = [:]
    /// Notifications due, for ``run()`` to deliver.
    private var outbox: [PendingNotification] = []

    /// The language when this computer's person chose none.
    private let language: String?

    init(store: StoreService, desktop: DesktopNotifier?, hook: HookNotifier?, language: String?, logger: Logger) {
        self.store = store
        self.language = language
        self.desktop = desktop
        self.hook = hook
        self.logger = logger
    }

    private(set) var status = AgentStatus.Notifications()

    func currentStatus() -> AgentStatus.Notifications {
        var status = self.status
        status.pendingEvents = batcher.pendingEvents + outbox.reduce(0) { $0 + $1.events.count }
        return status
    }

    func receive(_ events: [HouseholdEvent]) async {
        status.judgedEvents += events.count
        guard !events.isEmpty, desktop != nil || hook != nil else { return }
        let (me, settings, joined): (String?, NotificationSettings, Int64?)
        do { (me, settings, joined) = try await store.notificationContext() } catch {
            logger.warning("cannot read the notification settings", metadata: ["error": "\(error)"])
            return
        }
        batcher.windowMilliseconds = Int64(settings.windowSeconds) * 1000
        var groups: [NotificationGroup: [HouseholdEvent]] = [:]
        for event in events {
            if let group = NotificationPolicy.group(for: event, me: me, settings: settings, joined: joined) { groups[group, default: []].append(event) }
        }
        guard !groups.isEmpty else { return }
        // The words only now: most events (a computer in sync, another's own change) show
        // nothing here, and an agent that shows nothing never decodes a catalogue.
        let (words, problem): (MessageCatalogue, HouseholdError?)
        do { (words, problem) = try await store.notificationWords(language: language) } catch {
            logger.warning("cannot read the notification settings", metadata: ["error": "\(error)"])
            return
        }
        if let problem, reported["messages"] != problem.description {
            logger.warning("\(problem.description)")
        }
        reported["messages"] = problem?.description
        batcher.words = words
        for group in NotificationGroup.allCases {
            if let events = groups[group] { outbox += batcher.receive(events, group: group, now: WallClock.now()) }
        }
        wake.resumeAll()
    }

    /// Something of this computer's own, said on the desktop at once in its person's words
    /// (a phone asking to be added: issue 51); `summary` and `body` are catalogue keys.
    func alert(summary: String, body: String, _ params: [String: JSONValue]) async {
        guard let desktop else { return }
        let words: MessageCatalogue
        do { words = try await store.notificationWords(language: language).words } catch {
            logger.warning("cannot read the notification settings", metadata: ["error": "\(error)"])
            return
        }
        status.shown += 1
        report("desktop", await desktop.alert(summary: words.text(summary, params), body: words.text(body, params))?.description)
    }

    /// Delivery happens here, never in ``receive(_:)``: a slow hook or D-Bus call delays
    /// notifications, not the events' way to the feed.
    func run() async {
        while !Task.isCancelled {
            if !outbox.isEmpty {
                let due = outbox
                outbox = []
                await deliver(due)
                continue
            }
            let ticket = wake.register()
            guard let next = batcher.nextWake else {
                await wake.wait(ticket)
                continue
            }
            let delay = next - WallClock.now()
            if delay > 0 {
                let wake = self.wake
                await withTaskGroup(of: Void.self) { group in
                    group.addTask { await wake.wait(ticket) }
                    group.addTask { try? await LoopTimer.sleep(for: .milliseconds(delay)) }
                    await group.next()
                    group.cancelAll()
                }
            }
            outbox += batcher.tick(now: WallClock.now())
        }
    }

    private func deliver(_ notifications: [PendingNotification]) async {
        for notification in notifications {
            status.shown += 1
            logger.info(
                "notification",
                metadata: [
                    "summary": "\(notification.summary)", "count": "\(notification.count)",
                    "replaces": "\(notification.replaces.map(String.init) ?? "-")",
                ])
            if let desktop {
                let problem = await desktop.show(notification)
                status.desktopProblemCode = problem?.kind.rawValue
                status.desktopProblemDetail = problem?.detail
                report("desktop", problem?.description)
            }
            if let hook { report("hook", await hook.run(notification)) }
        }
    }

    private func report(_ channel: String, _ problem: String?) {
        if channel == "desktop" { status.desktopProblem = problem } else { status.hookProblem = problem }
        guard reported[channel] != problem else { return }
        reported[channel] = problem
        if let problem {
            logger.notice(
                "\(channel == "desktop" ? "desktop notifications unavailable" : "notification hook failed")",
                metadata: ["reason": "\(problem)"])
        } else {
            logger.info("\(channel == "desktop" ? "desktop notifications" : "notification hook") working again")
        }
    }
}
