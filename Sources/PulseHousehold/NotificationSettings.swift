import FoundationEssentials
import PulseModel
import PulseStore

/// Which notifications this machine shows (a choice of the person at this screen, so
/// stored per machine: in the database's local meta, never replicated).
public struct NotificationSettings: Sendable, Codable, Equatable {
    /// Items added to or restocked onto the Shopping List by others.
    public var shopping = true
    /// Tasks added or finished by others (optional, off by default, as the seed says).
    public var tasks = false
    /// Tasks assigned to this machine's member by others.
    public var assigned = true
    /// Kids' redemptions and declined ones.
    public var kids = true
    /// The batching window, seconds (60–120, as the seed says).
    public var windowSeconds = 90

    public init() {}

    public static let windowRange = 60...120
    static let metaKey = "notification_settings"
}

extension Household {
    public func notificationSettings() throws -> NotificationSettings {
        guard let text = try store.meta(NotificationSettings.metaKey)?.textValue,
            let settings = try? JSONDecoder().decode(NotificationSettings.self, from: Data(text.utf8))
        else {
            return NotificationSettings()
        }
        return settings
    }

    public func setNotificationSettings(_ settings: NotificationSettings) throws {
        guard NotificationSettings.windowRange.contains(settings.windowSeconds) else {
            throw HouseholdError.refuse(
                .windowOutOfRange,
                [
                    "value": JSONValue(settings.windowSeconds), "min": JSONValue(NotificationSettings.windowRange.lowerBound),
                    "max": JSONValue(NotificationSettings.windowRange.upperBound),
                ])
        }
        let data = try JSONEncoder().encode(settings)
        try store.setMeta(NotificationSettings.metaKey, .text(String(decoding: data, as: UTF8.self)))
    }
}
