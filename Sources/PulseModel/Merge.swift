/// The winning version of one field: its value, the stamp and number of the change that
/// wrote it, the stamp its author had seen (`base`), and the member who wrote it.
public struct FieldVersion: Sendable, Equatable {
    public let value: FieldValue
    public let stamp: Stamp
    public let seq: UInt64
    public let base: Stamp?
    /// The member who wrote it, as held (a UUID as two words).
    package let writer: TextID?

    /// The member who wrote it.
    public var member: String? { writer?.text }

    package init(value: FieldValue, stamp: Stamp, seq: UInt64, base: Stamp?, writer: TextID?) {
        self.value = value
        self.stamp = stamp
        self.seq = seq
        self.base = base
        self.writer = writer
    }

    public init(value: FieldValue, stamp: Stamp, seq: UInt64, base: Stamp?, member: String?) {
        self.init(value: value, stamp: stamp, seq: seq, base: base, writer: member.map(TextID.init))
    }

    /// The change this version came from.
    public var changeRef: ChangeRef { ChangeRef(origin: stamp.origin, seq: seq) }
}

/// A change by its number: `origin`'s `seq`-th change.
public struct ChangeRef: Sendable, Hashable {
    public let origin: ReplicaID
    public let seq: UInt64

    public init(origin: ReplicaID, seq: UInt64) {
        self.origin = origin
        self.seq = seq
    }
}

/// What a merge dropped, and why.
public enum ConflictKind: String, Sendable, Hashable {
    /// A remote write replaced a value its author had not seen.
    case overwritten
    /// A remote write lost against a newer value its author had not seen.
    case rejected
    /// A remote edit reached a row deleted concurrently: the row stays deleted, the
    /// edit is kept in it (visible again if the row is restored).
    case editOfDeleted = "edit_of_deleted"
}

/// One side of a conflict: a value, who wrote it and when.
public struct ConflictSide: Sendable, Hashable {
    public let value: FieldValue
    public let stamp: Stamp
    public let member: String?

    public init(value: FieldValue, stamp: Stamp, member: String?) {
        self.value = value
        self.stamp = stamp
        self.member = member
    }

    init(_ version: FieldVersion) {
        self.init(value: version.value, stamp: version.stamp, member: version.member)
    }
}

/// A conflict the merge of one change into one row found: the field, the kept and the
/// lost side. The store adds the row and logs it.
public struct MergeConflict: Sendable, Hashable {
    public let kind: ConflictKind
    public let field: String
    public let kept: ConflictSide
    public let lost: ConflictSide

    public init(kind: ConflictKind, field: String, kept: ConflictSide, lost: ConflictSide) {
        self.kind = kind
        self.field = field
        self.kept = kept
        self.lost = lost
    }
}

/// A change that cannot be merged: it rewrites a field that is set once, or (a change
/// the schema did not validate) names a field its entity does not have or too many.
public enum MergeError: Error, Equatable, CustomStringConvertible {
    case immutableField(String)
    case unknownField(String)
    case tooManyFields(Int)

    public var description: String {
        switch self {
        case let .immutableField(field): "\(field) is set once and cannot change"
        case let .unknownField(field): "\(field) is not a field of this entity"
        case let .tooManyFields(count): "\(count) fields, more than \(Limits.maxFieldsPerChange)"
        }
    }

    /// The same refusal in the schema's terms.
    public func validationError(_ entity: EntityKind) -> ChangeValidationError {
        switch self {
        case let .immutableField(field): .badValue(entity, field: field, reason: "is set once and cannot change")
        case let .unknownField(field): .unknownField(entity, field)
        case let .tooManyFields(count): .tooManyFields(count)
        }
    }
}

/// The merge rule of a row, as a pure function: a row's field versions and one change
/// in, the new versions and the conflicts out. No I/O: the store reads the row, calls
/// this, and writes what it returns.
///
/// - Per field, last writer wins by ``Stamp`` (hybrid timestamp, then replica id): every
///   replica picks the same winner in any order of arrival, and applying a change twice
///   changes nothing.
/// - Conflicts are reported, never resolved silently: the same field written on two
///   replicas that had not seen each other's write (the incoming write's `base` is not
///   the value it replaces, or the other way round) — the winner stays, the loser is
///   reported (`overwritten` when the incoming write won, `rejected` when it lost).
/// - Edit versus delete: the row stays deleted (deletion wins); an edit the deletion did
///   not see stays in the row and is reported as `editOfDeleted`, in either arrival
///   order. An edit stamped after the deletion cannot have happened before it, and the
///   household layer never edits a deleted row, so such an edit was concurrent.
/// - A field that is set once (`immutable` in the schema) may arrive again only with the
///   same value.
/// - A field kept once set (`keptOnceSet`: a removal) takes a value over a null and keeps it
///   against a null, whatever the stamps; between two values, the rule above.
public enum RowMerge {
    public struct Merged: Sendable, Equatable {
        /// At least one field took the change's value.
        public var changed: Bool
        public var conflicts: [MergeConflict]
    }

