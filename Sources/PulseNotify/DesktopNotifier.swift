import CDBus
import Dispatch
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// Why the desktop notification service cannot be used (not an error of the agent: it
/// logs it once and goes on, docs/API.md "Notifications").
public struct DesktopUnavailable: Error, CustomStringConvertible {
    /// Why, as a code each reader words in its own language (`desktop.problem.CODE` in the
    /// message catalogues: the status in Polish says it in Polish).
    public enum Kind: String, Sendable, CaseIterable {
        case noBus = "no_bus", cannotConnect = "cannot_connect", busRefused = "bus_refused", outOfMemory = "out_of_memory"
        case noService = "no_service", oddAnswer = "odd_answer", busUnavailable = "bus_unavailable"
    }
    public let kind: Kind
    /// The system's own words (libdbus's error), when it gave any.
    public let detail: String?

    public init(_ kind: Kind, _ detail: String? = nil) {
        self.kind = kind
        self.detail = detail
    }

    /// In English, for the log.
    public var description: String {
        let detail = detail ?? ""
        return switch kind {
        case .noBus: "no session bus (DBUS_SESSION_BUS_ADDRESS is not set)"
        case .cannotConnect: "cannot connect to the session bus: \(detail)"
        case .busRefused: "the session bus refused us: \(detail)"
        case .outOfMemory: "out of memory building a D-Bus message"
        case .noService: "no notification service answered: \(detail)"
        case .oddAnswer: "the notification service answered oddly: \(detail)"
        case .busUnavailable: "the session bus is unavailable (retrying within a minute)"
        }
    }
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
            throw DesktopUnavailable(.cannotConnect, Self.message(error))
        }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        guard dbus_bus_register(connection, &error) != 0 else {
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            throw DesktopUnavailable(.busRefused, Self.message(error))
        }
        // The service's signals about notifications (a click: ActionInvoked). Not waited for:
        // without it, notifications still show (a click then leads nowhere).
        dbus_bus_add_match(
            connection, "type='signal',interface='org.freedesktop.Notifications',path='/org/freedesktop/Notifications'", nil)
        self.connection = connection
    }

    deinit {
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
    }

    var isConnected: Bool { dbus_connection_get_is_connected(connection) != 0 }

    /// `org.freedesktop.Notifications.Notify`, with a default action labelled `openLabel` if any;
    /// returns the service's notification id and the service's unique bus name (the sender
    /// of its signals).
    func notify(
        appName: String, replacesID: UInt32, summary: String, body: String, category: String, openLabel: String?,
        timeoutMilliseconds: Int32
    ) throws(DesktopUnavailable) -> (id: UInt32, service: String?) {
        guard
            let message = dbus_message_new_method_call(
                "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                "org.freedesktop.Notifications", "Notify")
        else {
            throw DesktopUnavailable(.outOfMemory)
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
            && (openLabel.map { // a click on the notification
                hp_dbus_append_string(&actions, "default") != 0 && hp_dbus_append_string(&actions, $0) != 0
            } ?? true)
            && dbus_message_iter_close_container(&args, &actions) != 0
            && hp_dbus_open_array(&args, "{sv}", &hints) != 0
            && hp_dbus_append_string_hint(&hints, "category", category) != 0
            && hp_dbus_append_string_hint(&hints, "desktop-entry", "house-pulse") != 0
            && dbus_message_iter_close_container(&args, &hints) != 0
            && hp_dbus_append_int32(&args, timeoutMilliseconds) != 0
        guard built else { throw DesktopUnavailable(.outOfMemory) }
        var error = DBusError()
        dbus_error_init(&error)
        defer { dbus_error_free(&error) }
        guard let reply = dbus_connection_send_with_reply_and_block(connection, message, 5_000, &error) else {
            throw DesktopUnavailable(.noService, Self.message(error))
        }
        defer { dbus_message_unref(reply) }
        var id: UInt32 = 0
        guard hp_dbus_reply_uint32(reply, &id, &error) != 0 else {
            throw DesktopUnavailable(.oddAnswer, Self.message(error))
        }
        return (id, dbus_message_get_sender(reply).map { String(cString: $0) })
    }

    /// The connection's socket (for a read source), while connected.
    var fileDescriptor: Int32? {
        var fd: Int32 = -1
        return dbus_connection_get_unix_fd(connection, &fd) != 0 && fd >= 0 ? fd : nil
    }

    /// A notification service's signal about one of the notifications on the bus.
    enum Signal: Equatable {
        case actionInvoked(id: UInt32, action: String, sender: String)
        case closed(id: UInt32, sender: String)
    }

    /// Reads what the bus has sent without blocking and returns the notification service's
    /// signals among it (the rest — our own replies were taken by `notify` — is dropped).
    func signals() -> [Signal] {
        _ = dbus_connection_read_write(connection, 0)
        var signals: [Signal] = []
        while let message = dbus_connection_pop_message(connection) {
            defer { dbus_message_unref(message) }
            guard let sender = dbus_message_get_sender(message).map({ String(cString: $0) }) else { continue }
            var error = DBusError()
            dbus_error_init(&error)
            defer { dbus_error_free(&error) }
            var id: UInt32 = 0
            if dbus_message_is_signal(message, "org.freedesktop.Notifications", "ActionInvoked") != 0 {
                var action: UnsafePointer<CChar>?
                if hp_dbus_args_uint32_string(message, &id, &action, &error) != 0, let action {
                    signals.append(.actionInvoked(id: id, action: String(cString: action), sender: sender))
                }
            } else if dbus_message_is_signal(message, "org.freedesktop.Notifications", "NotificationClosed") != 0 {
                var reason: UInt32 = 0
                if hp_dbus_args_uint32_uint32(message, &id, &reason, &error) != 0 { signals.append(.closed(id: id, sender: sender)) }
            }
        }
        return signals
    }

    private static func message(_ error: DBusError) -> String {
        guard dbus_error_is_set(withUnsafePointer(to: error) { $0 }) != 0, let text = error.message else { return "unknown error" }
        return String(cString: text)
    }
}

/// Shows notifications through the freedesktop notification service on the user's session
/// bus (what `notify-send` uses), replacing a burst's first notification with its follow-up.
/// Each has a default action: a click on it reaches ``clicks`` as the group it told of (the
/// agent opens the page on that group's tab). Connects lazily and again after a failure (at
/// most once a minute); never throws at the agent: ``show(_:)`` returns why it could not show,
/// for the caller to log once.
public final class DesktopNotifier: Sendable {
    private let queue = DispatchQueue(label: "house-pulse.desktop-notifier")
    /// Touched only on `queue`.
    private final class State: @unchecked Sendable {
        var connection: SessionBusConnection?
        /// Reads the connection's signals as they arrive; its cancel handler keeps the
        /// connection (and so its socket) until the source stopped watching it.
        var source: (any DispatchSourceRead)?
        var lastAttempt: ContinuousClock.Instant?
        /// Our notification numbers → the service's ids (for replace-id), the last few.
        var serviceIDs: [Int: UInt32] = [:]
        /// The service's ids of ours still shown → their group, oldest first (the last few).
        var shown: [(id: UInt32, group: NotificationGroup)] = []
        /// The notification service's unique bus name: only its signals are believed.
        var service: String?

        deinit { source?.cancel() }
    }
    private let state = State()
    private let address: String?
    let appName: String
    private let clicked: AsyncStream<NotificationGroup>.Continuation

    /// Clicks on our notifications (their default action), as the group each told of; a
    /// burst of clicks keeps the last few.
    public let clicks: AsyncStream<NotificationGroup>

    /// `address`: the session bus (nil: none found, see ``sessionBusAddress(environment:)``).
    public init(address: String?, appName: String = "House Pulse") {
        self.address = address
        self.appName = appName
        (clicks, clicked) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(4))
        dbus_threads_init_default()
    }

    deinit { clicked.finish() }

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

    /// Shows one notification that leads nowhere (the launcher's "could not open"); nil when
    /// shown, else why not.
    public func alert(summary: String, body: String) async -> DesktopUnavailable? {
        await withCheckedContinuation { (continuation: CheckedContinuation<DesktopUnavailable?, Never>) in
            queue.async {
                guard let address = self.address else {
                    continuation.resume(returning: DesktopUnavailable(.noBus))
                    return
                }
                do throws(DesktopUnavailable) {
                    let connection = try SessionBusConnection(address: address)
                    _ = try connection.notify(
                        appName: self.appName, replacesID: 0, summary: summary, body: body, category: "house-pulse.problem",
                        openLabel: nil, timeoutMilliseconds: -1)
                    continuation.resume(returning: nil)
                } catch {
                    continuation.resume(returning: error)
                }
            }
        }
    }

    private func showNow(_ notification: PendingNotification) -> DesktopUnavailable? {
        guard let address else {
            return DesktopUnavailable(.noBus)
        }
        if state.connection?.isConnected != true {
            disconnect()
            if let last = state.lastAttempt, ContinuousClock.now - last < .seconds(60) {
                return DesktopUnavailable(.busUnavailable)
            }
            state.lastAttempt = .now
            do { try connect(address) } catch { return error }
        }
        guard let connection = state.connection else { return nil }
        let replaces = notification.replaces.flatMap { state.serviceIDs[$0] } ?? 0
        do {
            let (id, service) = try connection.notify(
                appName: appName, replacesID: replaces, summary: notification.summary,
                body: notification.body, category: "house-pulse.\(notification.group.rawValue)",
                openLabel: notification.openLabel, timeoutMilliseconds: -1)
            state.serviceIDs[notification.id] = id
            if let old = notification.replaces { state.serviceIDs[old] = nil }
            if state.serviceIDs.count > 64 { state.serviceIDs.remove(at: state.serviceIDs.startIndex) }
            state.service = service
            state.shown.removeAll { $0.id == id }
            state.shown.append((id, notification.group))
            if state.shown.count > 64 { state.shown.removeFirst() }
            // A signal that came while we waited for the reply is already read: take it now.
            takeSignals()
            return nil
        } catch {
            if !connection.isConnected { disconnect() }
            return error
        }
    }

    private func connect(_ address: String) throws(DesktopUnavailable) {
        let connection = try SessionBusConnection(address: address)
        state.connection = connection
        guard let fd = connection.fileDescriptor else { return }
        let source = DispatchSource.makeReadSource(fileDescriptor: fd, queue: queue)
        source.setEventHandler { [weak self] in self?.takeSignals() }
        source.setCancelHandler { withExtendedLifetime(connection) {} }
        state.source = source
        source.resume()
    }

    private func disconnect() {
        state.source?.cancel()
        state.source = nil
        state.connection = nil
        state.service = nil
        state.shown = []
    }

    /// Acts on the service's signals: a click on one of ours goes to ``clicks``; a closed one
    /// is forgotten. Signals of anyone but the service, of others' notifications, and of
    /// actions we did not offer change nothing.
    private func takeSignals() {
        guard let connection = state.connection else { return }
        for signal in connection.signals() {
            switch signal {
            case let .actionInvoked(id, action, sender):
                guard sender == state.service, action == "default", let shown = state.shown.first(where: { $0.id == id }) else {
                    continue
                }
                clicked.yield(shown.group)
            case let .closed(id, sender):
                if sender == state.service { state.shown.removeAll { $0.id == id } }
            }
        }
        if !connection.isConnected { disconnect() }
    }
}
