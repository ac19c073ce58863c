import PulseHousehold
import PulseNotify

/// A notification for a phone's page (issue 42): what the desktop would show its member.
public struct Notice: Sendable, Codable, Equatable {
    public let id: Int
    /// The earlier notice this one replaces (the same burst, counted again).
    public let replaces: Int?
    public let group: String
    public let summary: String
    public let body: String
    public let count: Int
}

/// The desktop notifications' rules for one member (a phone's, issue 42): the same policy —
/// never the member's own changes, the choices a new computer starts with — and the same
/// batching (a burst shown once after 2 s, then counted again at most once a window), in the
/// reader's words. Pure: the caller passes `now` and calls ``tick(now:)`` at ``nextWake``.
public struct MemberNotices: Sendable {
    private var batcher: NotificationBatcher
    private let member: String?
    private let settings = NotificationSettings()

    public init(member: String?, words: MessageCatalogue) {
        batcher = NotificationBatcher(windowSeconds: NotificationSettings().windowSeconds)
        batcher.words = words
        self.member = member
    }

    /// When ``tick(now:)`` is due (nil: nothing waits).
    public var nextWake: Int64? { batcher.nextWake }

    public mutating func receive(_ event: HouseholdEvent, now: Int64) -> [Notice] {
        // "Made on this machine" means nothing to a phone: whose change it is decides.
        var event = event
        event.local = false
        // A kid's report made through this member's own machines (this phone, say) is not news to them.
        if event.type == .kidReported, let member, event.author == member { return [] }
        guard let group = NotificationPolicy.group(for: event, me: member, settings: settings) else { return [] }
        return batcher.receive([event], group: group, now: now).map(Self.notice)
    }

    public mutating func tick(now: Int64) -> [Notice] { batcher.tick(now: now).map(Self.notice) }

    static func notice(_ pending: PendingNotification) -> Notice {
        Notice(
            id: pending.id, replaces: pending.replaces, group: pending.group.rawValue, summary: pending.summary, body: pending.body,
            count: pending.count)
    }
}
