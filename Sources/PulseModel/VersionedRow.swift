/// The field versions of one row, held by field number (the field's place in its
/// entity's schema, ``EntitySchema/fields``): what the merge rule reads and writes, and
/// what the store keeps in a row's record.
///
/// An array, not a dictionary keyed by name: every change read, merged and written
/// looks up each of its fields several times, and hashing the names (and the
/// dictionary's own storage) was a quarter of the catch-up's apply in a profile. A row
/// never written holds no storage at all; the first field set allocates one slot per
/// field of the schema.
public struct VersionedRow: Sendable {
    public let schema: EntitySchema
    private var slots: [FieldVersion?] = []
    /// How many fields have a version.
    public private(set) var count = 0

    /// A row with no field written yet.
    public init(_ schema: EntitySchema) {
        self.schema = schema
    }

    /// A row from versions keyed by field name (tests, migrations); nil when a name is not
    /// a field of `schema`.
    public init?(_ schema: EntitySchema, byName versions: [String: FieldVersion]) {
        self.schema = schema
        for (name, version) in versions {
            guard let number = schema.number(of: name) else { return nil }
            self[number] = version
        }
    }

    public var isEmpty: Bool { count == 0 }

    /// The version of field number `number` (nil when it has not arrived).
    public subscript(number: Int) -> FieldVersion? {
        get { number < slots.count ? slots[number] : nil }
        set {
            if slots.isEmpty {
                guard newValue != nil else { return }
                slots = Array(repeating: nil, count: schema.fields.count)
            }
            switch (slots[number] == nil, newValue == nil) {
            case (true, false): count += 1
            case (false, true): count -= 1
            default: break
            }
            slots[number] = newValue
        }
    }

    /// The version of the field named `name` (nil when it has not arrived, or is not a
    /// field of this entity).
    public subscript(field name: String) -> FieldVersion? {
        schema.number(of: name).flatMap { self[$0] }
    }

    /// The fields that have a version, in schema order.
    public var fields: some Sequence<(number: Int, version: FieldVersion)> {
        slots.lazy.enumerated().compactMap { slot in slot.element.map { (slot.offset, $0) } }
    }

    /// The versions keyed by field name.
    public var byName: [String: FieldVersion] {
        var byName: [String: FieldVersion] = [:]
        for (number, version) in fields { byName[schema.fields[number].name] = version }
        return byName
    }

    /// The values keyed by field name.
    public var values: [String: FieldValue] { byName.mapValues(\.value) }
}

extension VersionedRow: Equatable {
    /// Same entity, same version of every field.
    public static func == (lhs: VersionedRow, rhs: VersionedRow) -> Bool {
        guard lhs.schema === rhs.schema, lhs.count == rhs.count else { return false }
        return lhs.schema.fields.indices.allSatisfy { lhs[$0] == rhs[$0] }
    }
}
