import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseIdentity
@testable import PulseHousehold

/// Randomized convergence: several replicas make thousands of random writes (create,
/// edit, delete, re-add, across every entity) while batches travel between them late,
/// out of order, duplicated or lost. At the end every replica holds the same state, and
/// that state is what the merge rule predicts from the list of every write ever made:
/// for each field, the value of the write with the greatest stamp.
@Suite struct ConvergenceTests {
    struct Scenario: Sendable, CustomTestStringConvertible {
        let seed: UInt64, replicas: Int, operations: Int
        var testDescription: String { "seed \(seed), \(replicas) replicas, \(operations) operations" }
    }

    @Test(arguments: [
        Scenario(seed: 1, replicas: 3, operations: 1500),
        Scenario(seed: 2, replicas: 5, operations: 1500),
        Scenario(seed: 3, replicas: 4, operations: 1200),
    ])
    func randomOperationsConverge(_ scenario: Scenario) throws {
        var world = try World(scenario)
        try world.run()
        try world.settle()
        try world.checkConverged()
    }
}

private struct World {
    struct Key: Hashable { let entity: EntityKind, row: String, field: String }
    struct InFlight { let destination: Int, batch: DeltaBatch }

    let dir: TemporaryDirectory
    let scenario: ConvergenceTests.Scenario
    var random: SeededGenerator
    let time = ManualClock()
    let skews: [Int64]
    var stores: [ReplicaStore] = []
    var rows: [(EntityKind, String)] = [(.household, "profile"), (.settings, "settings")]
    var nextRow = 0
    var network: [InFlight] = []
    /// The reference model: every write ever made, reduced by the merge rule.
    var predicted: [Key: (Stamp, FieldValue)] = [:]
    var writes = 0

    init(_ scenario: ConvergenceTests.Scenario) throws {
        self.scenario = scenario
        dir = try TemporaryDirectory()
        random = SeededGenerator(seed: scenario.seed)
        // Each machine's wall clock is a little off, some behind, some ahead.
        skews = (0..<scenario.replicas).map { Int64($0 * 7 % 5) - 2 }
        for index in 0..<scenario.replicas {
            let skew = skews[index], time = self.time
            stores.append(
                try ReplicaStore(
                    path: dir.path("r\(index).sqlite"), physicalClock: { time.now + skew },
                    newReplicaID: ReplicaID(rawValue: scenario.seed &* 1000 &+ UInt64(index) &+ 1)))
        }
    }

