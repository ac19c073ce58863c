import FoundationEssentials
import PulseModel

/// Changes from a machine whose clock is ahead: stamped more than the drift bound ahead of
/// this machine's clock, they are kept durably in `held_change` instead of being merged —
/// merged now, such a stamp would beat every edit made anywhere until the real time
/// reaches it, and observing it would drag this clock (and every later stamp) forward.
/// They are merged once this machine's clock is within the bound of their stamps: the merge
/// is order-independent, so merging late converges to the same state. The rest of the
/// batch applies at once, so one wrong clock delays only its own machine's changes.
///
/// While a change of an origin is held, coverage claims for that origin do not advance the
/// version vector (status counts those changes as not yet incorporated, and they are not
/// relayed to third machines); the claims are kept in `held_coverage`, and when the last
/// held change of the origin is merged the vector advances to them, in the same
/// transaction — so the household sees the changes at once, without waiting for another
/// session. A claim lost to a crash only means the sender offers the range again.
struct HeldChange: Codable {
    struct Field: Codable {
        var name: String
        var value: FieldValue
        var baseHLC: Int64?
        var baseOrigin: UInt64?
    }
    var member: String?
    var entity: EntityKind
    var row: String
    var fields: [Field]

    init(_ change: Change) {
        member = change.member
        entity = change.entity
        row = change.rowID
        fields = change.fields.map {
            Field(name: $0.field, value: $0.value, baseHLC: $0.base?.hlc.rawValue, baseOrigin: $0.base?.origin.rawValue)
        }
    }

    func change(origin: ReplicaID, seq: UInt64, hlc: HybridTimestamp) -> Change {
        Change(
            origin: origin, seq: seq, hlc: hlc, member: member, entity: entity, rowID: row,
            fields: fields.map { field in
                let base = field.baseHLC.flatMap { hlc in
                    field.baseOrigin.map { Stamp(hlc: HybridTimestamp(rawValue: hlc), origin: ReplicaID(rawValue: $0)) }
                }
                return FieldWrite(field: field.name, value: field.value, base: base)
            })
    }
}

extension ReplicaStore {
    /// Keeps `change` until this machine's clock reaches it (inside the apply transaction).
    func hold(_ change: Change) throws {
        let blob = try JSONEncoder().encode(HeldChange(change))
        let statement = try connection.statement(
            "INSERT INTO held_change (origin, seq, hlc, change) VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING")
        try statement.bind(.integer(change.origin.storage), at: 1)
        try statement.bind(.integer(Int64(change.seq)), at: 2)
        try statement.bind(.integer(change.hlc.rawValue), at: 3)
        try statement.bind(blob: Array(blob), at: 4)
        while try statement.step() {}
        statement.reset()
    }

    /// The origins with held changes.
    func heldOrigins() throws -> Set<ReplicaID> {
        try connection.query("SELECT DISTINCT origin FROM held_change") { statement in
            var origins = Set<ReplicaID>()
            while try statement.step() { origins.insert(ReplicaID(storage: statement.int(0))) }
            return origins
        }
    }

    /// How many changes are held, and how far the furthest is ahead of this clock (ms).
    public func heldChanges() throws -> (count: Int, aheadMilliseconds: Int64) {
        try connection.query("SELECT count(*), max(hlc) FROM held_change") { statement in
            guard try statement.step(), statement.int(0) > 0 else { return (0, 0) }
            return (Int(statement.int(0)), HybridTimestamp(rawValue: statement.int(1)).milliseconds - physicalClock())
        }
    }

    /// How long until the earliest held change may be merged, in milliseconds (0: now), or
    /// nil when none is held.
    public func millisecondsUntilHeldDue() throws -> Int64? {
        try connection.query("SELECT count(*), min(hlc) FROM held_change") { statement in
            guard try statement.step(), statement.int(0) > 0 else { return nil }
            let due = HybridTimestamp(rawValue: statement.int(1)).milliseconds - maxDriftMilliseconds
            return max(0, due - physicalClock())
        }
    }

    /// Merges the held changes whose time has come (this clock is within the drift bound of
    /// their stamps) and forgets them; nil when none is due.
    @discardableResult
    public func releaseHeldChanges() throws -> ApplyOutcome? {
        let limit = HybridTimestamp(milliseconds: physicalClock() + maxDriftMilliseconds + 1).rawValue
        let due: [Change] = try connection.query(
            "SELECT origin, seq, hlc, change FROM held_change WHERE hlc < ?1 ORDER BY hlc", [.integer(limit)]
        ) { statement in
            var changes: [Change] = []
            while try statement.step() {
                let record = try statement.withBlob(3) { try JSONDecoder().decode(HeldChange.self, from: Data($0)) }
                changes.append(
                    record.change(
                        origin: ReplicaID(storage: statement.int(0)), seq: UInt64(statement.int(1)),
                        hlc: HybridTimestamp(rawValue: statement.int(2))))
            }
            return changes
        }
        guard !due.isEmpty else { return nil }
        // Merged first, forgotten after: a crash in between merges them again, which is idempotent.
        var outcome = try apply(DeltaBatch(changes: due))
        outcome.versionVector = try inWords {
            try connection.transaction {
                for change in due {
                    try connection.statement("DELETE FROM held_change WHERE origin = ?1 AND seq = ?2")
                        .run([.integer(change.origin.storage), .integer(Int64(change.seq))])
                }
                // An origin with nothing held any more takes the coverage claimed meanwhile.
                let stillHeld = try heldOrigins()
                var vv = try versionVector()
                for origin in Set(due.map(\.origin)).subtracting(stillHeld) {
                    let claimed = try heldCoverage(origin)
                    if claimed > vv[origin] {
                        vv[origin] = claimed
                        try saveVersion(origin, claimed)
                    }
                    try connection.statement("DELETE FROM held_coverage WHERE origin = ?1").run([.integer(origin.storage)])
                }
                return vv
            }
        }
        return outcome
    }

    /// How far coverage of `origin` was claimed while some of its changes were held (0: none).
    func heldCoverage(_ origin: ReplicaID) throws -> UInt64 {
        try connection.query("SELECT up_to FROM held_coverage WHERE origin = ?1", [.integer(origin.storage)]) { statement in
            try statement.step() ? UInt64(statement.int(0)) : 0
        }
    }

    func saveHeldCoverage(_ origin: ReplicaID, _ upTo: UInt64) throws {
        try connection.statement(
            "INSERT INTO held_coverage (origin, up_to) VALUES (?1, ?2) ON CONFLICT(origin) DO UPDATE SET up_to = excluded.up_to"
        )
        .run([.integer(origin.storage), .integer(Int64(upTo))])
    }
}
