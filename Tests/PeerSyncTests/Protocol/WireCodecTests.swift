import NIOCore
import NIOEmbedded
import NIOTestUtils
import Testing
@testable import PulseModel
@testable import PulseProtocol
@testable import PulseStore

@Suite struct WireCodecTests {
    static let sampleBatch = DeltaBatch(
        changes: [
            Change(
                origin: ReplicaID(rawValue: 0xFFFF_0000_0000_0001), seq: 300, hlc: HybridTimestamp(milliseconds: 1_800_000_000_000, counter: 9),
                member: "m-1", entity: .shoppingItem, rowID: "row-1",
                fields: [
                    FieldWrite(field: "name", value: .text("Crème fraîche ✓")),
                    FieldWrite(field: "listed", value: .integer(-5), base: Stamp(hlc: HybridTimestamp(rawValue: 7), origin: ReplicaID(rawValue: 3))),
                    FieldWrite(field: "state", value: .null),
                ]),
            Change(
                origin: ReplicaID(rawValue: 2), seq: 1, hlc: HybridTimestamp(rawValue: 0), member: nil, entity: .ledgerEntry,
                rowID: "e", fields: [FieldWrite(field: "peanuts", value: .integer(Int64.min)), FieldWrite(field: "created", value: .integer(Int64.max))]),
        ],
        coverage: [Coverage(origin: ReplicaID(rawValue: 2), after: 0, upTo: 1), Coverage(origin: ReplicaID(rawValue: 9), after: 10, upTo: 1 << 40)])

    static let messages: [PeerMessage] = [
        .hello(.init(replica: ReplicaID(rawValue: 42), proof: Array(0..<32))),
        .hello(.init(replica: ReplicaID(rawValue: 42), proof: Array(0..<32), clock: 5, release: "0.10.0~rc1")),
        .vector(
            HistoryHeads([
                ReplicaID(rawValue: 1): HistoryHead(seq: 5, stamp: 1 << 50),
                ReplicaID(rawValue: UInt64.max): HistoryHead(seq: 1 << 62, stamp: UInt64(Int64.max), seal: 1 << 62),
                ReplicaID(rawValue: 3): HistoryHead(seq: 0, seal: 0),
            ])),
        .vector(HistoryHeads()),
        .batch(sampleBatch),
        .batch(
            DeltaBatch(
                coverage: [Coverage(origin: ReplicaID(rawValue: 2), after: 0, upTo: 3)], stubs: [ChangeStub(origin: ReplicaID(rawValue: 2), seq: 2, hlc: 99)])),
        .history(HistoryStamps(origin: ReplicaID(rawValue: 5), from: 1, upTo: 4, hlcs: [1, 0, 7])),
        .batch(DeltaBatch()),
        .caughtUp(VersionVector([ReplicaID(rawValue: 7): 7])),
        .ack(VersionVector([ReplicaID(rawValue: 7): 8])),
        .ping(0), .pong(UInt64.max),
        .error(.notAMember, "not a member of this household"),
        .pairStart(.init(message: Array(repeating: 7, count: 32), name: "Anna's laptop")),
        .pairReply(message: Array(0..<32), confirmation: Array(32..<64)),
        .pairConfirm(Array(repeating: 255, count: 32)),
        .pairWelcome(
            .init(
                householdID: "h-1", householdName: "Smith", secret: Array(0..<32), discoveryKey: Array(1...32),
                memberID: "m-1", inviterName: "desk")),
        .pairWelcome(
            .init(
                householdID: "h-1", householdName: "Smith", secret: Array(0..<32), discoveryKey: Array(1...32),
                memberID: nil, inviterName: "")),
    ]

    func frame(_ message: PeerMessage) throws -> ByteBuffer {
        var buffer = ByteBuffer()
        try PeerFrameEncoder().encode(data: message, out: &buffer)
        return buffer
    }

