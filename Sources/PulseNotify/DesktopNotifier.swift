import CDBus
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Why the desktop notification service cannot be used (not an error of the agent: it
/// logs it once and goes on, docs/API.md "Notifications").
public struct DesktopUnavailable: Error, CustomStringConvertible {
    public let description: String
}

/// One private connection to the user's session bus (libdbus). Owns the C handle; used
/// only on its own serial queue (threading rule: every method below runs there), so the
/// agent's tasks never block on D-Bus.
final class SessionBusConnection: @unchecked Sendable {
    private let connection: OpaquePointer

    /// Connects and registers with the bus at `address`.
    init(address: String) throws(DesktopUnavailable) {
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let connection = dbus_connection_open_private(address, &error) else {
            throw DesktopUnavailable(description: "cannot connect to the session bus: \(Self.message(error))")
        }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        guard dbus_bus_register(connection, &error) != 0 else {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            throw DesktopUnavailable(description: "the session bus refused us: \(Self.message(error))")
        }
        self.connection = connection
    }

    deinit {
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
    }

    var isConnected: Bool { dbus_connection_get_is_connected(connection) != 0 }

    /// `org.freedesktop.Notifications.Notify`; returns the service's notification id.
    func notify(
        appName: String, replacesID: UInt32, summary: String, body: String, category: String,
        timeoutMilliseconds: Int32
    ) throws(DesktopUnavailable) -> UInt32 {
        guard
            let message = dbus_message_new_method_call(
                "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                "org.freedesktop.Notifications", "Notify")
        else {
            throw DesktopUnavailable(description: "out of memory building a D-Bus message")
        }
        defer { dbus_message_unref(message) }
        var args = DBusMessageIter()
        dbus_message_iter_init_append(message, &args)
        var actions = DBusMessageIter(), hints = DBusMessageIter()
        let built =
            hp_dbus_append_string(&args, appName) != 0
            && hp_dbus_append_uint32(&args, replacesID) != 0
            && hp_dbus_append_string(&args, "") != 0 // app_icon
            && hp_dbus_append_string(&args, summary) != 0
            && hp_dbus_append_string(&args, body) != 0
            && hp_dbus_open_array(&args, "s", &actions) != 0
            && dbus_message_iter_close_container(&args, &actions) != 0
            && hp_dbus_open_array(&args, "{sv}", &hints) != 0
            && hp_dbus_append_string_hint(&hints, "category", category) != 0
            && hp_dbus_append_string_hint(&hints, "desktop-entry", "house-pulse") != 0
            && dbus_message_iter_close_container(&args, &hints) != 0
            && hp_dbus_append_int32(&args, timeoutMilliseconds) != 0
        guard built else { throw DesktopUnavailable(description: "out of memory building a D-Bus message") }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let reply = dbus_connection_send_with_reply_and_block(connection, message, 5_000, &error) else {
            throw DesktopUnavailable(description: "no notification service answered: \(Self.message(error))")
        }
        defer { dbus_message_unref(reply) }
        var id: UInt32 = 0
        guard hp_dbus_reply_uint32(reply, &id, &error) != 0 else {
            throw DesktopUnavailable(description: "the notification service answered oddly: \(Self.message(error))")
        }
        return id
    }

    private static func message(_ error: DBusError) -> String {
        guard dbus_error_is_set(withUnsafePointer(to: error) { $0 }) != 0, let text = error.message else { return "unknown error" }
        return String(cString: text)
    }
}

/// Shows notifications through the freedesktop notification service on the user's session
/// bus (what `notify-send` uses), replacing a burst's first notification with its follow-up.
/// Connects lazily and again after a failure (at most once a minute); never throws at the
/// agent: ``show(_:)`` returns why it could not show, for the caller to log once.
public final class DesktopNotifier: Sendable {
    private let queue = DispatchQueue(label: "house-pulse.desktop-notifier")
    /// Touched only on `queue`.
    private final class State: @unchecked Sendable {
        var connection: SessionBusConnection?
        var lastAttempt: ContinuousClock.Instant?
        /// Our notification numbers → the service's ids (for replace-id), the last few.
        var serviceIDs: [Int: UInt32] = [:]
    }
    private let state = State()
    private let address: String?
    let appName: String

    /// `address`: the session bus (nil: none found, see ``sessionBusAddress(environment:)``).
    public init(address: String?, appName: String = "House Pulse") {
        self.address = address
        self.appName = appName
        dbus_threads_init_default()
    }

    /// `DBUS_SESSION_BUS_ADDRESS`, else the systemd user bus `$XDG_RUNTIME_DIR/bus` when it exists.
    public static func sessionBusAddress(environment: [String: String]) -> String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            var info = stat()
            if stat(runtime + "/bus", &info) == 0 { return "unix:path=\(runtime)/bus" }
        }
        return nil
    }

    /// Shows `notification`; nil when shown, else why not.
    public func show(_ notification: PendingNotification) async -> DesktopUnavailable? {
        await withCheckedContinuation { continuation in
            queue.async { continuation.resume(returning: self.showNow(notification)) }
        }
    }

    private func showNow(_ notification: PendingNotification) -> DesktopUnavailable? {
        guard let address else {
            return DesktopUnavailable(description: "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)")
        }
        if state.connection?.isConnected != true {
            state.connection = nil
            if let last = state.lastAttempt, ContinuousClock.now - last < .seconds(60) {
                return DesktopUnavailable(description: "the session bus is unavailable (retrying within a minute)")
            }
            state.lastAttempt = .now
            do { state.connection = try SessionBusConnection(address: address) } catch { return error }
        }
        guard let connection = state.connection else { return nil }
        let replaces = notification.replaces.flatMap { state.serviceIDs[$0] } ?? 0
        do {
            let id = try connection.notify(
                appName: appName, replacesID: replaces, summary: notification.summary,
                body: notification.body, category: "house-pulse.\(notification.group.rawValue)",
                timeoutMilliseconds: -1)
            state.serviceIDs[notification.id] = id
            if let old = notification.replaces { state.serviceIDs[old] = nil }
            if state.serviceIDs.count > 64 { state.serviceIDs.remove(at: state.serviceIDs.startIndex) }
            return nil
        } catch {
            if !connection.isConnected { state.connection = nil }
            return error
        }
    }
}
