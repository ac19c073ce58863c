import PulseModel
/// The field versions of one row, as one `versions` value (of its typed row, or of
/// `partial_row` while fields are missing): every field of a row in one record, written
/// with the row itself. The changes a row's fields come from are listed once (a new row
/// is one change for all its fields), and each field points at its change.
///
/// Format 1 (integers little-endian, `varint` = LEB128):
/// `0x01`; varint change count, then per change: hlc 8 bytes, origin 8 bytes, varint
/// seq, flags (1: member follows), [varint member length, member (UTF-8)]; varint field
/// count, then per field in name order: varint name length, name; varint change index;
/// value tag (0 null, 1 integer: 8 bytes, 2 text: varint length + UTF-8); flags (1: base
/// follows), [base hlc 8 bytes, base origin 8 bytes].
package enum RowVersions {
    package static let format: UInt8 = 1

    package struct DecodingError: Error, CustomStringConvertible {
        package let reason: String
        package var description: String { "unreadable row versions: \(reason)" }
    }

    private struct Origin: Hashable {
        package let stamp: Stamp
        package let seq: UInt64
        package let member: String?
    }

    package static func encode(_ fields: [String: FieldVersion]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + fields.count * 24)
        out.append(format)
        let names = fields.keys.sorted()
        var origins: [Origin] = []
        var indexes: [Int] = []
        for name in names {
            let version = fields[name]!
            let origin = Origin(stamp: version.stamp, seq: version.seq, member: version.member)
            if let index = origins.firstIndex(of: origin) {
                indexes.append(index)
            } else {
                indexes.append(origins.count)
                origins.append(origin)
            }
        }
        Varint.append(UInt64(origins.count), to: &out)
        for origin in origins {
            appendFixed(UInt64(bitPattern: origin.stamp.hlc.rawValue), to: &out)
            appendFixed(UInt64(bitPattern: origin.stamp.origin.storage), to: &out)
            Varint.append(origin.seq, to: &out)
            out.append(origin.member == nil ? 0 : 1)
            if let member = origin.member { appendText(member, to: &out) }
        }
        Varint.append(UInt64(names.count), to: &out)
        for (name, index) in zip(names, indexes) {
            let version = fields[name]!
            appendText(name, to: &out)
            Varint.append(UInt64(index), to: &out)
            switch version.value {
            case .null: out.append(0)
            case let .integer(value): out.append(1); appendFixed(UInt64(bitPattern: value), to: &out)
            case let .text(text): out.append(2); appendText(text, to: &out)
            }
            out.append(version.base == nil ? 0 : 1)
            if let base = version.base {
                appendFixed(UInt64(bitPattern: base.hlc.rawValue), to: &out)
                appendFixed(UInt64(bitPattern: base.origin.storage), to: &out)
            }
        }
        return out
    }

    package static func decode(_ bytes: UnsafeRawBufferPointer) throws -> [String: FieldVersion] {
        var reader = Reader(bytes: bytes)
        guard try reader.byte() == format else { throw DecodingError(reason: "unknown format") }
        let originCount = try reader.varint()
        guard originCount <= 256 else { throw DecodingError(reason: "\(originCount) changes") }
        var origins: [Origin] = []
        origins.reserveCapacity(Int(originCount))
        for _ in 0..<originCount {
            let stamp = Stamp(hlc: HybridTimestamp(rawValue: Int64(bitPattern: try reader.fixed())),
                              origin: ReplicaID(storage: Int64(bitPattern: try reader.fixed())))
            let seq = try reader.varint()
            let flags = try reader.byte()
            guard flags & ~1 == 0 else { throw DecodingError(reason: "change flags \(flags)") }
            origins.append(Origin(stamp: stamp, seq: seq, member: flags & 1 != 0 ? try reader.text() : nil))
        }
        let count = try reader.varint()
        guard count <= 256 else { throw DecodingError(reason: "\(count) fields") }
        var fields: [String: FieldVersion] = [:]
        fields.reserveCapacity(Int(count))
        for _ in 0..<count {
            let name = try reader.text()
            let index = try reader.varint()
            guard index < originCount else { throw DecodingError(reason: "change index \(index)") }
            let origin = origins[Int(index)]
            let value: FieldValue
            switch try reader.byte() {
            case 0: value = .null
            case 1: value = .integer(Int64(bitPattern: try reader.fixed()))
            case 2: value = .text(try reader.text())
            case let tag: throw DecodingError(reason: "value tag \(tag)")
            }
            let flags = try reader.byte()
            guard flags & ~1 == 0 else { throw DecodingError(reason: "field flags \(flags)") }
            var base: Stamp?
            if flags & 1 != 0 {
                base = Stamp(hlc: HybridTimestamp(rawValue: Int64(bitPattern: try reader.fixed())),
                             origin: ReplicaID(storage: Int64(bitPattern: try reader.fixed())))
            }
            fields[name] = FieldVersion(value: value, stamp: origin.stamp, seq: origin.seq, base: base, member: origin.member)
        }
        guard reader.offset == bytes.count else { throw DecodingError(reason: "trailing bytes") }
        return fields
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

        package mutating func text() throws -> String {
            let length = try varint()
            guard length <= UInt64(bytes.count - offset) else { throw DecodingError(reason: "truncated") }
            let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + Int(length)])
            offset += Int(length)
            guard let text = String(validating: slice, as: UTF8.self) else { throw DecodingError(reason: "invalid UTF-8") }
            return text
        }
    }
}
