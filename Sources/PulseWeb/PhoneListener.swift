import FoundationEssentials
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import PeerSync
import PulseCalDAV
import Synchronization

/// One bound listener of the phones' port: its connections, admitted by
/// ``PhoneAdmission`` (places kept for signed-in phones, whatever a stranger on the Wi-Fi
/// does) under ``PhoneDeadlines``, and which phone's session each used last (to close a
/// removed phone's at once).
final class PhoneListener: Sendable {
    let server: NIOAsyncChannel<(WebFrontEnd.Connection, ConnectionKind, SignedIn), Never>
    let port: Int
    let service: PhoneService
    let router: WebRouter<PhoneSite>
    private struct Open {
        var admission = PhoneAdmission<ObjectIdentifier>()
        var channels: [ObjectIdentifier: (channel: any Channel, phone: String?, state: SignedIn)] = [:]
        /// When a refusal was last logged (a refusal is logged at most every 10 s).
        var refusalLogged: ContinuousClock.Instant?

        func idle(_ key: ObjectIdentifier) -> Bool { channels[key]?.state.isIdle ?? false }
    }
    private let open = Mutex(Open())

    private init(
        server: NIOAsyncChannel<(WebFrontEnd.Connection, ConnectionKind, SignedIn), Never>, port: Int, service: PhoneService,
        router: WebRouter<PhoneSite>
    ) {
        self.server = server
        self.port = port
        self.service = service
        self.router = router
    }

