import NIOCore
import PulseModel

/// The bytes of changes, the bulk of every BATCH, written and read through raw cursors
/// over memory the ByteBuffer hands out once per change (writing) or once per batch
/// (reading), instead of one ByteBuffer call per byte: each of those checked capacity,
/// uniqueness and exclusive access, and together they were a fifth of a sending agent's
/// work in a catch-up. The layout is the one docs/PROTOCOL.md gives; the round-trip,
/// splitting and refusal tests of `WireCodecTests` hold it.

/// Writes into memory reserved beforehand. Every write checks the room left (one
/// comparison), so a bound computed wrong stops the program instead of writing past it.
struct RawWireWriter: ~Copyable {
    private let base: UnsafeMutableRawBufferPointer
    private(set) var offset = 0

    init(_ base: UnsafeMutableRawBufferPointer) { self.base = base }

    private func room(_ count: Int) {
        precondition(count <= base.count - offset, "a change's bytes exceed the room reserved for them")
    }

    mutating func byte(_ value: UInt8) {
        room(1)
        base.storeBytes(of: value, toByteOffset: offset, as: UInt8.self)
        offset += 1
    }

    /// Big-endian, as ByteBuffer's `writeInteger` writes it.
    mutating func fixed64(_ value: UInt64) {
        room(8)
        base.storeBytes(of: value.bigEndian, toByteOffset: offset, as: UInt64.self)
        offset += 8
    }

    mutating func varint(_ value: UInt64) {
        room(10)
        var value = value
        while value >= 0x80 {
            base.storeBytes(of: UInt8(truncatingIfNeeded: value) | 0x80, toByteOffset: offset, as: UInt8.self)
            offset += 1
            value >>= 7
        }
        base.storeBytes(of: UInt8(value), toByteOffset: offset, as: UInt8.self)
        offset += 1
    }

    /// A varint byte count, then the UTF-8 bytes.
    mutating func string(_ string: String) {
        let count = string.utf8.count
        varint(UInt64(count))
        room(count)
        let copied: Void? = string.utf8.withContiguousStorageIfAvailable { utf8 in
            if let source = utf8.baseAddress { (base.baseAddress! + offset).copyMemory(from: source, byteCount: count) }
        }
        if copied == nil {
            var at = offset
            for unit in string.utf8 {
                base.storeBytes(of: unit, toByteOffset: at, as: UInt8.self)
                at += 1
            }
        }
        offset += count
    }

    /// An id as its text, as ``string(_:)`` writes it: a UUID's written from its words.
    mutating func id(_ id: TextID) {
        switch id {
        case let .uuid(high, low):
            varint(36)
            room(36)
            Hex.writeUUIDText(high, low, to: base.baseAddress! + offset)
            offset += 36
        case let .text(text):
            string(text)
        }
    }

    /// The most bytes ``change(_:)`` can write for `change`: each varint counted at its
    /// longest (10 bytes). Looser than the delta cursor's `wireSizeBound`, which may count
    /// on the schema's limits to cut batches; this one must hold for any change, since it
    /// sizes the memory written.
    static func bound(_ change: Change) -> Int {
        var size = 8 + 10 + 10 + 1 + 10 + change.row.utf8Count + 1 + 10 + (change.writer?.utf8Count ?? 0) + 10
        for field in change.fields {
            size += 10 + field.field.utf8.count + 1 + 10 + 1 + 10 + 8
            if case let .text(text) = field.value { size += text.utf8.count }
        }
        return size
    }
}

/// Reads from bytes in place; every read checks what is left and fails as ByteBuffer's
/// reads do ("truncated message"), so no input reads past the end.
struct RawWireReader: ~Copyable {
    private let base: UnsafeRawBufferPointer
    private(set) var offset = 0

    init(_ base: UnsafeRawBufferPointer) { self.base = base }

    mutating func byte() throws(WireError) -> UInt8 {
        guard offset < base.count else { throw WireError("truncated message") }
        defer { offset += 1 }
        return base[offset]
    }

