import FoundationEssentials
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import PeerSync
import Synchronization

/// The family's page, served by the agent (docs/ARCHITECTURE.md, "The web page"): HTTP/1.1
/// from swift-nio's NIOHTTP1 on a loopback address, the live feed as Server-Sent Events.
public struct WebFrontEnd: AgentFrontEnd {
    public let address: WebAddress
    /// Chosen by a person (`--web`): not being able to listen stops the agent's start.
    /// The default address may be taken (another household's agent on this machine): then
    /// the agent runs without its page and `status` says why.
    public let required: Bool
    let logger: Logger

    /// Connections open at once; the live streams among them (each holds a feed subscriber).
    static let maxConnections = 64
    static let maxStreams = 16
    /// A connection with nothing read or written for this long is closed (a live stream
    /// writes a ping every ``heartbeat``).
    static let idleTimeout = TimeAmount.seconds(60)
    /// How often a live stream says it is still there (a `ping` event): a page that hears
    /// nothing for a few of these knows its agent is gone, though no connection says so (a
    /// computer asleep or off the Wi-Fi drops packets silently: issue 51). Named in `hello`.
    static let heartbeat = Duration.seconds(2)
    /// Where the sessions are kept, in the home.
    static let sessionsFile = "web-sessions"

    public init(address: WebAddress, required: Bool, logger: Logger) {
        self.address = address
        self.required = required
        self.logger = logger
    }

    typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    public func start(_ api: LocalAPI) async throws -> FrontEndHandle {
        let server: NIOAsyncChannel<Connection, Never>
        do {
            server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .serverChannelOption(.backlog, value: 64)
                .bind(host: address.host, port: address.port) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.configureHTTPServerPipeline(withErrorHandling: true)
                        try channel.pipeline.syncOperations.addHandler(IdleStateHandler(allTimeout: Self.idleTimeout))
                        try channel.pipeline.syncOperations.addHandler(CloseWhenIdle())
                        return try Connection(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            let problem = "the web page cannot listen on \(address): \(error)"
            if required { throw WebError(problem) }
            return FrontEndHandle(url: nil, problem: problem, serve: {})
        }
        let port = server.channel.localAddress?.port ?? address.port
        let logger = self.logger
        let sessions = WebSessions(saved: api.readPrivateFile(Self.sessionsFile)) { data in
            do { try api.writePrivateFile(Self.sessionsFile, data) } catch {
                logger.warning("cannot save the web page's sessions", metadata: ["error": "\(error)"])
            }
        }
        let router = WebRouter(api: api, sessions: sessions, host: address.host, port: port)
        let url = "http://\(WebAddress(host: address.host, port: port))"
        logger.info("web page serving", metadata: ["url": "\(url)"])
        return FrontEndHandle(url: url) {
            // The page failing (its listener's accept erring, say) never stops sync: it is logged.
            do { try await Self.serve(server, router: router, logger: logger) } catch is CancellationError {} catch {
                logger.error("web page stopped", metadata: ["error": "\(error)"])
            }
        }
    }

    /// Connections and live streams open now (bounded: ``maxConnections``, ``maxStreams``).
    final class Counts: Sendable {
        private struct Open {
            var connections = 0
            var streams = 0
        }
        private let open = Mutex(Open())
        func admitConnection() -> Bool {
            open.withLock { open in
                guard open.connections < maxConnections else { return false }
                open.connections += 1
                return true
            }
        }
        func admitStream() -> Bool {
            open.withLock { open in
                guard open.streams < maxStreams else { return false }
                open.streams += 1
                return true
            }
        }
        func connectionClosed() { open.withLock { $0.connections -= 1 } }
        func streamClosed() { open.withLock { $0.streams -= 1 } }
    }

    static func serve(_ server: NIOAsyncChannel<Connection, Never>, router: WebRouter<ComputerPage>, logger: Logger) async throws {
        let counts = Counts()
        try await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { connections in
                for try await connection in connections {
                    let admitted = counts.admitConnection()
                    group.addTask {
                        guard admitted else {
                            try? await connection.executeThenClose { _, _ in }
                            return
                        }
                        defer { counts.connectionClosed() }
                        do {
                            try await handle(connection, api: router.api, counts: counts) { await router.respond(to: $0) }
                        } catch {
                            logger.debug("web connection ended", metadata: ["error": "\(error)"])
                        }
                    }
                }
            }
        }
    }