    /// `computer`: the name people gave this computer (what the phone's waiting page names).
    static func bind(port: Int, service: PhoneService, tls: PhoneTLS, computer: String?) async throws -> PhoneListener {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .serverChannelOption(.backlog, value: 64)
            .bind(host: "0.0.0.0", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    let kind = ConnectionKind()
                    let signedIn = SignedIn()
                    try channel.pipeline.syncOperations.addHandler(AbruptClose())
                    try channel.pipeline.syncOperations.addHandler(TLSOrPlain(tls: tls.context(), kind: kind))
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                    try channel.pipeline.syncOperations.addHandler(PhoneDeadlines(signedIn: signedIn))
                    try channel.pipeline.syncOperations.addHandler(IdleStateHandler(allTimeout: WebFrontEnd.idleTimeout))
                    try channel.pipeline.syncOperations.addHandler(CloseWhenIdle())
                    return (try WebFrontEnd.Connection(wrappingChannelSynchronously: channel), kind, signedIn)
                }
            }
        let bound = server.channel.localAddress?.port ?? port
        let computer = computer ?? tls.covered.names.first ?? "this computer"
        var site = PhoneSite(
            port: bound, home: service.api.home, hosts: { tls.hosts(port: bound) }, pairing: service.pairing, identify: { await service.identify($0) },
            identifyRoaming: { await service.identify(roaming: $0) }, roaming: { await service.roaming($0) },
            agents: { await service.agents() },
            signOut: { _ = await service.remove(["id": .string($0.id)]) }, computer: computer)
        site.renew = { await service.renew($0) }
        site.asked = { [api = service.api] request in
            api.announce(entity: PhoneService.requestEntity)
            // And on the desktop, for a computer whose page is not open.
            Task {
                await api.alert(
                    summary: "desktop.phone_request.summary", body: "desktop.phone_request.body",
                    ["name": .string(request.name), "address": .string(request.address), "code": .string(request.code)])
            }
        }
        // The phones' sessions are the household's `phone` rows (``PhoneSite/identify``): no
        // local sessions.
        let router = WebRouter(api: service.api, audience: site)
        return PhoneListener(server: server, port: bound, service: service, router: router)
    }

    /// Closes the listener and its connections; returns once its port is free (a listener bound
    /// next on the same port — phones turned on while CalDAV held it — found it still in use).
    func close() async {
        server.channel.close(promise: nil)
        for entry in open.withLock({ Array($0.channels.values) }) { entry.channel.close(promise: nil) }
        try? await server.channel.closeFuture.get()
    }

    /// Every connection closed, the listener kept (phones turned off while CalDAV keeps it).
    func closeConnections() {
        for entry in open.withLock({ Array($0.channels.values) }) { entry.channel.close(promise: nil) }
    }

    func closeConnections(of phone: String) {
        for entry in open.withLock({ Array($0.channels.values) }) where entry.phone == phone { entry.channel.close(promise: nil) }
    }

    /// A place for a new connection from `address` (``PhoneAdmission``); the connections it
    /// displaces are closed. Refused when every place is a signed-in phone's: said at notice
    /// level (at most every 10 s), with how many each address holds.
    private func admit(_ channel: any Channel, address: String, state: SignedIn) -> Bool {
        let key = ObjectIdentifier(channel)
        let (admitted, displaced, refusal) = open.withLock { open -> (Bool, [any Channel], [String: Int]?) in
            let channels = open
            let (admitted, close) = open.admission.admit(key, address: address, idle: channels.idle)
            let displaced = close.compactMap { open.channels.removeValue(forKey: $0)?.channel }
            if admitted { open.channels[key] = (channel, nil, state) }
            guard !admitted, open.refusalLogged.map({ $0.duration(to: .now) > .seconds(10) }) ?? true else { return (admitted, displaced, nil) }
            open.refusalLogged = .now
            return (admitted, displaced, Dictionary(grouping: open.admission.entries.values, by: \.address).mapValues(\.count))
        }
        for channel in displaced { AbruptClose.close(channel) }
        if let refusal {
            service.logger.notice(
                "a phone connection refused: every place is a signed-in phone's",
                metadata: ["address": "\(address)", "held": "\(refusal.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", "))"])
        }
        return admitted
    }

    private func closed(_ channel: any Channel) {
        open.withLock { open in
            let key = ObjectIdentifier(channel)
            guard open.channels.removeValue(forKey: key) != nil else { return } // displaced: counted off then
            open.admission.closed(key)
        }
    }

    /// The phone whose session a request on `channel` carried (nil: none). Its address's
    /// oldest idle signed-in connection beyond ``PhoneAdmission/signedInPerAddress`` is closed.
    private func mark(_ channel: any Channel, phone: String?, signedIn: SignedIn) {
        if phone != nil { signedIn.set() }
        let displaced = open.withLock { open -> [any Channel] in
            let key = ObjectIdentifier(channel)
            guard open.channels[key] != nil else { return [] }
            open.channels[key]?.phone = phone
            guard phone != nil else { return [] }
            let channels = open
            return open.admission.signedIn(key, idle: channels.idle).compactMap { open.channels.removeValue(forKey: $0)?.channel }
        }
        for channel in displaced { AbruptClose.close(channel) }
    }

    /// The connections, until the listener is closed (turned off) or the agent stops.
    func serve() async {
        let counts = WebFrontEnd.Counts()
        let router = self.router
        let logger = service.logger
        do {
            try await withThrowingDiscardingTaskGroup { group in
                try await server.executeThenClose { connections in
                    for try await (connection, kind, signedIn) in connections {
                        let channel = connection.channel
                        let address = channel.remoteAddress?.ipAddress ?? "?"
                        guard admit(channel, address: address, state: signedIn) else {
                            // Closed at once, and its async wrapper ended (whose writer must be finished).
                            AbruptClose.close(channel)
                            group.addTask { try? await connection.executeThenClose { _, _ in } }
                            continue
                        }
                        group.addTask {
                            defer { self.closed(channel) }
                            do {
                                try await WebFrontEnd.handle(connection, api: router.api, counts: counts) { request in
                                    if DAVService.serves(method: request.method, path: request.uri) {
                                        return .response(await self.service.respondCalDAV(to: request, tls: kind.isTLS))
                                    }
                                    guard kind.isTLS else { return await PhoneSetupPages.respond(to: request, service: self.service, port: self.port) }
                                    // Bound for CalDAV alone: the phone app is not served.
                                    guard self.service.phonesOn else { return .response(PhoneSetupPages.phonesOff(request, service: self.service)) }
                                    let cookie = WebRules.cookie(router.audience.cookieName, in: request.headers("cookie"))
                                    let reply = await router.respond(to: request)
                                    let phone =
                                        if let bearer = WebRules.bearer(request.header("authorization")) {
                                            await self.service.identify(roaming: bearer)
                                        } else {
                                            await self.service.identify(cookie)
                                        }
                                    self.mark(channel, phone: phone?.id, signedIn: signedIn)
                                    return reply
                                }
                            } catch {
                                logger.debug("phone connection ended", metadata: ["error": "\(error)"])
                            }
                        }
                    }
                }
            }
        } catch {
            logger.debug("phones' listener ended", metadata: ["error": "\(error)"])
        }
    }
}
