/// The last-writer-wins order of writes: by hybrid timestamp, ties by replica id.
/// Every replica orders two stamps the same way.
public struct Stamp: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let hlc: HybridTimestamp
    public let origin: ReplicaID

    public init(hlc: HybridTimestamp, origin: ReplicaID) {
        self.hlc = hlc
        self.origin = origin
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.hlc, lhs.origin) < (rhs.hlc, rhs.origin)
    }

    public var description: String { "\(hlc)@\(origin)" }
}

/// One field set by a change. `base` is the stamp of the value the author's replica
/// held for this field when it wrote (nil: none); a receiver whose current value has
/// another stamp knows the two writes were concurrent and logs the conflict.
public struct FieldWrite: Sendable, Hashable {
    public let field: String
    public let value: FieldValue
    public let base: Stamp?

    public init(field: String, value: FieldValue, base: Stamp? = nil) {
        self.field = field
        self.value = value
        self.base = base
    }
}

/// An id as a change and a field version hold it (a row's id, a member's): a lowercase
/// canonical UUID (every id the household makes) as its 16 bytes in two words, any other
/// text as given. Changes are made and dropped by the thousand in a catch-up, and rows copy
/// their versions while they merge and write: a word pair is made without an allocation,
/// copies without the atomic reference counting a 36-byte string costs, hashes and
/// compares as two words, and is read from and written to the wire, a record or the index
/// without text in between. Each text has exactly one form, so equal ids are equal.
package enum TextID: Sendable, Hashable {
    case uuid(UInt64, UInt64)
    case text(String)

    package init(_ text: String) {
        if let words = Hex.uuidWords(text) { self = .uuid(words.0, words.1) } else { self = .text(text) }
    }

    /// The id of UTF-8 `bytes`; nil when they are not UTF-8.
    package init?(utf8 bytes: UnsafeRawBufferPointer) {
        if bytes.count == 36, let words = Hex.uuidWords(bytes.assumingMemoryBound(to: UInt8.self)) {
            self = .uuid(words.0, words.1)
        } else if let text = String(validUTF8: bytes) {
            self = .text(text)
        } else {
            return nil
        }
    }

    /// The id as text.
    package var text: String {
        switch self {
        case let .uuid(high, low): withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { Hex.uuidText($0) }
        case let .text(text): text
        }
    }

    /// The length of ``text`` in UTF-8 bytes.
    package var utf8Count: Int {
        switch self {
        case .uuid: 36
        case let .text(text): text.utf8.count
        }
    }

    /// Calls `body` with the UTF-8 bytes of ``text``: a UUID's written on the stack, no
    /// string made. (In a tuple of words: `withUnsafeTemporaryAllocation`, generic over
    /// its result, looked up `Result`'s metadata at every call, 400 instructions.)
    package func withUTF8<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        switch self {
        case let .uuid(high, low):
            var buffer: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)
            return try withUnsafeMutableBytes(of: &buffer) { buffer in
                Hex.writeUUIDText(high, low, to: buffer.baseAddress!)
                return try body(UnsafeRawBufferPointer(rebasing: buffer[0..<36]))
            }
        case var .text(text):
            return try text.withUTF8 { try body(UnsafeRawBufferPointer($0)) }
        }
    }
}

/// One write to one row, as it travels between replicas: replica `origin` numbered it
/// `seq` (1, 2, 3 … per replica) and stamped it `hlc`; `member` is the household member
/// who made it (nil for the system).
///
/// The row's id and the member's are held as ``TextID``s (`row`, `writer`); `rowID` and
/// `member` give their text, made on each call: the paths that handle changes by the
/// thousand (the wire, the store's apply and delta cursor) use the ids.
public struct Change: Sendable, Hashable {
    public let origin: ReplicaID
    public let seq: UInt64
    public let hlc: HybridTimestamp
    /// The member who made the change (nil for the system).
    package let writer: TextID?
    public let entity: EntityKind
    /// The id of the row the change writes.
    package let row: TextID
    public let fields: [FieldWrite]

    package init(
        origin: ReplicaID, seq: UInt64, hlc: HybridTimestamp, writer: TextID?,
        entity: EntityKind, row: TextID, fields: [FieldWrite]
    ) {
        self.origin = origin
        self.seq = seq
        self.hlc = hlc
        self.writer = writer
        self.entity = entity
        self.row = row
        self.fields = fields
    }

