import Foundation
import NIOCore
import NIOEmbedded
import Testing
@testable import PulseModel
@testable import PulseProtocol
@testable import PulseStore

/// Recorded wire fixtures (issue 53, docs/RELEASING.md): the frames a release sent — a HELLO, a
/// VECTOR, a BATCH holding a change of every entity it knew (every field set) with a kept change
/// of an entity it did not know and a kept field, and a HISTORY — with what each says, in
/// `Tests/fixtures/wire/vX.Y.Z/`. Every later release decodes every recorded release's frames to
/// the same meaning, and applies the BATCH to a fresh store: an older release's bytes keep their
/// meaning for as long as the protocol speaks to it.
///
/// `PULSE_RECORD_FIXTURES=vX.Y.Z swift test --filter WireFixtureTests` records this tree's
/// frames as release vX.Y.Z (once, at the release; an existing release's folder is never written).
@Suite struct WireFixtureTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("fixtures/wire")

    /// The time of the fixtures' changes (and the clock that applies them: nothing is held).
    static let base: Int64 = 1_800_000_000_000
    static let origin = ReplicaID(rawValue: 0x5EED_0000_0000_0001)

    // MARK: What a release records

    /// A value every field of type `type` accepts.
    static func sample(_ spec: FieldSpec, row: Int) -> FieldValue {
        switch spec.type {
        case let .text(max, _): .text(String("\(spec.name) \(row) ✓".prefix(max)))
        case .bool: .integer(1)
        case let .integer(range): .integer(min(max(7, range.lowerBound), range.upperBound))
        case let .choice(words): .text(words[row % words.count])
        case .date: .text("2026-11-29")
        case let .reference(kind): .text("\(kind.rawValue)-ref")
        case .timestamp: .integer(HybridTimestamp(milliseconds: base, counter: UInt16(row)).rawValue)
        case .language: .text("pl")
        }
    }

    /// A BATCH with a change of every entity this release knows (every field, in changes of at
    /// most 16 fields; one with a field of no known meaning), a change of an entity it does not
    /// know, and a stub.
    static func everyEntityBatch() -> DeltaBatch {
        var changes: [Change] = []
        var seq: UInt64 = 0
        func next() -> (UInt64, HybridTimestamp) {
            seq += 1
            return (seq, HybridTimestamp(milliseconds: base + Int64(seq), counter: 0))
        }
        for kind in EntityKind.allCases.sorted(by: { $0.code < $1.code }) {
            let schema = kind.schema
            let row = schema.singletonRowID ?? "\(kind.rawValue)-1"
            var writes = schema.fields.map { FieldWrite(field: $0.name, value: sample($0, row: Int(kind.code))) }
            if kind == .shoppingItem { writes.append(FieldWrite(field: "fixture_kept_field", value: .text("kept by 0.10.0"))) }
            if kind == .task, let done = writes.firstIndex(where: { $0.field == "done" }) {
                // A write that names the one it overwrote (a base stamp: the "done" of a rule).
                writes[done] = FieldWrite(
                    field: "done", value: .integer(1), base: Stamp(hlc: HybridTimestamp(milliseconds: base - 5), origin: ReplicaID(rawValue: 2)))
            }
            while !writes.isEmpty {
                let (number, hlc) = next()
                let part = Array(writes.prefix(Limits.maxFieldsPerChange))
                writes.removeFirst(part.count)
                changes.append(
                    Change(origin: origin, seq: number, hlc: hlc, member: "member-1", entity: kind, rowID: row, fields: part))
            }
        }
        // Two numbers more: an entity no release knows yet (code 250), and an overwritten change.
        let (keptNumber, keptHLC) = next()
        let kept = KeptChange(
            origin: origin, seq: keptNumber, hlc: keptHLC, member: nil, code: 250, rowID: "later-1",
            fields: [FieldWrite(field: "title", value: .text("a later release's row")), FieldWrite(field: "count", value: .integer(-3))])
        let (stubNumber, stubHLC) = next()
        return DeltaBatch(
            changes: changes, coverage: [Coverage(origin: origin, after: 0, upTo: seq)], kept: [kept],
            stubs: [ChangeStub(origin: origin, seq: stubNumber, hlc: UInt64(stubHLC.rawValue))])
    }

    static func recorded(release: String) -> [(name: String, message: PeerMessage)] {
        let batch = everyEntityBatch()
        let last = batch.coverage[0].upTo
        return [
            ("hello", .hello(.init(replica: origin, proof: Array(0..<32), clock: base, release: release))),
            (
                "vector",
                .vector(
                    HistoryHeads([
                        origin: HistoryHead(seq: last, stamp: UInt64(HybridTimestamp(milliseconds: base + Int64(last), counter: 0).rawValue)),
                        ReplicaID(rawValue: 2): HistoryHead(seq: 3, stamp: 77, seal: 5),
                    ]))
            ),
            ("batch", .batch(batch)),
            ("history", .history(HistoryStamps(origin: origin, from: 1, upTo: 4, hlcs: [11, 12, 0, 14]))),
        ]
    }

    // MARK: What a frame says (in words a later release's code writes the same way)

    static func describe(_ value: FieldValue) -> String {
        switch value {
        case .null: "null"
        case let .integer(number): "integer \(number)"
        case let .text(text): "text \(String(reflecting: text))"
        }
    }

    static func hex(_ replica: ReplicaID) -> String { String(replica.rawValue, radix: 16) }

    static func describe(_ message: PeerMessage) -> [String] {
        switch message {
        case let .hello(hello):
            return [
                "hello version \(hello.version) replica \(hex(hello.replica)) proof \(hello.proof.map { String($0, radix: 16) }.joined(separator: ",")) "
                    + "clock \(hello.clock.map(String.init) ?? "none") release \(hello.release ?? "none")"
            ]
        case let .vector(heads):
            return heads.entries.sorted { $0.key.rawValue < $1.key.rawValue }.map { origin, head in
                "head \(hex(origin)) seq \(head.seq) check \(head.check) seal \(head.seal.map(String.init) ?? "none")"
            }
        case let .batch(batch):
            var lines = batch.coverage.map { "coverage \(hex($0.origin)) after \($0.after) up to \($0.upTo) after check \($0.afterCheck)" }
            lines += batch.stubs.map { "stub \(hex($0.origin)) seq \($0.seq) hlc \($0.hlc)" }
            // Known and kept changes alike, by number: a later release knows what this one kept.
            typealias Said = (origin: ReplicaID, seq: UInt64, lines: [String])
            func fields(_ writes: [FieldWrite]) -> [String] {
                writes.map { "  \($0.field) = \(describe($0.value)) base \($0.base.map { "\($0.hlc.rawValue)/\(hex($0.origin))" } ?? "none")" }
            }
            let known: [Said] = batch.changes.map {
                (
                    $0.origin, $0.seq,
                    ["change \(hex($0.origin)) seq \($0.seq) hlc \($0.hlc.rawValue) entity \($0.entity.code) row \($0.rowID) member \($0.member ?? "none")"]
                        + fields($0.fields)
                )
            }
            let kept: [Said] = batch.kept.map {
                (
                    $0.origin, $0.seq,
                    ["change \(hex($0.origin)) seq \($0.seq) hlc \($0.hlc.rawValue) entity \($0.code) row \($0.rowID) member \($0.member ?? "none")"]
                        + fields($0.fields)
                )
            }
            return lines + (known + kept).sorted { ($0.origin.rawValue, $0.seq) < ($1.origin.rawValue, $1.seq) }.flatMap(\.lines)
        case let .history(stamps):
            return ["history \(hex(stamps.origin)) from \(stamps.from) up to \(stamps.upTo) hlcs \(stamps.hlcs.map(String.init).joined(separator: ","))"]
        default:
            return ["\(message)"]
        }
    }

    // MARK: Recording and reading

    static func frame(_ message: PeerMessage) throws -> [UInt8] {
        var buffer = ByteBuffer()
        try PeerFrameEncoder().encode(data: message, out: &buffer)
        return Array(buffer.readableBytesView)
    }

    /// The frame's message, read as an agent reads a connection's bytes.
    static func read(_ bytes: [UInt8]) throws -> [PeerMessage] {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(PeerFrameDecoder()))
        defer { _ = try? channel.finish() }
        try channel.writeInbound(ByteBuffer(bytes: bytes))
        var messages: [PeerMessage] = []
        while let message = try channel.readInbound(as: PeerMessage.self) { messages.append(message) }
        return messages
    }

    @Test func recordsThisReleasesFramesWhenAsked() throws {
        guard let release = ProcessInfo.processInfo.environment["PULSE_RECORD_FIXTURES"], release.hasPrefix("v") else { return }
        let place = Self.folder.appendingPathComponent(release)
        #expect(!FileManager.default.fileExists(atPath: place.path), "\(release)'s fixtures are recorded already: a release's bytes never change")
        guard !FileManager.default.fileExists(atPath: place.path) else { return }
        try FileManager.default.createDirectory(at: place, withIntermediateDirectories: true)
        for (name, message) in Self.recorded(release: String(release.dropFirst())) {
            try Data(try Self.frame(message)).write(to: place.appendingPathComponent("\(name).bin"))
            try (Self.describe(message).joined(separator: "\n") + "\n").write(
                to: place.appendingPathComponent("\(name).txt"), atomically: true, encoding: .utf8)
        }
    }

    /// Every release recorded, each frame: decoded to what it said when recorded; the BATCH
    /// applied to a fresh store, every change it knows readable there.
    @Test func everyRecordedReleasesFramesDecodeToWhatTheySaid() throws {
        let releases = try FileManager.default.contentsOfDirectory(atPath: Self.folder.path).filter { $0.hasPrefix("v") }.sorted()
        #expect(releases.contains("v0.10.0"), "no recorded fixtures in \(Self.folder.path)")
        for release in releases {
            let place = Self.folder.appendingPathComponent(release)
            for name in ["hello", "vector", "batch", "history"] {
                let bytes = try [UInt8](Data(contentsOf: place.appendingPathComponent("\(name).bin")))
                let said = try String(contentsOf: place.appendingPathComponent("\(name).txt"), encoding: .utf8)
                let messages = try Self.read(bytes)
                try #require(messages.count == 1, "\(release)/\(name).bin holds \(messages.count) messages")
                #expect(Self.describe(messages[0]).joined(separator: "\n") + "\n" == said, "\(release)/\(name) means something else now")
                switch messages[0] {
                case let .hello(hello):
                    #expect("v" + (hello.release ?? "") == release && Hello.supportedVersions.contains(hello.version), "\(release): \(hello)")
                case let .batch(batch):
                    try apply(batch, from: release)
                default:
                    break
                }
            }
        }
    }

    typealias Hello = PeerMessage.Hello

    func apply(_ batch: DeltaBatch, from release: String) throws {
        let dir = try TemporaryDirectory()
        let clock = ManualClock(Self.base + 10_000)
        let store = try ReplicaStore(path: dir.path("fixture.sqlite"), physicalClock: clock.function)
        let outcome = try store.apply(batch)
        #expect(outcome.held.isEmpty && outcome.kept > 0, "\(release): \(outcome.held.count) held, \(outcome.kept) kept")
        let covered = batch.coverage.map(\.upTo).max() ?? 0
        #expect(try store.versionVector()[Self.origin] == covered, "\(release)'s batch is not counted whole")
        // Every change this release knows is readable as it was written (later changes of
        // the same row come after: the last write of each field is what the row shows).
        var expected: [String: [String: FieldValue]] = [:]
        for change in batch.changes where change.entity.schema.number(of: change.fields[0].field) != nil {
            for write in change.fields where change.entity.schema.number(of: write.field) != nil {
                expected["\(change.entity.rawValue)/\(change.rowID)", default: [:]][write.field] = write.value
            }
        }
        for (key, fields) in expected {
            let parts = key.split(separator: "/", maxSplits: 1).map(String.init)
            let kind = try #require(EntityKind(rawValue: parts[0]))
            let row = try store.row(kind, parts[1])
            for (field, value) in fields { #expect(row[field] == value, "\(release): \(key).\(field) reads \(String(describing: row[field]))") }
        }
        withExtendedLifetime(dir) {}
    }

    /// The recorder cannot pass by writing nothing: this release's frames round-trip through
    /// what the reader says of them, and the batch covers every entity.
    @Test func thisReleasesFramesAreWhatARecordingWouldHold() throws {
        for (name, message) in Self.recorded(release: "0.10.0") {
            let decoded = try Self.read(try Self.frame(message))
            #expect(decoded == [message], "\(name)")
            #expect(!Self.describe(message).isEmpty)
        }
        let batch = Self.everyEntityBatch()
        #expect(Set(batch.changes.map(\.entity)) == Set(EntityKind.allCases))
        for change in batch.changes { #expect(throws: Never.self) { _ = try change.entity.schema.validateOpen(change) } }
    }
}
