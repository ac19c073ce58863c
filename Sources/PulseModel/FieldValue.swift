/// The value of one replicated field. Booleans are integers 0/1, dates are ISO
/// `YYYY-MM-DD` text, references are row ids: three cases cover the whole model
/// and map one-to-one onto SQLite's storage classes.
public enum FieldValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case integer(Int64)
    case text(String)

    public static func bool(_ value: Bool) -> FieldValue { .integer(value ? 1 : 0) }

    public var integerValue: Int64? { if case let .integer(v) = self { v } else { nil } }
    public var textValue: String? { if case let .text(v) = self { v } else { nil } }
    public var boolValue: Bool? {
        switch self {
        case .integer(0): false
        case .integer(1): true
        default: nil
        }
    }
    public var isNull: Bool { self == .null }

    public var description: String {
        switch self {
        case .null: "null"
        case let .integer(v): String(v)
        case let .text(v): "\"\(v)\""
        }
    }
}

extension FieldValue: Codable {
    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let v = try? container.decode(Int64.self) {
            self = .integer(v)
        } else {
            self = .text(try container.decode(String.self))
        }
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case let .integer(v): try container.encode(v)
        case let .text(v): try container.encode(v)
        }
    }
}