    @Test func everyMessageRoundTrips() throws {
        for message in Self.messages {
            var payload = ByteBuffer()
            WireCodec.encode(message, into: &payload)
            #expect(try WireCodec.decode(&payload) == message)
        }
    }

    /// Row and member ids travel as text whatever form a change holds them in: a lowercase
    /// UUID as its two words (written as its text, read back into words, no string made),
    /// anything else as the text itself. Each comes back as the same text, bytes for bytes.
    @Test func idsTravelAsTheirTextWhateverTheirForm() throws {
        let uuid = RowIDRules.random()
        let ids = [uuid, uuid.uppercased(), "{\(uuid)}", String(uuid.dropLast()), "row-1", "settings", "ÿ-\(uuid.dropFirst(3))"]
        for id in ids {
            let held = TextID(id)
            #expect(held.text == id && held.utf8Count == id.utf8.count)
            #expect(held.withUTF8 { Array($0) } == Array(id.utf8))
            #expect(Array(id.utf8).withUnsafeBytes { TextID(utf8: $0) } == held)
            if case .uuid = held { #expect(id == uuid) } else { #expect(id != uuid) }
            let change = Change(
                origin: ReplicaID(rawValue: 5), seq: 1, hlc: HybridTimestamp(rawValue: 1), member: id,
                entity: .task, rowID: id, fields: [FieldWrite(field: "title", value: .text("x"))])
            var payload = ByteBuffer()
            WireCodec.encode(.batch(DeltaBatch(changes: [change], coverage: [])), into: &payload)
            let bytes = Array(payload.readableBytesView), text = [UInt8(id.utf8.count)] + Array(id.utf8)
            // The row id, then the member flag and the member id, as strings.
            #expect(bytes.indices.contains { Array(bytes[$0...].prefix(2 * text.count + 1)) == text + [1] + text }, "\(id)")
            guard case let .batch(decoded) = try WireCodec.decode(&payload) else { Issue.record("not a batch"); continue }
            #expect(decoded.changes == [change] && decoded.changes[0].rowID == id && decoded.changes[0].member == id)
        }
        // The words are written as the canonical text (the same as the 16 bytes' text).
        for _ in 0..<100 {
            let id = RowIDRules.random()
            guard case let .uuid(high, low) = TextID(id) else { Issue.record("\(id) is not held as words"); continue }
            let written = [UInt8](unsafeUninitializedCapacity: 36) { buffer, count in
                Hex.writeUUIDText(high, low, to: UnsafeMutableRawPointer(buffer.baseAddress!))
                count = 36
            }
            #expect(String(decoding: written, as: UTF8.self) == id)
        }
        let table: [(TextID, String)] = [
            (.uuid(0, 0), "00000000-0000-0000-0000-000000000000"),
            (.uuid(.max, .max), "ffffffff-ffff-ffff-ffff-ffffffffffff"),
            (.uuid(0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210), "01234567-89ab-cdef-fedc-ba9876543210"),
        ]
        for (id, text) in table { #expect(id.text == text && TextID(text) == id) }
        // An id that is not UTF-8 is refused, as any string.
        #expect([UInt8]([0x24, 0xFF]).withUnsafeBytes { TextID(utf8: $0) } == nil)
    }

    /// A field's name is read as the schema's own text when the entity has it, and as the
    /// bytes say otherwise (the store refuses it by that name); bytes that are not UTF-8
    /// are refused whatever the name.
    @Test func fieldNamesArriveAsSentKnownOrNot() throws {
        let names = ["title", "done", "nonsense", "tïtle", "titl", "titles", ""]
        let change = Change(
            origin: ReplicaID(rawValue: 5), seq: 1, hlc: HybridTimestamp(rawValue: 1), member: nil,
            entity: .task, rowID: "t-1", fields: names.map { FieldWrite(field: $0, value: .integer(1)) })
        var payload = ByteBuffer()
        WireCodec.encode(.batch(DeltaBatch(changes: [change], coverage: [])), into: &payload)
        var bytes = Array(payload.readableBytesView)
        guard case let .batch(decoded) = try WireCodec.decode(&payload) else { Issue.record("not a batch"); return }
        #expect(decoded.changes == [change] && decoded.changes[0].fields.map(\.field) == names)
        // "done" with its last byte made invalid UTF-8: refused.
        let done = [UInt8(4)] + Array("done".utf8)
        let at = try #require(bytes.indices.first { Array(bytes[$0...].prefix(5)) == done })
        bytes[at + 4] = 0xFF
        var damaged = ByteBuffer(bytes: bytes)
        #expect(throws: WireError.self) { try WireCodec.decode(&damaged) }
    }

    /// The bytes of a BATCH's changes, spelled out from docs/PROTOCOL.md ("Changes"), not
    /// from the encoder: the raw writer and reader keep the layout an independent peer reads.
    @Test func changesHaveTheDocumentedLayout() throws {
        func varint(_ value: UInt64) -> [UInt8] { var out: [UInt8] = []; Varint.append(value, to: &out); return out }
        func string(_ text: String) -> [UInt8] { varint(UInt64(text.utf8.count)) + Array(text.utf8) }
        func fixed(_ value: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) } }
        let first = Self.sampleBatch.changes[0]
        let noCheck: [UInt8] = [0, 0, 0, 0] // protocol 9: each claim's check of the stamp at its start
        var expected: [UInt8] = [3] + varint(2) + fixed(2) + varint(0) + varint(1) + noCheck + fixed(9) + varint(10) + varint(1 << 40) + noCheck + varint(2)
        expected += fixed(0xFFFF_0000_0000_0001) + varint(300) + varint(UInt64(first.hlc.rawValue)) + [5] + string("row-1") + [1] + string("m-1")
        expected += varint(3) + string("name") + [2] + string("Crème fraîche ✓") + [0]
        expected += string("listed") + [1] + varint(9) /* zigzag of -5 */ + [1] + varint(7) + fixed(3)
        expected += string("state") + [0] + [0]
        expected += fixed(2) + varint(1) + varint(0) + [12] + string("e") + [0] + varint(2)
        expected += string("peanuts") + [1] + varint(UInt64.max) /* zigzag of Int64.min */ + [0]
        expected += string("created") + [1] + varint(UInt64.max - 1) /* zigzag of Int64.max */ + [0]
        expected += varint(0) // no stubs (protocol 9)
        var payload = ByteBuffer()
        WireCodec.encode(.batch(Self.sampleBatch), into: &payload)
        #expect(Array(payload.readableBytesView) == expected)
        var read = ByteBuffer(bytes: expected)
        #expect(try WireCodec.decode(&read) == .batch(Self.sampleBatch))
        // Cut anywhere inside, the batch is refused, never read past its end.
        for cut in 1..<expected.count {
            var short = ByteBuffer(bytes: expected.prefix(cut))
            #expect(throws: WireError.self) { try WireCodec.decode(&short) }
        }
    }

