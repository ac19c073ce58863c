import FoundationEssentials
import PulseNotify

/// One desktop notification from a command a person started from the applications menu,
/// where nothing shows its standard error (House Pulse could not open, and why).
public enum DesktopAlert {
    /// True when the session's notification service showed it.
    public static func show(
        summary: String, body: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) async -> Bool {
        let notifier = DesktopNotifier(address: DesktopNotifier.sessionBusAddress(environment: environment))
        return await notifier.alert(summary: summary, body: body) == nil
    }
}
