import PulseModel
/// The field versions of one row, as one `versions` value (of its typed row, or of
/// `partial_row` while fields are missing): every field of a row in one record, written
/// with the row itself. The changes a row's fields come from are listed once (a new row
/// is one change for all its fields), and each field points at its change.
///
/// Format 2 (integers little-endian, `varint` = LEB128):
/// `0x02`; varint change count, then per change: hlc 8 bytes, origin 8 bytes, varint
/// seq, member kind (0 none, 1 text: varint length + UTF-8, 2 a lowercase UUID as its 16
/// bytes); varint field count, then per field in schema order: varint field number (its
/// place in the entity's schema), varint change index, flags (1: base follows, 2: value
/// follows), [value tag (0 null, 1 integer: 8 bytes, 2 text: varint length + UTF-8)],
/// [base hlc 8 bytes, base origin 8 bytes]. A value that does not follow is the row's
/// typed column of that field (only in a typed row, and only where the column gives the
/// value back exactly: ``storedExactly(_:_:)``). A new shopping item's record is ≈ 45
/// bytes (format 1: ≈ 130).
///
/// Format 1 (read only, for migration 8): the same changes with the member always as
/// text; per field in name order its name (varint length + UTF-8) instead of a number, the
/// value always, then flags (1: base follows) and the base.
package enum RowVersions {
    package static let format: UInt8 = 2

    package struct DecodingError: Error, CustomStringConvertible {
        package let reason: String
        package var description: String { "unreadable row versions: \(reason)" }
    }

    private struct Origin: Equatable {
        let stamp: Stamp
        let seq: UInt64
        let writer: TextID?
    }

    /// Whether `value`, stored in the typed column of a field of type `type`, reads back
    /// as the same value (the column's affinity keeps its type): then the record need not
    /// hold it. The columns' declared types are checked against this in the tests.
    package static func storedExactly(_ type: FieldType, _ value: FieldValue) -> Bool {
        switch (value, type) {
        case (.null, _): true
        case (.text, .text), (.text, .choice), (.text, .date), (.text, .reference), (.text, .language): true
        case (.integer, .bool), (.integer, .integer), (.integer, .timestamp): true
        default: false
        }
    }

    /// The record of `row`. `inTypedRow`: the record goes with the row's typed columns, so
    /// values those columns hold exactly are left out.
    package static func encode(_ row: VersionedRow, inTypedRow: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(48 + row.count * 8)
        row.withVersions { encode(row, $0, inTypedRow: inTypedRow, to: &out) }
        return out
    }

    /// The same, appended to `out` (the held inserts' bytes: no array of its own).
    package static func encode(_ row: VersionedRow, inTypedRow: Bool, appendingTo out: inout [UInt8]) {
        row.withVersions { encode(row, $0, inTypedRow: inTypedRow, to: &out) }
    }

    /// `versions`: the row's, lent (read in place, never copied whole).
    private static func encode(
        _ row: VersionedRow, _ versions: UnsafeBufferPointer<FieldVersion?>, inTypedRow: Bool,
        to out: inout [UInt8]
    ) {
        let schema = row.schema
        out.append(format)
        // Which change each field is from, and the first field of each change (one member
        // per change, but a record says what it was given), on the stack: at most 64 fields.
        var changeOf = InlineArray<64, UInt8>(repeating: 0), firsts = InlineArray<64, UInt8>(repeating: 0)
        var changeCount = 0
        for number in schema.fields.indices where row.contains(number) {
            var change = 0
            while change < changeCount {
                let first = Int(firsts[change])
                if versions[first]!.stamp == versions[number]!.stamp && versions[first]!.seq == versions[number]!.seq
                    && versions[first]!.writer == versions[number]!.writer
                {
                    break
                }
                change += 1
            }
            if change == changeCount {
                firsts[change] = UInt8(number)
                changeCount += 1
            }
            changeOf[number] = UInt8(change)
        }
        Varint.append(UInt64(changeCount), to: &out)
        for change in 0..<changeCount {
            let first = Int(firsts[change])
            appendFixed(UInt64(bitPattern: versions[first]!.stamp.hlc.rawValue), to: &out)
            appendFixed(UInt64(bitPattern: versions[first]!.stamp.origin.storage), to: &out)
            Varint.append(versions[first]!.seq, to: &out)
            switch versions[first]!.writer {
            case nil: out.append(0)
            case let .uuid(high, low)?:
                out.append(2)
                withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { out.append(contentsOf: $0) }
            case let .text(text)?:
                out.append(1)
                appendText(text, to: &out)
            }
        }
        Varint.append(UInt64(row.count), to: &out)
        for number in schema.fields.indices where row.contains(number) {
            Varint.append(UInt64(number), to: &out)
            Varint.append(UInt64(changeOf[number]), to: &out)
            let inline = !(inTypedRow && storedExactly(schema.fields[number].type, versions[number]!.value))
            out.append((versions[number]!.base == nil ? 0 : 1) | (inline ? 2 : 0))
            if inline {
                switch versions[number]!.value {
                case .null: out.append(0)
                case let .integer(value): out.append(1); appendFixed(UInt64(bitPattern: value), to: &out)
                case let .text(text): out.append(2); appendText(text, to: &out)
                }
            }
            if let base = versions[number]!.base {
                appendFixed(UInt64(bitPattern: base.hlc.rawValue), to: &out)
                appendFixed(UInt64(bitPattern: base.origin.storage), to: &out)
            }
        }
    }

    /// The fields of a record (format 2, or 1). `column(n)` gives the typed column of field
    /// number `n` for values the record leaves out; nil for a record without columns
    /// (`partial_row`), where every value must follow.
    package static func decode(
        _ bytes: UnsafeRawBufferPointer, schema: EntitySchema,
        column: ((Int) -> FieldValue)?
    ) throws -> VersionedRow {
        var reader = Reader(bytes: bytes)
        let version = try reader.byte()
        guard version == 1 || version == 2 else { throw DecodingError(reason: "unknown format \(version)") }
        let originCount = try reader.varint()
        guard originCount <= 256 else { throw DecodingError(reason: "\(originCount) changes") }
        // The first change apart (most rows hold one): no array, whose allocation (through
        // the standard library's unspecialized entry point) cost a delta cursor ≈ 600
        // instructions a row; the others, when there are, in one.
        var first: Origin?
        var others: [Origin] = []
        if originCount > 1 { others.reserveCapacity(Int(originCount) - 1) }
        for _ in 0..<originCount {
            let stamp = Stamp(
                hlc: HybridTimestamp(rawValue: Int64(bitPattern: try reader.fixed())),
                origin: ReplicaID(storage: Int64(bitPattern: try reader.fixed())))
            let seq = try reader.varint()
            let writer: TextID?
            switch try reader.byte() {
            case 0: writer = nil
            case 1: writer = TextID(try reader.text()) // (format 1 wrote every member as text)
            case 2 where version == 2: writer = .uuid(try reader.bigEndian(), try reader.bigEndian())
            case let kind: throw DecodingError(reason: "member kind \(kind)")
            }
            if first == nil { first = Origin(stamp: stamp, seq: seq, writer: writer) } else { others.append(Origin(stamp: stamp, seq: seq, writer: writer)) }
        }
        let count = try reader.varint()
        guard count <= UInt64(schema.fields.count) else { throw DecodingError(reason: "\(count) fields") }
        var row = VersionedRow(schema)
        for _ in 0..<count {
            let number: Int
            if version == 2 {
                let raw = try reader.varint()
                guard raw < UInt64(schema.fields.count) else { throw DecodingError(reason: "field number \(raw)") }
                number = Int(raw)
            } else {
                let text = try reader.text()
                guard let found = schema.number(of: text) else {
                    throw DecodingError(reason: "unknown field \(text.prefix(40).debugDescription)")
                }
                number = found
            }
            let index = try reader.varint()
            guard index < originCount else { throw DecodingError(reason: "change index \(index)") }
            let origin = index == 0 ? first.unsafelyUnwrapped : others[Int(index) - 1]
            let flags: UInt8
            if version == 2 {
                flags = try reader.byte()
                guard flags & ~3 == 0 else { throw DecodingError(reason: "field flags \(flags)") }
            } else {
                flags = 2
            }
            let value: FieldValue
            if flags & 2 != 0 {
                switch try reader.byte() {
                case 0: value = .null
                case 1: value = .integer(Int64(bitPattern: try reader.fixed()))
                case 2: value = .text(try reader.text())
                case let tag: throw DecodingError(reason: "value tag \(tag)")
                }
            } else {
                guard let column else {
                    throw DecodingError(reason: "\(schema.fields[number].name): value left to a column it does not have")
                }
                value = column(number)
            }
            let baseFlag: UInt8
            if version == 2 {
                baseFlag = flags & 1
            } else {
                baseFlag = try reader.byte()
                guard baseFlag & ~1 == 0 else { throw DecodingError(reason: "field flags \(baseFlag)") }
            }
            var base: Stamp?
            if baseFlag != 0 {
                base = Stamp(
                    hlc: HybridTimestamp(rawValue: Int64(bitPattern: try reader.fixed())),
                    origin: ReplicaID(storage: Int64(bitPattern: try reader.fixed())))
            }
            guard !row.contains(number) else { throw DecodingError(reason: "\(schema.fields[number].name) twice") }
            row[number] = FieldVersion(value: value, stamp: origin.stamp, seq: origin.seq, base: base, writer: origin.writer)
        }
        guard reader.offset == bytes.count else { throw DecodingError(reason: "trailing bytes") }
        return row
    }

    private static func appendFixed(_ value: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    private static func appendText(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            Varint.append(UInt64(utf8.count), to: &out)
            out.append(contentsOf: utf8)
        }
    }

    private struct Reader {
        package let bytes: UnsafeRawBufferPointer
        package var offset = 0

        package mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw DecodingError(reason: "truncated") }
            defer { offset += 1 }
            return bytes[offset]
        }

        package mutating func fixed() throws -> UInt64 {
            guard bytes.count - offset >= 8 else { throw DecodingError(reason: "truncated") }
            var value: UInt64 = 0
            withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + 8])) }
            offset += 8
            return UInt64(littleEndian: value)
        }

        mutating func varint() throws -> UInt64 {
            do {
                return try Varint.decode {
                    guard offset < bytes.count else { return nil }
                    defer { offset += 1 }
                    return bytes[offset]
                }
            } catch .truncated {
                throw DecodingError(reason: "truncated")
            } catch {
                throw DecodingError(reason: "varint too long")
            }
        }

        /// Eight bytes, big-endian (a UUID's half).
        mutating func bigEndian() throws -> UInt64 {
            try fixed().byteSwapped // the little-endian reading, reversed
        }

        package mutating func text() throws -> String {
            let length = try varint()
            guard length <= UInt64(bytes.count - offset) else { throw DecodingError(reason: "truncated") }
            let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(length)])
            offset += Int(length)
            guard let text = String(validUTF8: slice) else { throw DecodingError(reason: "invalid UTF-8") }
            return text
        }
    }
}