    @Test func theDecoderHandlesEveryWayOfSplittingTheBytes() throws {
        // The verifier feeds the input whole, byte by byte, and in random pieces.
        let pairs = try Self.messages.map { (try frame($0), [$0]) }
        #expect(throws: Never.self) { // the verifier throws on the first wrong output
            try ByteToMessageDecoderVerifier.verifyDecoder(inputOutputPairs: pairs) { PeerFrameDecoder() }
        }
    }

    func decodingFails(_ bytes: [UInt8]) -> Bool {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(PeerFrameDecoder()))
        defer { _ = try? channel.finish() }
        do {
            try channel.writeInbound(ByteBuffer(bytes: bytes))
            return false
        } catch {
            return true
        }
    }

    @Test func oversizedAndEmptyFramesAreRefusedBeforeBuffering() {
        #expect(decodingFails([0x7F, 0xFF, 0xFF, 0xFF, 1])) // a 2 GiB frame is refused on its length alone
        #expect(decodingFails([0x00, 0x40, 0x00, 0x01])) // 4 MiB + 1
        #expect(decodingFails([0, 0, 0, 0]))
    }

    /// HELLO of version 9 carries the release, then whatever a later release adds (ignored: a
    /// trailing addition needs no new version, PROTOCOL §7); a release that is not one is dropped.
    @Test func aHelloOfVersion9NamesItsReleaseAndLaterTrailingDataIsIgnored() throws {
        var payload = ByteBuffer()
        WireCodec.encode(.hello(.init(replica: ReplicaID(rawValue: 42), proof: Array(0..<32), clock: 5, release: "0.10.0")), into: &payload)
        payload.writeBytes([1, 2, 3, 4])
        guard case let .hello(hello) = try WireCodec.decode(&payload) else { Issue.record("not a HELLO"); return }
        #expect(hello.release == "0.10.0" && hello.clock == 5)
        #expect(PeerMessage.Hello(replica: ReplicaID(rawValue: 1), proof: [], release: "0.10 ; rm -rf").release == nil)
        #expect(PeerMessage.Hello(version: 8, replica: ReplicaID(rawValue: 1), proof: [], release: "0.10.0").release == nil)
        var eight = ByteBuffer()
        WireCodec.encode(.hello(.init(version: 8, replica: ReplicaID(rawValue: 42), proof: Array(0..<32), clock: 5)), into: &eight)
        #expect(eight.readableBytes == 1 + 2 + 8 + 32 + 8, "version 8's HELLO unchanged")
    }

    @Test func garbageIsRefused() throws {
        #expect(decodingFails([0, 0, 0, 1, 99])) // unknown type
        #expect(decodingFails([0, 0, 0, 3, 6, 1, 2])) // truncated ping
        var trailing = try frame(.ping(1))
        trailing.setInteger(UInt32(10), at: 0)
        trailing.writeBytes([0, 0])
        #expect(decodingFails(Array(trailing.readableBytesView))) // bytes after the message
        #expect(decodingFails([0, 0, 0, 12, 2, 0x81, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02])) // varint overflow
        #expect(decodingFails([0, 0, 0, 6, 8, 0, 1, 2, 0xC3, 0x28])) // invalid UTF-8 in a string
        #expect(decodingFails([0, 0, 0, 6, 3, 0, 0xFF, 0xFF, 0xFF, 0x7F])) // a batch claiming 268M changes
        #expect(decodingFails(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)))
    }

    /// Entity 0 (no release gives it) is refused; a later release's entity (200) is kept
    /// (OpenSchemaTests), not refused.
    @Test func aChangeWithEntity0OrAnUnknownTagIsRefused() throws {
        var good = try frame(.batch(DeltaBatch(changes: [Self.sampleBatch.changes[1]])))
        let bytes = Array(good.readableBytesView)
        // The entity code follows the type, the counts, the origin (8), seq and hlc varints.
        let entityOffset = 4 + 1 + 1 + 1 + 8 + 1 + 1
        #expect(bytes[entityOffset] == 12)
        var bad = bytes
        bad[entityOffset] = 0
        #expect(decodingFails(bad))
        var later = bytes
        later[entityOffset] = 200
        #expect(!decodingFails(later))
        #expect(!decodingFails(Array(good.readBytes(length: good.readableBytes)!)))
    }

    @Test func aConnectionClosingMidFrameIsAnError() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(PeerFrameDecoder()))
        let whole = try frame(.ping(5))
        try channel.writeInbound(whole.getSlice(at: 0, length: 6)!)
        #expect(try channel.readInbound(as: PeerMessage.self) == nil)
        #expect(throws: (any Error).self) { try channel.finish() }
    }

    @Test func frameEncoderAndDecoderWorkThroughAPipeline() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(PeerFrameDecoder()))
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(PeerFrameEncoder()))
        try channel.writeOutbound(PeerMessage.batch(Self.sampleBatch))
        let bytes = try #require(try channel.readOutbound(as: ByteBuffer.self))
        try channel.writeInbound(bytes)
        #expect(try channel.readInbound(as: PeerMessage.self) == .batch(Self.sampleBatch))
        #expect(try channel.finish().isClean)
    }

    /// §5.8: a session closed from two places at once (its own check, and the engine closing
    /// every session) sent ERROR 8 twice; whatever is written after an ERROR stays here.
    @Test func nothingFollowsAnErrorOnTheWire() throws {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(MessageToByteHandler(PeerFrameEncoder()))
        try channel.pipeline.syncOperations.addHandler(FarewellGate())
        try channel.writeOutbound(PeerMessage.ping(1))
        try channel.writeOutbound(PeerMessage.error(.shuttingDown, "this machine continues under a new replica id"))
        #expect(throws: (any Error).self) { try channel.writeOutbound(PeerMessage.error(.shuttingDown, "again")) }
        #expect(throws: (any Error).self) { try channel.writeOutbound(PeerMessage.batch(Self.sampleBatch)) }
        var sent: [PeerMessage] = []
        let decoder = EmbeddedChannel(handler: ByteToMessageHandler(PeerFrameDecoder()))
        while let bytes = try channel.readOutbound(as: ByteBuffer.self) { try decoder.writeInbound(bytes) }
        while let message = try decoder.readInbound(as: PeerMessage.self) { sent.append(message) }
        #expect(sent == [.ping(1), .error(.shuttingDown, "this machine continues under a new replica id")])
        _ = try? channel.finish()
        _ = try? decoder.finish()
    }
}

