import Testing
@testable import PulseStore

/// The connection's one statement cache and its lifetime rule.
@Suite struct StatementCacheTests {
    @Test func aStatementIsKeptForItsPlaceAndHandedOutReset() throws {
        let dir = try TemporaryDirectory()
        let connection = try Connection(path: dir.path("cache.sqlite"))
        try connection.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)")
        let first = try connection.statement("SELECT k FROM t WHERE k = ?1")
        try first.bind(.integer(1), at: 1)
        let again = try connection.statement("SELECT k FROM t WHERE k = ?1")
        #expect(first === again)
        let slot = try connection.statements.slot(StatementSlot.hot(.selectCounter), on: connection) { "SELECT 1" }
        #expect(try connection.statements.slot(StatementSlot.hot(.selectCounter), on: connection) { "SELECT 2" } === slot)
    }

    @Test func aStatementWhoseStepFailedIsNotHandedOutAgain() throws {
        let dir = try TemporaryDirectory()
        let connection = try Connection(path: dir.path("cache.sqlite"))
        try connection.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)")
        let insert = "INSERT INTO t (k) VALUES (?1)"
        try connection.statement(insert).run([.integer(1)])
        let failing = try connection.statement(insert)
        #expect(throws: SQLiteError.self) { try failing.run([.integer(1)]) } // the key exists
        #expect(failing.failed)
        let fresh = try connection.statement(insert)
        #expect(fresh !== failing && !fresh.failed)
        try fresh.run([.integer(2)])
        #expect(try connection.scalarInt("SELECT count(*) FROM t") == 2)
        // The same for a fixed slot.
        let slotted = try connection.statements.slot(StatementSlot.held(0), on: connection) { insert }
        #expect(throws: SQLiteError.self) { try slotted.run([.integer(2)]) }
        #expect(try connection.statements.slot(StatementSlot.held(0), on: connection) { insert } !== slotted)
    }
}

/// A row query's `last`: the last rows of its order, in that order, each shape's statement kept.
@Suite struct RowQueryTests {
    @Test func theLastRowsOfAnOrderAreAnsweredInThatOrder() throws {
        let dir = try TemporaryDirectory()
        let store = try makeStore(dir, "a")
        _ = try store.write(member: nil) { tx in
            for (id, listed) in [("i1", 30), ("i2", 10), ("i3", 40), ("i4", 20), ("i5", 20)] {
                _ = try tx.create(.shoppingItem, id, shoppingItem("Item \(id)", listed: Int64(listed)))
            }
        }
        let ids = { (query: RowQuery) in try store.rows(.shoppingItem, query).map(\.id) }
        #expect(try ids(RowQuery(orderedBy: ["listed"])) == ["i2", "i4", "i5", "i1", "i3"])
        #expect(try ids(RowQuery(orderedBy: ["listed"], last: 3)) == ["i5", "i1", "i3"])
        #expect(try ids(RowQuery(orderedBy: ["listed"], last: 1)) == ["i3"])
        #expect(try ids(RowQuery(orderedBy: ["listed"], last: 9)) == ["i2", "i4", "i5", "i1", "i3"])
        #expect(try ids(RowQuery(where: [("state", .text("active"))], orderedBy: ["listed"], last: 2)) == ["i1", "i3"])
    }
}