    /// Requests one after the other on one connection (keep-alive), until the client
    /// closes, asks to close, or a live stream takes the connection over.
    static func handle(
        _ connection: Connection, api: LocalAPI, counts: Counts, respond: (WebRequest) async -> WebReply
    ) async throws {
        let channel = connection.channel
        try await connection.executeThenClose { inbound, outbound in
            var parts = inbound.makeAsyncIterator()
            while let part = try await parts.next() {
                guard case let .head(head) = part else { continue }
                var body: [UInt8] = []
                reading: while let next = try await parts.next() {
                    switch next {
                    case let .body(buffer):
                        guard body.count + buffer.readableBytes <= WebAnswers.maxBody else {
                            try await write(
                                WebResponse(
                                    status: 413, headers: [("Content-Type", "text/plain")],
                                    body: Array("A request body is at most 64 KiB.\n".utf8)),
                                to: outbound, version: head.version, keepAlive: false, bodyAllowed: true)
                            return
                        }
                        body += buffer.readableBytesView
                    case .end: break reading
                    case .head: return
                    }
                }
                let request = WebRequest(
                    method: head.method.rawValue, uri: head.uri,
                    headers: head.headers.map { ($0.name.lowercased(), $0.value) }, body: body,
                    remote: channel.remoteAddress?.ipAddress ?? "",
                    client: channel.remoteAddress.flatMap { address in address.ipAddress.flatMap { ip in address.port.map { (ip, $0) } } },
                    server: channel.localAddress.flatMap { address in address.ipAddress.flatMap { ip in address.port.map { (ip, $0) } } })
                let keepAlive = head.isKeepAlive
                let reply = await respond(request)
                switch reply {
                case let .response(response):
                    try await write(
                        response, to: outbound, version: head.version, keepAlive: keepAlive,
                        bodyAllowed: head.method != .HEAD)
                    if !keepAlive { return }
                case .events, .phoneEvents:
                    let (resume, notices, extra): (String?, MemberNotices?, [(String, String)]) =
                        switch reply {
                        case let .events(resume): (resume, nil, [])
                        case let .phoneEvents(resume, notices, headers): (resume, notices, headers)
                        case .response: (nil, nil, [])
                        }
                    let admitted = counts.admitStream()
                    guard admitted else {
                        try await write(
                            WebResponse(
                                status: 503, headers: [("Content-Type", "text/plain"), ("Retry-After", "5")],
                                body: Array("Too many open pages.\n".utf8)),
                            to: outbound, version: head.version, keepAlive: false, bodyAllowed: true)
                        return
                    }
                    defer { counts.streamClosed() }
                    try await stream(
                        api.subscribe(resume: resume, close: { channel.close(promise: nil) }),
                        to: outbound, channel: channel, version: head.version, notices: notices, extraHeaders: extra)
                    return
                }
            }
        }
    }