    /// Merges `change` into `row` (in place, so the store's copy is not duplicated).
    /// Throws, leaving `row` unchanged, when the change rewrites a set-once field or names
    /// a field the row's entity does not have.
    public static func merge(_ change: Change, into row: inout VersionedRow) throws(MergeError) -> Merged {
        let incoming = change.stamp
        let schema = row.schema
        let writer = change.writer
        precondition(change.entity == schema.kind, "a \(change.entity.rawValue) change merged into a \(schema.kind.rawValue) row")
        // Field numbers first, and refusals before anything changes: a failed merge leaves
        // the row as it was. At most 16 fields (validated): no heap array for them.
        guard change.fields.count <= Limits.maxFieldsPerChange else { throw .tooManyFields(change.fields.count) }
        var numbers = InlineArray<16, Int>(repeating: 0) // Limits.maxFieldsPerChange
        let fresh = row.isEmpty
        for (index, write) in change.fields.enumerated() {
            guard let number = schema.number(of: write.field) else { throw .unknownField(write.field) }
            numbers[index] = number
            if !fresh, schema.fields[number].immutable, let existing = row[number], existing.value != write.value {
                throw .immutableField(write.field)
            }
        }
        if fresh {
            // A new row (most of a catch-up): every field is taken, and there is nothing to
            // refuse or report (nothing existed; the fields share one stamp, so no edit is
            // after a deletion). The same result as the rule below, without its comparisons.
            for (index, write) in change.fields.enumerated() where !row.contains(numbers[index]) {
                row[numbers[index]] = FieldVersion(
                    value: write.value, stamp: incoming, seq: change.seq, base: write.base,
                    writer: writer)
            }
            return Merged(changed: !change.fields.isEmpty, conflicts: [])
        }
        var merged = Merged(changed: false, conflicts: [])
        for (index, write) in change.fields.enumerated() {
            let number = numbers[index]
            let version = FieldVersion(value: write.value, stamp: incoming, seq: change.seq, base: write.base, writer: writer)
            guard let existing = row[number] else {
                row[number] = version
                merged.changed = true
                continue
            }
            if existing.stamp == incoming { continue } // already have it
            if schema.fields[number].keptOnceSet, (existing.value == .null) != (write.value == .null) {
                // Set beats unset, whatever the stamps (a removal stays; a join of two states,
                // so the order of arrival does not matter); nobody's edit is lost, so no conflict.
                if existing.value == .null {
                    row[number] = version
                    merged.changed = true
                }
                continue
            }
            if incoming > existing.stamp {
                row[number] = version
                merged.changed = true
                if write.base != existing.stamp && write.value != existing.value {
                    merged.conflicts.append(
                        MergeConflict(
                            kind: .overwritten, field: write.field,
                            kept: ConflictSide(version), lost: ConflictSide(existing)))
                }
            } else if existing.base != incoming && write.value != existing.value {
                merged.conflicts.append(
                    MergeConflict(
                        kind: .rejected, field: write.field,
                        kept: ConflictSide(existing), lost: ConflictSide(version)))
            }
        }
        if merged.changed, let mark = schema.tombstone {
            merged.conflicts += editsVersusDeletion(change, row, tombstone: mark)
        }
        return merged
    }

    /// After a change to a row with a tombstone: every edit of the row that a deletion
    /// did not see (in either arrival order).
    static func editsVersusDeletion(
        _ change: Change, _ row: VersionedRow,
        tombstone mark: (field: String, value: FieldValue)
    ) -> [MergeConflict] {
        guard let deletion = row[field: mark.field], deletion.value == mark.value else { return [] }
        let deletionArrived = deletion.stamp == change.stamp
        var conflicts: [MergeConflict] = []
        for (number, edit) in row.fields {
            let field = row.schema.fields[number].name
            guard field != mark.field, edit.stamp > deletion.stamp, edit.stamp.origin != deletion.stamp.origin,
                deletionArrived || edit.stamp == change.stamp
            else { continue }
            conflicts.append(MergeConflict(kind: .editOfDeleted, field: field, kept: ConflictSide(deletion), lost: ConflictSide(edit)))
        }
        return conflicts
    }
}
