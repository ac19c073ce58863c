import PulseModel

/// The fields one local write sets, written as a dictionary literal:
/// `tx.create(.shoppingItem, id, ["name": .text("Milk"), "state": .text("active"), "listed": .integer(7)])`.
///
/// A list of pairs, not a dictionary: the write reads each pair once and finds its field by
/// number, so hashing the names bought nothing, and the dictionary cost a new shopping item
/// ≈ 1 700 instructions (its storage, three hashed insertions, their lookups, its release:
/// docs/PERFORMANCE.md, "Write overhead"). A name given twice is refused by the write as a
/// duplicate field (where a dictionary literal traps).
public struct RowFields: ExpressibleByDictionaryLiteral, Sendable {
    /// The pairs (name, value) in the order given: the literal's own array, kept as it is
    /// (a copy with labelled elements cost another allocation).
    public let pairs: [(String, FieldValue)]

    public init(dictionaryLiteral elements: (String, FieldValue)...) {
        pairs = elements
    }

    /// The fields of a dictionary (built a field at a time), in the order of their names.
    public init(_ fields: [String: FieldValue]) {
        pairs = fields.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    public var count: Int { pairs.count }
    public var isEmpty: Bool { pairs.isEmpty }
}
