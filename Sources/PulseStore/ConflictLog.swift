import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseModel

/// A record of the conflict log: a merge kept one value of a field and dropped another.
public struct ConflictRecord: Sendable, Hashable {
    public typealias Kind = ConflictKind
    public typealias Side = ConflictSide

    public let id: Int64
    public let kind: Kind
    public let entity: EntityKind
    public let rowID: String
    public let field: String
    public let kept: Side
    public let lost: Side
}

extension ReplicaStore {

    func logConflict(
        _ kind: ConflictRecord.Kind, _ entity: EntityKind, _ rowID: String, _ field: String,
        kept: ConflictRecord.Side, lost: ConflictRecord.Side
    ) throws {
        try connection.statement(
            """
            INSERT INTO conflict (logged_hlc, kind, entity, row_id, field,
              kept_value, kept_hlc, kept_origin, kept_member, lost_value, lost_hlc, lost_origin, lost_member)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
            """
        ).run([
            .integer(max(kept.stamp.hlc.rawValue, lost.stamp.hlc.rawValue)), .text(kind.rawValue),
            .text(entity.rawValue), .text(rowID), .text(field),
            kept.value, .integer(kept.stamp.hlc.rawValue), .integer(kept.stamp.origin.storage), kept.member.map { .text($0) } ?? .null,
            lost.value, .integer(lost.stamp.hlc.rawValue), .integer(lost.stamp.origin.storage), lost.member.map { .text($0) } ?? .null,
        ])
    }

    /// The conflict log, newest first.
    public func conflicts(limit: Int = 100) throws -> [ConflictRecord] {
        return try connection.query(
            """
            SELECT id, kind, entity, row_id, field, kept_value, kept_hlc, kept_origin, kept_member,
                   lost_value, lost_hlc, lost_origin, lost_member
            FROM conflict ORDER BY id DESC LIMIT ?1
            """, [.integer(Int64(limit))]
        ) { statement in
            var records: [ConflictRecord] = []
            while try statement.step() {
                func side(_ at: Int32) -> ConflictRecord.Side {
                    ConflictRecord.Side(
                        value: statement.value(at),
                        stamp: Stamp(hlc: HybridTimestamp(rawValue: statement.int(at + 1)), origin: ReplicaID(storage: statement.int(at + 2))),
                        member: statement.optionalText(at + 3))
                }
                guard let kind = ConflictRecord.Kind(rawValue: statement.text(1)),
                    let entity = EntityKind(rawValue: statement.text(2))
                else { continue }
                records.append(
                    ConflictRecord(
                        id: statement.int(0), kind: kind, entity: entity, rowID: statement.text(3),
                        field: statement.text(4), kept: side(5), lost: side(9)))
            }
            return records
        }
    }

}