    mutating func run() throws {
        for _ in 0..<scenario.operations {
            time.advance(Int64.random(in: 0...2, using: &random)) // many writes share a millisecond
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<60: try localAction()
            case 60..<85: try send()
            default: try deliver()
            }
        }
    }

    /// Everything still in flight arrives; then pairwise syncs until all vectors agree.
    mutating func settle() throws {
        while !network.isEmpty { try deliver(mayDrop: false) }
        for _ in 0..<3 {
            for source in stores.indices {
                for destination in stores.indices where source != destination {
                    try stores[source].sync(to: stores[destination], batchLimit: 64)
                }
            }
        }
    }

    func checkConverged() throws {
        #expect(writes > scenario.operations / 3)
        let vectors = try stores.map { try $0.versionVector() }
        #expect(Set(vectors).count == 1, "version vectors differ: \(vectors)")
        var expected: [EntityKind: [String: [String: FieldValue]]] = [:]
        for (key, entry) in predicted { expected[key.entity, default: [:]][key.row, default: [:]][key.field] = entry.1 }
        let expectedExport = Household.renderExport(expected, householdID: "h")
        for (index, store) in stores.enumerated() {
            let export = Household.renderExport(try store.canonicalState(), householdID: "h")
            #expect(export == expectedExport, "replica \(index) differs from the prediction")
            #expect(try store.integrityCheck() == "ok")
            for other in stores where other !== store {
                #expect(try store.allDeltas(for: other.versionVector()).isEmpty)
            }
        }
        // The typed tables (what queries read) agree too.
        let tables = try stores.map { store in try EntityKind.allCases.map { try dumpTable(store, $0) } }
        #expect(tables.allSatisfy { $0 == tables[0] })
    }

    private func dumpTable(_ store: ReplicaStore, _ kind: EntityKind) throws -> [String] {
        try store.connection.query("SELECT * FROM \(kind.rawValue) ORDER BY id") { statement in
            var lines: [String] = []
            while try statement.step() {
                lines.append((0...Int32(kind.schema.fields.count)).map { statement.value($0).description }.joined(separator: "|"))
            }
            return lines
        }
    }

    // MARK: Actions

    /// One person's action on one machine: one to four writes in one transaction.
    private mutating func localAction() throws {
        let index = Int.random(in: stores.indices, using: &random)
        var plans: [(EntityKind, String, [String: FieldValue])] = []
        for _ in 0..<Int.random(in: 1...4, using: &random) { plans.append(plan()) }
        let (_, changes) = try stores[index].write(member: "m\(index)") { tx in
            for (entity, row, fields) in plans { try tx.put(entity, row, RowFields(fields)) }
        }
        for change in changes {
            for write in change.fields {
                let key = Key(entity: change.entity, row: change.rowID, field: write.field)
                // A field kept once set: a value wins over a null whatever their stamps (a row's
                // creation, with null, may reach a replica after an edit made where the creation
                // had not arrived yet); between values, the later stamp.
                if change.entity.schema.fields.first(where: { $0.name == write.field })?.keptOnceSet == true, let current = predicted[key] {
                    if write.value == .null && current.1 != .null { continue }
                    if current.1 == .null && write.value != .null {
                        predicted[key] = (change.stamp, write.value)
                        continue
                    }
                }
                if let current = predicted[key], current.0 > change.stamp { continue }
                predicted[key] = (change.stamp, write.value)
            }
        }
        writes += changes.count
    }

    private mutating func plan() -> (EntityKind, String, [String: FieldValue]) {
        let roll = Int.random(in: 0..<100, using: &random)
        let picked = rows.randomElement(using: &random)
        let editable = picked.map { $0.0.schema.tombstone != nil || $0.0.schema.fields.contains { !$0.immutable } } ?? false
        if roll < 35 || rows.count < 5 || !editable { // create (append-only rows are never edited)
            let creatable = EntityKind.allCases.filter { $0.schema.singletonRowID == nil }
            let entity = creatable.randomElement(using: &random)!
            nextRow += 1
            let row = "r\(nextRow)"
            rows.append((entity, row))
            var fields: [String: FieldValue] = [:]
            for spec in entity.schema.fields { fields[spec.name] = value(for: spec) }
            return (entity, row, fields)
        }
        let (entity, row) = picked!
        let schema = entity.schema
        if let mark = schema.tombstone, roll < 60 { // delete or re-add
            let restore: FieldValue = mark.value == .integer(1) ? .bool(false) : (mark.value == .integer(0) ? .bool(true) : .text("active"))
            return (entity, row, [mark.field: Bool.random(using: &random) ? mark.value : restore])
        }
        var fields: [String: FieldValue] = [:] // edit one to three mutable fields
        let mutable = schema.fields.filter { !$0.immutable }
        for _ in 0..<Int.random(in: 1...3, using: &random) {
            let spec = mutable.randomElement(using: &random)!
            var value = value(for: spec)
            // A field kept once set is only ever set by an edit (never written back to null:
            // refused locally, and its own rule: KeptOnceSetTests), so last-writer-wins still
            // predicts it.
            while spec.keptOnceSet && value == .null { value = self.value(for: spec) }
            fields[spec.name] = value
        }
        return (entity, row, fields)
    }

    private mutating func value(for spec: FieldSpec) -> FieldValue {
        if spec.nullable && Int.random(in: 0..<4, using: &random) == 0 { return .null }
        switch spec.type {
        case let .text(max, _):
            let words = ["Milk", "Eggs", "Bread", "Tea", "A", "Tom", "Anna", "Ab"]
            return .text(String(words.randomElement(using: &random)!.prefix(max)))
        case .bool: return .bool(Bool.random(using: &random))
        case let .integer(range):
            let low = max(range.lowerBound, -50), high = min(range.upperBound, 50)
            return .integer(Int64.random(in: low...high, using: &random))
        case let .choice(words): return .text(words.randomElement(using: &random)!)
        case .date: return .text(IsoDate(year: 2026, month: Int.random(in: 1...12, using: &random), day: Int.random(in: 1...28, using: &random))!.description)
        case .reference: return .text("r\(Int.random(in: 1...max(1, nextRow), using: &random))")
        case .timestamp: return .integer(Int64.random(in: 0...1_000_000, using: &random))
        case .language: return .text(["en", "pl", "de", "nl", "fy"].randomElement(using: &random)!)
        }
    }

    /// A replica computes what another lacks (by the vector it last told) and puts the
    /// batches on the network.
    private mutating func send() throws {
        let source = Int.random(in: stores.indices, using: &random)
        var destination = Int.random(in: stores.indices, using: &random)
        if destination == source { destination = (destination + 1) % stores.count }
        let batches = try stores[source].allDeltas(
            for: stores[destination].versionVector(),
            batchLimit: Int.random(in: 1...40, using: &random))
        network += batches.map { InFlight(destination: destination, batch: $0) }
    }

    /// A random batch arrives: maybe again later (duplicate), maybe never (lost).
    private mutating func deliver(mayDrop: Bool = true) throws {
        guard !network.isEmpty else { return }
        let index = Int.random(in: network.indices, using: &random)
        let message = network[index]
        let roll = Int.random(in: 0..<100, using: &random)
        if !(mayDrop && roll < 15) { network.remove(at: index) } // else: stays, delivered again later
        if mayDrop && roll >= 90 { return } // lost
        try stores[message.destination].apply(message.batch)
    }
}