    mutating func fixed64() throws(WireError) -> UInt64 {
        guard base.count - offset >= 8 else { throw WireError("truncated message") }
        defer { offset += 8 }
        return UInt64(bigEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    mutating func varint() throws(WireError) -> UInt64 {
        var at = offset
        let bytes = base
        do {
            let value = try Varint.decode {
                guard at < bytes.count else { return nil }
                defer { at += 1 }
                return bytes[at]
            }
            offset = at
            return value
        } catch {
            throw WireError(error.description)
        }
    }

    mutating func count(max: Int, what: String) throws(WireError) -> Int {
        let count = try varint()
        guard count <= UInt64(max) else { throw WireError("too many \(what): \(count) (at most \(max))") }
        return Int(count)
    }

    /// A string's bytes where they lie (its varint length, then that many bytes), read past.
    /// ``string()``, ``fieldName(of:)`` and ``id()`` make their values of them.
    private mutating func stringBytes() throws(WireError) -> UnsafeRawBufferPointer {
        let length = try count(max: WireLimits.maxStringBytes, what: "bytes in a string")
        guard base.count - offset >= length else { throw WireError("truncated string") }
        defer { offset += length }
        return UnsafeRawBufferPointer(rebasing: base[offset..<(offset + length)])
    }

    private static var notUTF8: WireError { WireError("a string is not valid UTF-8") }

    mutating func string() throws(WireError) -> String {
        guard let string = String(validUTF8: try stringBytes()) else { throw Self.notUTF8 }
        return string
    }

    /// A string as a field's name: the schema's own text when it names one of `schema`'s
    /// fields (no string made, no UTF-8 to check: three a change), any other as read (the
    /// store refuses it by name).
    mutating func fieldName(of schema: EntitySchema) throws(WireError) -> String {
        let bytes = try stringBytes()
        if let number = schema.number(ofUTF8: bytes) { return schema.fieldNames[number] }
        guard let name = String(validUTF8: bytes) else { throw Self.notUTF8 }
        return name
    }

    /// A string as an id (``TextID``): a UUID's text read into its two words, no string made.
    mutating func id() throws(WireError) -> TextID {
        guard let id = TextID(utf8: try stringBytes()) else { throw Self.notUTF8 }
        return id
    }
}

extension RawWireWriter {
    /// docs/PROTOCOL.md, "Changes": origin (8), seq, hlc, entity code (1), row id, member
    /// flag and id, field count, then each field's name, value tag and value, base flag
    /// and base stamp.
    mutating func change(_ change: Change) {
        header(change.origin, change.seq, change.hlc, change.entity.code, change.row, change.writer)
        fields(change.fields)
    }

    /// A kept change (an entity this release does not know): the same layout, its own code.
    mutating func change(_ change: KeptChange) {
        header(change.origin, change.seq, change.hlc, change.code, change.row, change.writer)
        fields(change.fields)
    }

    private mutating func header(_ origin: ReplicaID, _ seq: UInt64, _ hlc: HybridTimestamp, _ code: UInt8, _ row: TextID, _ writer: TextID?) {
        fixed64(origin.rawValue)
        varint(seq)
        varint(UInt64(bitPattern: hlc.rawValue))
        byte(code)
        id(row)
        if let writer {
            byte(1)
            id(writer)
        } else {
            byte(0)
        }
    }

    private mutating func fields(_ fields: [FieldWrite]) {
        varint(UInt64(fields.count))
        for index in fields.indices {
            string(fields[index].field)
            switch fields[index].value {
            case .null: byte(0)
            case let .integer(v):
                byte(1)
                varint(UInt64(bitPattern: (v << 1) ^ (v >> 63))) // zigzag
            case let .text(text):
                byte(2)
                string(text)
            }
            if let base = fields[index].base {
                byte(1)
                varint(UInt64(bitPattern: base.hlc.rawValue))
                fixed64(base.origin.rawValue)
            } else {
                byte(0)
            }
        }
    }
}

extension RawWireReader {
    /// One change: a ``Change`` of an entity this release knows, else (a later release's
    /// entity) a ``KeptChange``.
    mutating func change() throws(WireError) -> Either {
        let origin = try fixed64()
        guard origin != 0 else { throw WireError("replica id 0 in a change") }
        let seq = try varint()
        let hlc = try timestamp()
        let code = try byte()
        guard code != 0 else { throw WireError("entity code 0", code: .rejectedBatch) }
        let entity = EntityKind(code: code)
        let row = try id()
        let writer: TextID?
        switch try byte() {
        case 0: writer = nil
        case 1: writer = try id()
        default: throw WireError("invalid member flag")
        }
        let fields = try fields(of: entity?.schema)
        guard let entity else {
            return .kept(
                KeptChange(origin: ReplicaID(rawValue: origin), seq: seq, hlc: hlc, writer: writer, code: code, row: row, fields: fields))
        }
        return .known(
            Change(
                origin: ReplicaID(rawValue: origin), seq: seq, hlc: hlc, writer: writer,
                entity: entity, row: row, fields: fields))
    }

    enum Either {
        case known(Change)
        case kept(KeptChange)
    }

    /// A change's fields; the names of a known entity's fields are the schema's own strings.
    private mutating func fields(of schema: EntitySchema?) throws(WireError) -> [FieldWrite] {
        let fieldCount = try count(max: Limits.maxFieldsPerChange, what: "fields in a change")
        var fields: [FieldWrite] = []
        fields.reserveCapacity(fieldCount)
        for _ in 0..<fieldCount {
            let name: String
            if let schema {
                name = try fieldName(of: schema)
            } else {
                guard let text = String(validUTF8: try stringBytes()) else { throw Self.notUTF8 }
                name = text
            }
            let value: FieldValue
            switch try byte() {
            case 0: value = .null
            case 1:
                let raw = try varint()
                value = .integer(Int64(bitPattern: raw >> 1) ^ -Int64(bitPattern: raw & 1))
            case 2: value = .text(try string())
            case let tag: throw WireError("unknown value tag \(tag)")
            }
            let base: Stamp?
            switch try byte() {
            case 0: base = nil
            case 1:
                let baseHLC = try timestamp()
                base = Stamp(hlc: baseHLC, origin: ReplicaID(rawValue: try fixed64()))
            default: throw WireError("invalid base flag")
            }
            fields.append(FieldWrite(field: name, value: value, base: base))
        }
        return fields
    }

    private mutating func timestamp() throws(WireError) -> HybridTimestamp {
        let raw = try varint()
        guard raw <= UInt64(Int64.max) else { throw WireError("timestamp out of range") }
        return HybridTimestamp(rawValue: Int64(raw))
    }
}
