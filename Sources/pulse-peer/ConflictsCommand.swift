import ArgumentParser
import PeerSync

struct Conflicts: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show what merges overwrote: field, kept and lost values, and who wrote them."
    )

    @OptionGroup var options: HomeOptions

    @Option(name: .long, help: "How many entries, newest first.")
    var limit = 50

    @Flag(name: .long, help: "Print JSON.")
    var json = false

    func validate() throws {
        guard (1...100_000).contains(limit) else { throw ValidationError("--limit must be between 1 and 100000") }
    }

    func run() throws {
        let household = try options.openHousehold()
        let records: [ConflictRecord]
        do { records = try household.store.conflicts(limit: limit) } catch { throw CLIError(error) }
        if json {
            print(CanonicalJSON.array(records.map { record in
                func side(_ s: ConflictRecord.Side) -> CanonicalJSON {
                    .object(["value": CanonicalJSON(s.value), "hlc": .integer(s.stamp.hlc.rawValue),
                             "replica": .string(s.stamp.origin.description),
                             "member": s.member.map { .string($0) } ?? .null])
                }
                return .object(["id": .integer(record.id), "kind": .string(record.kind.rawValue),
                                "entity": .string(record.entity.rawValue), "row": .string(record.rowID),
                                "field": .string(record.field), "kept": side(record.kept), "lost": side(record.lost)])
            }).rendered(), terminator: "")
            return
        }
        if records.isEmpty {
            print("No conflicts: no merge has overwritten anything.")
            return
        }
        for record in records {
            let what: String
            switch record.kind {
            case .overwritten: what = "overwritten by a newer concurrent edit"
            case .rejected: what = "an older concurrent edit was discarded"
            case .editOfDeleted: what = "edited while deleted elsewhere; stays deleted"
            }
            print("#\(record.id) \(record.entity.rawValue) \(record.rowID) .\(record.field): \(what)")
            print("    kept \(record.kept.value) (by \(record.kept.member ?? "system") on \(record.kept.stamp.origin))")
            print("    lost \(record.lost.value) (by \(record.lost.member ?? "system") on \(record.lost.stamp.origin))")
        }
    }
}
