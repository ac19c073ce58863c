import PulseModel
import PulseStore

/// One entry of the conflict log, as people and scripts read it (`pulse-peer conflicts`).
public struct HouseholdConflict: Sendable, Codable, Equatable {
    public struct Side: Sendable, Codable, Equatable {
        public let value: FieldValue
        public let hlc: Int64
        public let replica: String
        /// The member who wrote it (id), nil for the system.
        public let member: String?
    }

    public let id: Int64
    /// `overwritten`, `rejected` or `edit_of_deleted` (docs/ARCHITECTURE.md, "Conflict log").
    public let kind: String
    public let entity: String
    public let row: String
    public let field: String
    public let kept: Side
    public let lost: Side
}

extension Household {
    /// What merges overwrote, newest first.
    public func conflicts(limit: Int = 100) throws -> [HouseholdConflict] {
        try store.conflicts(limit: limit).map { record in
            func side(_ s: ConflictRecord.Side) -> HouseholdConflict.Side {
                HouseholdConflict.Side(value: s.value, hlc: s.stamp.hlc.rawValue, replica: s.stamp.origin.description, member: s.member)
            }
            return HouseholdConflict(id: record.id, kind: record.kind.rawValue, entity: record.entity.rawValue, row: record.rowID,
                                     field: record.field, kept: side(record.kept), lost: side(record.lost))
        }
    }
}
