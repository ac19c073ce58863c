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
