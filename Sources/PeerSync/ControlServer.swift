import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import NIOPosix
import PulseProtocol
import PulseModel
import PulseHousehold

/// Splits a byte stream into lines of at most `maxLength` bytes.
struct LineDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer
    static let maxLength = 1 << 20

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let newline = buffer.readableBytesView.firstIndex(of: UInt8(ascii: "\n")) else {
            if buffer.readableBytes > Self.maxLength { throw WireError("control request longer than \(Self.maxLength) bytes") }
            return .needMoreData
        }
        let line = buffer.readSlice(length: newline - buffer.readerIndex)!
        buffer.moveReaderIndex(forwardBy: 1)
        context.fireChannelRead(Self.wrapInboundOut(line))
        return .continue
    }
}

/// The owner-only Unix socket `control.sock` in the home directory.
enum ControlServer {
    static func bind(
        path: String, group: EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws
        -> NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
    {
        let server = try await ServerBootstrap(group: group)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineDecoder()))
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        chmod(path, 0o600)
        return server
    }

    /// Serves connections until cancelled; `handle` answers each request, except
    /// `subscribe`, which turns its connection into the live feed (``subscribe(_:_:_:feed:)``).
    static func serve(
        _ server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>, logger: Logger,
        feed: EventFeed, handle: @escaping @Sendable (ControlRequest) async -> ControlResponse
    ) async throws {
        try await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { connections in
                for try await connection in connections {
                    group.addTask {
                        do {
                            try await connection.executeThenClose { lines, replies in
                                var requests = lines.makeAsyncIterator()
                                while let line = try await requests.next() {
                                    let response: ControlResponse
                                    if let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line.readableBytesView)) {
                                        if request.op == "subscribe" {
                                            // Whatever the client sends now is ignored; its hang-up ends the stream.
                                            try await subscribe(request, connection.channel, replies, feed: feed) {
                                                while try await requests.next() != nil {}
                                            }
                                            return
                                        }
                                        response = await handle(request)
                                    } else {
                                        response = .refused(.badRequest, ["example": "{\"op\":\"status\"}"])
                                    }
                                    var data = try JSONEncoder().encode(response)
                                    data.append(UInt8(ascii: "\n"))
                                    try await replies.write(ByteBuffer(bytes: data))
                                }
                            }
                        } catch {
                            logger.debug("control connection ended", metadata: ["error": "\(error)"])
                        }
                    }
                }
            }
        }
    }

    /// The live feed on one connection: the answer (the newest token, whether the resume
    /// left a gap), then the missed events, then each event as it happens, one JSON object
    /// per line, until the client hangs up, falls behind (disconnected by the feed) or the
    /// agent stops.
    static func subscribe(
        _ request: ControlRequest, _ channel: Channel, _ replies: NIOAsyncChannelOutboundWriter<ByteBuffer>,
        feed: EventFeed, untilClientHangsUp: () async throws -> Void
    ) async throws {
        let send: @Sendable (any Encodable & Sendable) async throws -> Void = { value in
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            var data = try encoder.encode(value)
            data.append(UInt8(ascii: "\n"))
            try await replies.write(ByteBuffer(bytes: data))
        }
        var topics = Set(HouseholdEvent.Topic.allCases)
        if let names = request.topics, !names.isEmpty {
            if let unknown = names.first(where: { HouseholdEvent.Topic(rawValue: $0) == nil }) {
                let known = HouseholdEvent.Topic.allCases.map(\.rawValue).joined(separator: ", ")
                try await send(ControlResponse.refused(.unknownTopic, ["topic": .string(unknown), "known": .string(known)]))
                return
            }
            topics = Set(names.compactMap(HouseholdEvent.Topic.init(rawValue:)))
        }
        let subscription = feed.subscribe(topics: topics, resume: request.resume, close: { channel.close(promise: nil) })
        defer { feed.unsubscribe(subscription.id) }
        try await send(
            ControlResponse(
                ok: true,
                result: .object([
                    "token": .string(subscription.token), "gap": .bool(subscription.gap),
                    "topics": .array(topics.map(\.rawValue).sorted().map(JSONValue.string)),
                ])))
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                defer { channel.close(promise: nil) } // the stream ended (agent stopping, or fell behind)
                for await event in subscription.events { try await send(event) }
            }
            try await untilClientHangsUp()
            group.cancelAll()
        }
    }
}
