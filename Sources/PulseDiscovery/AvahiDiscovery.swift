import CAvahi
import FoundationEssentials
import Synchronization
import PulseModel

/// Publishes this agent's service and browses for others through the Avahi daemon
/// (libavahi-client). The only code that imports CAvahi.
///
/// Threading (Avahi's docs/THREADS: the client does no locking of its own): Avahi runs
/// its own poll thread, and every callback runs on it. All C handles live in `CState`,
/// touched only on that thread or with `avahi_threaded_poll_lock` held. Callbacks find
/// this object through an `Unmanaged` context pointer and report plain Swift values into
/// an `AsyncStream`.
///
/// It survives the daemon: not running at start (the client waits in CONNECTING, or
/// is retried every few seconds when D-Bus itself is missing), and restarting (the
/// client fails; a timer on the poll thread frees it and builds a new one, which
/// republishes and browses again).
package final class AvahiDiscovery: @unchecked Sendable {
    package let events: AsyncStream<DiscoveryEvent>
    private let continuation: AsyncStream<DiscoveryEvent>.Continuation
    private let poll: OpaquePointer
    /// nil: browse only (`pulse-peer join` looking for the inviting machine).
    private var advertisement: Advertisement?
    private var state = CState()

    /// The C handles and what they found; poll thread (or poll lock) only.
    private struct CState {
        package var client: OpaquePointer?
        package var group: OpaquePointer?
        package var browser: OpaquePointer?
        package var resolvers: [ResolverKey: OpaquePointer] = [:]
        package var resolved: [ResolverKey: DiscoveredService] = [:]
        /// Services the browser flagged as published on this host (only NEW carries it).
        package var local: Set<ResolverKey> = []
        package var restartPending = false
        package var stopped = false
    }

    package struct ResolverKey: Hashable {
        package let interface: Int32
        package let proto: Int32
        package let name: String
    }

    package init(advertisement: Advertisement?) throws {
        guard let poll = avahi_threaded_poll_new() else { throw DiscoveryError("cannot create the Avahi poll loop") }
        self.poll = poll
        self.advertisement = advertisement
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    deinit {
        avahi_threaded_poll_free(poll) // also frees the client and everything it owns
    }

    private var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    private static func from(_ userdata: UnsafeMutableRawPointer?) -> AvahiDiscovery {
        Unmanaged<AvahiDiscovery>.fromOpaque(userdata!).takeUnretainedValue()
    }

    package func start() throws {
        avahi_threaded_poll_lock(poll)
        connect()
        avahi_threaded_poll_unlock(poll)
        guard avahi_threaded_poll_start(poll) >= 0 else { throw DiscoveryError("cannot start the Avahi poll thread") }
    }

    /// Stops the poll thread, frees the client (withdrawing the advertisement) and ends
    /// the event stream. The caller keeps the object alive until this returns.
    package func stop() {
        avahi_threaded_poll_stop(poll)
        state.stopped = true
        if let client = state.client { avahi_client_free(client) }
        state = CState(stopped: true)
        continuation.finish()
    }

    // MARK: Client

    /// Creates the client (poll thread or lock held).
    private func connect() {
        var error: Int32 = 0
        let client = avahi_client_new(
            avahi_threaded_poll_get(poll), AVAHI_CLIENT_NO_FAIL,
            { client, clientState, userdata in
                AvahiDiscovery.from(userdata).clientChanged(client, clientState)
            }, context, &error)
        if client == nil {
            continuation.yield(.availability(available: false, detail: "Avahi unavailable (\(String(cString: avahi_strerror(error)))); retrying"))
            scheduleRestart(after: 5)
        } else {
            state.client = client
        }
    }

    /// Runs inside `avahi_client_new` too: use the callback's client, not `state.client`.
    private func clientChanged(_ client: OpaquePointer?, _ clientState: AvahiClientState) {
        switch clientState {
        case AVAHI_CLIENT_S_RUNNING:
            continuation.yield(.availability(available: true, detail: advertisement.map { "publishing as \"\($0.name)\"" } ?? "browsing"))
            publish(client)
            browse(client)
        case AVAHI_CLIENT_S_COLLISION, AVAHI_CLIENT_S_REGISTERING:
            if let group = state.group { avahi_entry_group_reset(group) }
        case AVAHI_CLIENT_CONNECTING:
            continuation.yield(.availability(available: false, detail: "waiting for avahi-daemon"))
        case AVAHI_CLIENT_FAILURE:
            let reason = String(cString: avahi_strerror(avahi_client_errno(client)))
            continuation.yield(.availability(available: false, detail: "Avahi failed (\(reason)); reconnecting"))
            scheduleRestart(after: 1)
        default:
            break
        }
    }

    /// Frees the client and builds a new one from a timer, outside any client callback.
    private func scheduleRestart(after seconds: Int) {
        guard !state.restartPending, !state.stopped else { return }
        state.restartPending = true
        let api = avahi_threaded_poll_get(poll)!
        var when = timeval()
        avahi_elapse_time(&when, UInt32(seconds * 1000), 0)
        _ = api.pointee.timeout_new(
            api, &when,
            { timeout, userdata in
                let discovery = AvahiDiscovery.from(userdata)
                discovery.restart()
                avahi_threaded_poll_get(discovery.poll)!.pointee.timeout_free(timeout)
            }, context)
    }

    private func restart() {
        state.restartPending = false
        guard !state.stopped else { return }
        // After a disconnect no REMOVE events come: forget everything found.
        let names = Set(state.resolved.keys.map(\.name))
        if let client = state.client { avahi_client_free(client) } // frees group, browser, resolvers
        state = CState()
        for name in names { continuation.yield(.lost(name: name)) }
        connect()
    }

    // MARK: Publishing

    private func publish(_ client: OpaquePointer?) {
        guard let advertisement else { return }
        if state.group == nil {
            state.group = avahi_entry_group_new(
                client,
                { group, groupState, userdata in
                    AvahiDiscovery.from(userdata).groupChanged(group, groupState)
                }, context)
        }
        guard let group = state.group, avahi_entry_group_is_empty(group) != 0 else { return }
        var txt: UnsafeMutablePointer<AvahiStringList>? = nil
        for record in advertisement.txt { txt = avahi_string_list_add(txt, record) }
        defer { avahi_string_list_free(txt) }
        var result = avahi_entry_group_add_service_strlst(
            group, cavahi_if_unspec, cavahi_proto_unspec, AvahiPublishFlags(0), advertisement.name,
            Advertisement.serviceType, nil, nil, UInt16(advertisement.port), txt)
        if result == cavahi_err_collision {
            rename()
            return publish(client)
        }
        if result >= 0 { result = avahi_entry_group_commit(group) }
        if result < 0 {
            continuation.yield(.availability(available: false, detail: "cannot publish: \(String(cString: avahi_strerror(result)))"))
        }
    }

    private func groupChanged(_ group: OpaquePointer?, _ groupState: AvahiEntryGroupState) {
        switch groupState {
        case AVAHI_ENTRY_GROUP_COLLISION:
            // Another host uses the name: take "name #2" and publish again.
            rename()
            avahi_entry_group_reset(group)
            publish(avahi_entry_group_get_client(group))
        case AVAHI_ENTRY_GROUP_ESTABLISHED:
            continuation.yield(.published(name: advertisement?.name ?? ""))
        case AVAHI_ENTRY_GROUP_FAILURE:
            let reason = String(cString: avahi_strerror(avahi_client_errno(avahi_entry_group_get_client(group))))
            continuation.yield(.availability(available: false, detail: "publishing failed (\(reason))"))
        default:
            break
        }
    }

    private func rename() {
        guard let name = advertisement?.name, let alternative = avahi_alternative_service_name(name) else { return }
        advertisement?.name = String(cString: alternative)
        avahi_free(alternative)
    }

    // MARK: Browsing

    private func browse(_ client: OpaquePointer?) {
        guard state.browser == nil else { return }
        state.browser = avahi_service_browser_new(
            client, cavahi_if_unspec, cavahi_proto_unspec, Advertisement.serviceType, nil, AvahiLookupFlags(0),
            { _, interface, proto, event, name, _, domain, flags, userdata in
                AvahiDiscovery.from(userdata).browsed(interface, proto, event, name, domain, flags)
            }, context)
    }

    private func browsed(
        _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiBrowserEvent,
        _ name: UnsafePointer<CChar>?, _ domain: UnsafePointer<CChar>?, _ flags: AvahiLookupResultFlags
    ) {
        switch event {
        case AVAHI_BROWSER_NEW:
            guard let name, flags.rawValue & cavahi_result_own.rawValue == 0 else { return }
            let key = ResolverKey(interface: interface, proto: proto, name: String(cString: name))
            guard state.resolvers[key] == nil else { return }
            if flags.rawValue & cavahi_result_local.rawValue != 0 { state.local.insert(key) }
            // Kept alive: a changed TXT record (a peer restarted) is reported again.
            if let resolver = avahi_service_resolver_new(
                state.client, interface, proto, name, Advertisement.serviceType, domain, cavahi_proto_unspec, AvahiLookupFlags(0),
                { _, interface, proto, event, name, _, _, _, address, port, txt, _, userdata in
                    AvahiDiscovery.from(userdata).resolved(interface, proto, event, name, address, port, txt)
                }, context)
            {
                state.resolvers[key] = resolver
            }
        case AVAHI_BROWSER_REMOVE:
            guard let name else { return }
            let key = ResolverKey(interface: interface, proto: proto, name: String(cString: name))
            if let resolver = state.resolvers.removeValue(forKey: key) { avahi_service_resolver_free(resolver) }
            state.resolved[key] = nil
            state.local.remove(key)
            report(key.name)
        case AVAHI_BROWSER_FAILURE:
            continuation.yield(.availability(available: false, detail: "browsing failed; reconnecting"))
            scheduleRestart(after: 1)
        default:
            break
        }
    }

    private func resolved(
        _ interface: AvahiIfIndex, _ proto: AvahiProtocol, _ event: AvahiResolverEvent,
        _ name: UnsafePointer<CChar>?, _ address: UnsafePointer<AvahiAddress>?, _ port: UInt16,
        _ txt: UnsafeMutablePointer<AvahiStringList>?
    ) {
        guard event == AVAHI_RESOLVER_FOUND, let name, let address else { return }
        var buffer = [CChar](repeating: 0, count: Int(AVAHI_ADDRESS_STR_MAX))
        avahi_address_snprint(&buffer, buffer.count, address)
        var text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        if address.pointee.proto == cavahi_proto_inet6, text.lowercased().hasPrefix("fe80:") {
            var ifname = [CChar](repeating: 0, count: Int(IF_NAMESIZE) + 1)
            if if_indextoname(UInt32(interface), &ifname) != nil { text += "%" + ifname.withUnsafeBufferPointer { String(cString: $0.baseAddress!) } }
        }
        var records: [String: String] = [:]
        var item = txt
        while let current = item {
            let bytes = UnsafeBufferPointer(start: avahi_string_list_get_text(current), count: Int(avahi_string_list_get_size(current)))
            let entry = String(decoding: bytes, as: UTF8.self)
            if let equals = entry.firstIndex(of: "=") {
                records[String(entry[..<equals]).lowercased()] = String(entry[entry.index(after: equals)...])
            }
            item = avahi_string_list_get_next(current)
        }
        let key = ResolverKey(interface: interface, proto: proto, name: String(cString: name))
        state.resolved[key] = DiscoveredService(
            name: key.name, txt: records, port: Int(port), addresses: [text],
            isLocal: state.local.contains(key))
        report(key.name)
    }

    /// Reports the merged view of one service name over its interfaces and protocols.
    private func report(_ name: String) {
        let parts = state.resolved.filter { $0.key.name == name }.sorted { ($0.key.interface, $0.key.proto) < ($1.key.interface, $1.key.proto) }
        guard var merged = parts.first?.value else {
            continuation.yield(.lost(name: name))
            return
        }
        var v4: [String] = [], v6: [String] = []
        for (_, part) in parts {
            for address in part.addresses {
                if address.contains(":") { if !v6.contains(address) { v6.append(address) } } else if !v4.contains(address) { v4.append(address) }
            }
            merged.isLocal = merged.isLocal || part.isLocal
        }
        merged.addresses = v4 + v6
        continuation.yield(.found(merged))
    }
}

package struct DiscoveryError: Error, CustomStringConvertible {
    package let description: String
    package init(_ description: String) { self.description = description }
}
