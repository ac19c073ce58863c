/// The field versions of one row, held by field number (the field's place in its
/// entity's schema, ``EntitySchema/fields``): what the merge rule reads and writes, and
/// what the store keeps in a row's record.
///
/// An array, not a dictionary keyed by name: the record numbers the fields the same way,
/// and a change's fields are looked up once, by number after that, with no hashing. (On
/// its own this was no faster than the dictionary: docs/PERFORMANCE.md, "What changed in
/// the last run".) A row never written holds no storage at all; the first field set
/// allocates one slot per field of the schema.
///
/// Its hot members are `@inlinable`: called from the store without inlining, each read
/// returned a copy of the version, and the retains and releases of its strings cost
/// more than the dictionary's hashing had.
public struct VersionedRow: Sendable {
    public let schema: EntitySchema
    @usableFromInline var slots: [FieldVersion?] = []
    /// Bit `n` set: field number `n` has a version (an entity has at most 64 fields).
    @usableFromInline var present: UInt64 = 0

    /// A row with no field written yet.
    public init(_ schema: EntitySchema) {
        precondition(schema.fields.count <= 64, "\(schema.kind.rawValue) has more than 64 fields")
        self.schema = schema
    }

    /// A row from versions keyed by field name (tests, migrations); nil when a name is not
    /// a field of `schema`.
    public init?(_ schema: EntitySchema, byName versions: [String: FieldVersion]) {
        self.init(schema)
        for (name, version) in versions {
            guard let number = schema.number(of: name) else { return nil }
            self[number] = version
        }
    }

    /// How many fields have a version.
    @inlinable public var count: Int { present.nonzeroBitCount }

    @inlinable public var isEmpty: Bool { present == 0 }

    /// Whether field number `number` has a version.
    @inlinable public func contains(_ number: Int) -> Bool { present & (1 << UInt64(number)) != 0 }

    /// The version of field number `number` (nil when it has not arrived).
    @inlinable public subscript(number: Int) -> FieldVersion? {
        get { contains(number) ? slots[number] : nil }
        set {
            if case .none = newValue {
                guard contains(number) else { return }
                present &= ~(1 << UInt64(number))
                slots[number] = nil
                return
            }
            if slots.isEmpty { slots = Self.emptySlots(schema.fields.count) }
            present |= 1 << UInt64(number)
            slots[number] = newValue
        }
    }

    /// Lends the versions by field number to `body` (nil where a field has none; empty for
    /// a row never written: check ``contains(_:)`` first). Reading a part of a version through
    /// the pointer (`versions[n]!.stamp`) copies only that part, where the subscript copies
    /// the whole version (an outlined copy per read: 5 % of a catch-up's record encoding).
    /// `count` empty slots, by `reserveCapacity` and appends: `Array(repeating:count:)`
    /// allocates through the standard library's unspecialized entry point (a metadata
    /// lookup at every call: ≈ 600 instructions a row, on both sides of a catch-up).
    @usableFromInline static func emptySlots(_ count: Int) -> [FieldVersion?] {
        var slots: [FieldVersion?] = []
        slots.reserveCapacity(count)
        for _ in 0..<count { slots.append(nil) }
        return slots
    }

    @inlinable package func withVersions<R>(_ body: (UnsafeBufferPointer<FieldVersion?>) throws -> R) rethrows -> R {
        try slots.withUnsafeBufferPointer(body)
    }

    /// The version of the field named `name` (nil when it has not arrived, or is not a
    /// field of this entity).
    public subscript(field name: String) -> FieldVersion? {
        schema.number(of: name).flatMap { self[$0] }
    }

    /// Calls `body` with each field that has a version, in schema order.
    @inlinable public func forEach(_ body: (_ number: Int, _ version: FieldVersion) throws -> Void) rethrows {
        var rest = present
        while rest != 0 {
            let number = rest.trailingZeroBitCount
            rest &= rest - 1
            try body(number, slots[number].unsafelyUnwrapped)
        }
    }

    /// Whether a field numbered below `limit` (any, by default) has a version from change
    /// `ref`; `versions`: this row's, from ``withVersions(_:)``.
    @inlinable package func contains(_ ref: ChangeRef, before limit: Int = 64, in versions: UnsafeBufferPointer<FieldVersion?>) -> Bool {
        var rest = present & (limit >= 64 ? ~0 : (1 << UInt64(limit)) - 1)
        while rest != 0 {
            let number = rest.trailingZeroBitCount
            rest &= rest - 1
            if versions[number].unsafelyUnwrapped.seq == ref.seq && versions[number].unsafelyUnwrapped.stamp.origin == ref.origin {
                return true
            }
        }
        return false
    }

    /// The fields that have a version, in schema order.
    public var fields: [(number: Int, version: FieldVersion)] {
        var fields: [(number: Int, version: FieldVersion)] = []
        fields.reserveCapacity(count)
        forEach { fields.append(($0, $1)) }
        return fields
    }

    /// The versions keyed by field name.
    public var byName: [String: FieldVersion] {
        var byName: [String: FieldVersion] = [:]
        forEach { byName[schema.fields[$0].name] = $1 }
        return byName
    }

    /// The values keyed by field name.
    public var values: [String: FieldValue] { byName.mapValues(\.value) }
}

extension VersionedRow: Equatable {
    /// Same entity, same version of every field.
    public static func == (lhs: VersionedRow, rhs: VersionedRow) -> Bool {
        guard lhs.schema === rhs.schema, lhs.present == rhs.present else { return false }
        return lhs.schema.fields.indices.allSatisfy { !lhs.contains($0) || lhs.slots[$0] == rhs.slots[$0] }
    }
}