    private static func write(
        _ response: WebResponse, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>,
        version: HTTPVersion, keepAlive: Bool, bodyAllowed: Bool
    ) async throws {
        var headers = HTTPHeaders(response.headers)
        headers.replaceOrAdd(name: "Content-Length", value: "\(response.body.count)")
        if !keepAlive { headers.replaceOrAdd(name: "Connection", value: "close") }
        try await outbound.write(
            .head(
                HTTPResponseHead(
                    version: version, status: HTTPResponseStatus(statusCode: response.status),
                    headers: headers)))
        if bodyAllowed, !response.body.isEmpty { try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: response.body)))) }
        try await outbound.write(.end(nil))
    }

    /// When a phone stream's notices are due, shared with its timer.
    private final class Due: Sendable { let at = Mutex<Int64?>(nil) }

    private enum StreamItem: Sendable {
        case event(HouseholdEvent)
        case heartbeat
        /// A phone's notifications are due (``MemberNotices/nextWake``).
        case tick
        var isHeartbeat: Bool { if case .heartbeat = self { true } else { false } }
    }

    /// The live feed as Server-Sent Events: `retry` (reconnect after 1 s), a `hello` event
    /// (the newest token, whether the resume left a gap), then one `message` per household
    /// event with its token as the `id` (a reconnecting EventSource resumes from it by
    /// itself, through `Last-Event-ID`), and a `ping` every ``heartbeat``. Ends when the client
    /// goes, the feed drops it (it fell behind), or the agent stops.
    private static func stream(
        _ feed: LiveFeed, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>,
        channel: Channel, version: HTTPVersion, notices: MemberNotices? = nil, extraHeaders: [(String, String)] = []
    ) async throws {
        defer { feed.cancel() }
        var notices = notices
        // When the notices' batcher is due; the timer waits for it, woken when it changes.
        let due = Due()
        let (changes, changed) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        var headers = HTTPHeaders([("Content-Type", "text/event-stream"), ("Cache-Control", "no-store")] + WebRules.securityHeaders + extraHeaders)
        headers.add(name: "X-Accel-Buffering", value: "no")
        try await outbound.write(.head(HTTPResponseHead(version: version, status: .ok, headers: headers)))
        let ping = heartbeat.components.seconds * 1000
        let hello = "{\"gap\":\(feed.gap),\"ping\":\(ping),\"token\":\"\(feed.token)\"}"
        try await outbound.write(.body(.byteBuffer(ByteBuffer(string: "retry: 1000\nevent: hello\ndata: \(hello)\n\n"))))
        let (items, continuation) = AsyncStream<StreamItem>.makeStream()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in feed.events { continuation.yield(.event(event)) }
                continuation.finish()
            }
            group.addTask {
                while (try? await LoopTimer.sleep(for: heartbeat)) != nil { continuation.yield(.heartbeat) }
            }
            group.addTask {
                // The client hung up (NIO closes the channel at its EOF).
                try? await channel.closeFuture.get()
                continuation.finish()
            }
            if notices != nil {
                group.addTask {
                    // Sleeps until the batcher is due (in steps of at most a second, so an earlier
                    // burst is not missed); with nothing waiting, until the next change.
                    var next = changes.makeAsyncIterator()
                    while !Task.isCancelled {
                        guard let at = due.at.withLock({ $0 }) else {
                            guard await next.next() != nil else { return }
                            continue
                        }
                        let delay = at - WallClock.now()
                        if delay > 0 {
                            guard (try? await LoopTimer.sleep(for: .milliseconds(min(delay, 1000)))) != nil else { return }
                            continue
                        }
                        continuation.yield(.tick)
                        guard await next.next() != nil else { return } // until the loop has taken it
                    }
                }
            }
            for await item in items {
                var text: String
                var shown: [Notice] = []
                switch item {
                case .heartbeat: text = "event: ping\ndata: {}\n\n"
                case .tick:
                    text = ""
                    shown = notices?.tick(now: WallClock.now()) ?? []
                case let .event(event):
                    guard let data = try? encoder.encode(event) else { continue }
                    text = "id: \(event.token ?? "")\ndata: \(String(decoding: data, as: UTF8.self))\n\n"
                    shown = notices?.receive(event, now: WallClock.now()) ?? []
                }
                for notice in shown {
                    guard let data = try? encoder.encode(notice) else { continue }
                    text += "event: notice\ndata: \(String(decoding: data, as: UTF8.self))\n\n"
                }
                if let notices, item.isHeartbeat == false {
                    let next = notices.nextWake
                    due.at.withLock { $0 = next }
                    changed.yield()
                }
                guard !text.isEmpty else { continue }
                do { try await outbound.write(.body(.byteBuffer(ByteBuffer(string: text)))) } catch { break }
            }
            // Whatever ended the loop (hang-up, cancellation, a failed write), end the rest:
            // closing the channel completes the close-future wait, the feed's end its loop.
            channel.close(promise: nil)
            feed.cancel()
            group.cancelAll()
        }
    }
}

struct WebError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Closes a connection the idle handler reports as silent.
final class CloseWhenIdle: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is IdleStateHandler.IdleStateEvent { context.close(promise: nil) } else { context.fireUserInboundEventTriggered(event) }
    }
}