    public init(
        origin: ReplicaID, seq: UInt64, hlc: HybridTimestamp, member: String?,
        entity: EntityKind, rowID: String, fields: [FieldWrite]
    ) {
        self.init(
            origin: origin, seq: seq, hlc: hlc, writer: member.map(TextID.init), entity: entity,
            row: TextID(rowID), fields: fields)
    }

    /// The member's id as text (made on each call).
    public var member: String? { writer?.text }

    /// The row's id as text (made on each call).
    public var rowID: String { row.text }

    public var stamp: Stamp { Stamp(hlc: hlc, origin: origin) }
}

/// A change to an entity this release does not know — a later release's (PROTOCOL.md §7,
/// "An open schema"): kept with its stamps, counted in the version vector and relayed to the
/// other peers as it came, never shown; a later release that knows the entity makes it live.
/// Only the generic bounds apply to it (``KeptRules``).
public struct KeptChange: Sendable, Hashable {
    public let origin: ReplicaID
    public let seq: UInt64
    public let hlc: HybridTimestamp
    package let writer: TextID?
    /// The entity's code on the wire (``EntityKind/init(code:)`` knows none here).
    public let code: UInt8
    package let row: TextID
    public let fields: [FieldWrite]

    package init(
        origin: ReplicaID, seq: UInt64, hlc: HybridTimestamp, writer: TextID?, code: UInt8, row: TextID, fields: [FieldWrite]
    ) {
        self.origin = origin
        self.seq = seq
        self.hlc = hlc
        self.writer = writer
        self.code = code
        self.row = row
        self.fields = fields
    }

    public init(
        origin: ReplicaID, seq: UInt64, hlc: HybridTimestamp, member: String?, code: UInt8, rowID: String, fields: [FieldWrite]
    ) {
        self.init(
            origin: origin, seq: seq, hlc: hlc, writer: member.map(TextID.init), code: code, row: TextID(rowID), fields: fields)
    }

    public var member: String? { writer?.text }
    public var rowID: String { row.text }
    public var stamp: Stamp { Stamp(hlc: hlc, origin: origin) }
}

/// A claim that travels with a batch: the sender has given the receiver everything of
/// replica `origin` numbered in `(after, upTo]` (or what supersedes it). A receiver
/// that already holds `origin` up to `after` (or more) may advance its vector to `upTo`;
/// otherwise there is a gap and it must not.
public struct Coverage: Sendable, Hashable {
    public let origin: ReplicaID
    public let after: UInt64
    public let upTo: UInt64
    /// Protocol 9: ``HistoryHead/check(_:)`` of the sender's stamp at `after` (0: `after` is 0
    /// or the stamp is unknown): the receiver holds the same history up to `after` only if
    /// its own stamp there has the same check (docs/PROTOCOL.md §5, "Histories that forked").
    public let afterCheck: UInt32

    public init(origin: ReplicaID, after: UInt64, upTo: UInt64, afterCheck: UInt32 = 0) {
        self.origin = origin
        self.after = after
        self.upTo = upTo
        self.afterCheck = afterCheck
    }
}

/// The unit a replica applies atomically.
public struct DeltaBatch: Sendable, Hashable {
    public var changes: [Change]
    public var coverage: [Coverage]
    /// Changes to entities this release does not know (kept and relayed: ``KeptChange``). On
    /// the wire they are changes like the others, after them.
    public var kept: [KeptChange]
    /// Numbers the coverage accounts for whose changes were overwritten: their stamps alone
    /// (protocol 9: ``ChangeStub``).
    public var stubs: [ChangeStub]

    public init(changes: [Change] = [], coverage: [Coverage] = [], kept: [KeptChange] = [], stubs: [ChangeStub] = []) {
        self.changes = changes
        self.coverage = coverage
        self.kept = kept
        self.stubs = stubs
    }

    public var isEmpty: Bool { changes.isEmpty && coverage.isEmpty && kept.isEmpty && stubs.isEmpty }
    /// How many changes the batch holds, known and kept.
    public var changeCount: Int { changes.count + kept.count }
}
