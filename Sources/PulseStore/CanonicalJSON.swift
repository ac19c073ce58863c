import PulseModel
/// A JSON value written canonically: object keys sorted by their UTF-8 bytes, two-space
/// indentation, integers only, one fixed escaping. Equal values print byte-identical
/// on every machine, whatever the platform's JSON library does.
public indirect enum CanonicalJSON: Sendable, Equatable {
    case null
    case bool(Bool)
    case integer(Int64)
    case string(String)
    case array([CanonicalJSON])
    case object([String: CanonicalJSON])

    public init(_ value: FieldValue) {
        switch value {
        case .null: self = .null
        case let .integer(v): self = .integer(v)
        case let .text(v): self = .string(v)
        }
    }

    public func rendered() -> String {
        var out = ""
        write(into: &out, indent: 0)
        out += "\n"
        return out
    }

    private func write(into out: inout String, indent: Int) {
        let pad = String(repeating: "  ", count: indent + 1)
        let closePad = String(repeating: "  ", count: indent)
        switch self {
        case .null: out += "null"
        case let .bool(v): out += v ? "true" : "false"
        case let .integer(v): out += String(v)
        case let .string(v): Self.writeString(v, into: &out)
        case let .array(items):
            if items.isEmpty { out += "[]"; return }
            out += "[\n"
            for (index, item) in items.enumerated() {
                out += pad
                item.write(into: &out, indent: indent + 1)
                out += index == items.count - 1 ? "\n" : ",\n"
            }
            out += closePad + "]"
        case let .object(members):
            if members.isEmpty { out += "{}"; return }
            out += "{\n"
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                out += pad
                Self.writeString(key, into: &out)
                out += ": "
                members[key]!.write(into: &out, indent: indent + 1)
                out += index == keys.count - 1 ? "\n" : ",\n"
            }
            out += closePad + "}"
        }
    }

    private static func writeString(_ s: String, into out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        out += "\""
    }
}