/// The delta cursor cuts batches by bytes too: a BATCH of the largest changes the schema
/// allows still fits a frame, and the cursor's size bound is never below the encoding.
@Suite struct BatchByteLimitTests {
    @Test func theSizeBoundIsNeverBelowTheEncodingAndBatchesFitTheirByteLimit() throws {
        let dir = try TemporaryDirectory()
        let (a, b) = (try makeStore(dir, "a", id: 0xA), try makeStore(dir, "b", id: 0xB))
        let long = String(repeating: "é", count: 200) // 400 bytes: names are at most 200 characters
        try a.write(member: RowIDRules.random()) { tx in
            for i in 0..<400 { try tx.put(.shoppingItem, "item-\(i)-" + String(repeating: "x", count: 100), shoppingItem(long)) }
        }
        let limit = 64 * 1024
        let cursor = try a.deltas(for: VersionVector(), batchLimit: 10_000, byteLimit: limit)
        var batches = 0
        while let batch = try cursor.next() {
            batches += 1
            var bound = 0
            for change in batch.changes {
                var one = ByteBuffer()
                one.writeChange(change)
                #expect(DeltaCursor.wireSizeBound(change) >= one.readableBytes)
                bound += DeltaCursor.wireSizeBound(change)
            }
            #expect(bound <= limit)
            var encoded = ByteBuffer()
            WireCodec.encode(.batch(batch), into: &encoded)
            #expect(encoded.readableBytes <= limit + 1024, "\(encoded.readableBytes)")
            try b.apply(batch)
        }
        #expect(batches >= 4, "cut by bytes, not by the 10 000 changes")
        #expect(try b.canonicalState() == a.canonicalState())
        #expect(try b.versionVector() == a.versionVector())
        // The default limits: a whole BATCH within a 4 MiB frame.
        #expect(DeltaCursor.defaultByteLimit + WireLimits.maxCoveragePerBatch * 30 < WireLimits.maxFrameBytes)
        #expect(DeltaCursor.defaultBatchLimit <= WireLimits.maxChangesPerBatch)
    }
}
