import PulseModel

/// One complete row of a typed table, as the household layer reads it: its id and the
/// current value of every field (the typed columns, which the table's constraints hold).
public struct StoredRow: Sendable, Equatable {
    public let id: String
    public let fields: [String: FieldValue]

    public init(id: String, fields: [String: FieldValue]) {
        self.id = id
        self.fields = fields
    }

    public subscript(_ field: String) -> FieldValue { fields[field] ?? .null }
    public func text(_ field: String) -> String { self[field].textValue ?? "" }
    public func optionalText(_ field: String) -> String? { self[field].textValue }
    public func integer(_ field: String) -> Int64 { self[field].integerValue ?? 0 }
    public func bool(_ field: String) -> Bool { self[field].boolValue ?? false }
}

/// What `ReplicaStore.rows` selects: fields equal to values, and the order.
public struct RowQuery: Sendable {
    public var filter: [(field: String, value: FieldValue)]
    public var order: [String]
    /// The last `last` rows of that order (still answered in that order); nil: all.
    public var last: Int?

    /// Rows whose fields equal the given values (`.null`: whose field is null), ordered by `order`
    /// (ascending, SQLite's binary collation), then by id; with `last`, only the last that many of them.
    public init(where filter: [(field: String, value: FieldValue)] = [], orderedBy order: [String] = [], last: Int? = nil) {
        precondition(last.map { $0 > 0 } ?? true, "a positive count of rows")
        self.filter = filter
        self.order = order
        self.last = last
    }
}

/// The reads a household rule needs, from whichever connection serves them: the store's,
/// or a ``DeltaReader``'s (a session's sender checks a peer's standing on its own
/// connection, without waiting for the store's actor). The rules never see SQL, and the
/// store never states a household rule.
public protocol StoreReading {
    /// All fields of one row that have arrived so far (empty: none).
    func row(_ entity: EntityKind, _ rowID: String) throws -> [String: FieldValue]
    /// The complete rows of `entity` selected by `query`.
    func rows(_ entity: EntityKind, _ query: RowQuery) throws -> [StoredRow]
    /// A local, unreplicated setting of this database.
    func meta(_ key: String) throws -> FieldValue?
}

extension ReplicaStore: StoreReading {
    /// The complete rows of `entity` selected by `query`. Field names come from the
    /// schema (anything else is a programming error and traps), values are bound.
    public func rows(_ entity: EntityKind, _ query: RowQuery = RowQuery()) throws -> [StoredRow] {
        try Self.rows(connection, entity, query)
    }

    static func rows(_ connection: Connection, _ entity: EntityKind, _ query: RowQuery) throws -> [StoredRow] {
        let names = entity.schema.fieldNames
        // The statement of each query's shape is kept: its SQL was built and looked up by
        // its text on every call (a sixth of a durable `shop add`'s instructions went to
        // reading the empty restock pool).
        let nulls = query.filter.map { $0.value == .null }
        let shape = Connection.RowQueryShape(
            entity: entity, filter: query.filter.map(\.field), nulls: nulls.contains(true) ? nulls : [], order: query.order, last: query.last != nil)
        let bound = query.filter.filter { $0.value != .null }
        let statement = try connection.rowQueryStatement(shape) {
            for name in shape.filter + shape.order {
                precondition(names.contains(name), "\(entity.rawValue) has no field \(name)")
            }
            var sql = "SELECT id, \(names.joined(separator: ", ")) FROM \(entity.rawValue)"
            if !shape.filter.isEmpty {
                var number = 0
                sql +=
                    " WHERE "
                    + shape.filter.indices.map { index in
                        if shape.nulls.indices.contains(index), shape.nulls[index] { return "\(shape.filter[index]) IS NULL" }
                        number += 1
                        return "\(shape.filter[index]) = ?\(number)"
                    }.joined(separator: " AND ")
            }
            let order = shape.order + ["id"]
            guard shape.last else { return sql + " ORDER BY " + order.joined(separator: ", ") }
            // The last N: the newest N by the reversed order, then put back in the order.
            let limit = "?\(bound.count + 1)"
            return "SELECT * FROM (\(sql) ORDER BY \(order.map { "\($0) DESC" }.joined(separator: ", ")) LIMIT \(limit)) ORDER BY "
                + order.joined(separator: ", ")
        }
        defer { statement.reset() }
        try statement.bind(bound.map(\.value) + (query.last.map { [FieldValue.integer(Int64($0))] } ?? []))
        var rows: [StoredRow] = []
        while try statement.step() {
            var fields: [String: FieldValue] = [:]
            for (index, name) in names.enumerated() { fields[name] = statement.value(Int32(index + 1)) }
            rows.append(StoredRow(id: statement.text(0), fields: fields))
        }
        return rows
    }

    /// The complete rows of `entity` that are not deleted (its tombstone) and whose key column
    /// (``KeyColumn``: a shopping item's name in any case) holds the key of one of `names`,
    /// each found by the key's index: what a rule looking for names reads instead of the whole
    /// table. Each row once, in no particular order. Traps for an entity with no key column.
    /// (`names` an array, not any sequence: a generic called across the module's boundary is
    /// not specialised, and hashing the names through it took about a tenth of an addition's
    /// own time in a profile of the bench's writes; now 2 %.)
    public func liveRows(_ entity: EntityKind, named names: [String]) throws -> [StoredRow] {
        guard let key = KeyColumn.of(entity), let tombstone = entity.schema.tombstone, case let .text(dead) = tombstone.value else {
            preconditionFailure("\(entity.rawValue) has no key column")
        }
        let fields = entity.schema.fieldNames
        // The tombstone as a literal: the index covers the rows `<> 'deleted'`, and SQLite
        // uses a partial index only for a query whose terms imply its own.
        let statement = try connection.statement(
            "SELECT id, \(fields.joined(separator: ", ")) FROM \(entity.rawValue) WHERE \(key.column) = ?1 AND \(tombstone.field) <> '\(dead)'")
        var rows: [StoredRow] = []
        var keys = Set<String>(minimumCapacity: names.count)
        for name in names { keys.insert(name.nameKey) }
        for name in keys {
            defer { statement.reset() }
            try statement.bind(.text(name), at: 1)
            while try statement.step() {
                var values: [String: FieldValue] = [:]
                for (index, field) in fields.enumerated() { values[field] = statement.value(Int32(index + 1)) }
                rows.append(StoredRow(id: statement.text(0), fields: values))
            }
        }
        return rows
    }

    /// A key after every key handed out so far and after the clock's last timestamp, in
    /// the clock's units, from this store's clock (creation and listing order).
    public func orderingKey() throws -> Int64 {
        max(HybridTimestamp(milliseconds: physicalClock()).rawValue, try lastTimestamp().rawValue + 1)
    }

    /// Moves the write-ahead log into the database file and empties it (before a new
    /// database is renamed into place).
    public func checkpoint() throws {
        try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}
