import Foundation
import Testing
@testable import PulseStore

/// Faults a family's machines meet besides crashes.
@Suite struct RealWorldFaultsTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    @Test func readersNeverWaitForAWriterAndAWriterSaysWhoHoldsTheLock() throws {
        let home = try scratch.household("a")[0]
        try home.run(["shop", "add", "Milk"])
        try home.run(["recurring", "add", "Water plants", "--daily"])
        let before = try home.export()
        // Another process's long write transaction (here: this test process).
        let holder = try Connection(path: home.path + "/household.sqlite")
        try holder.execute("BEGIN IMMEDIATE")
        for command in [["shop", "list"], ["export", "--json"], ["task"], ["conflicts"], ["backlog"], ["member"]] {
            let started = Date()
            let result = try PulsePeer.run(command + ["--home", home.path])
            #expect(result.status == 0, "\(command): \(result.stderr)")
            #expect(Date().timeIntervalSince(started) < 2, "\(command) waited for the writer")
        }
        let refused = try PulsePeer.run(["shop", "add", "Eggs", "--home", home.path])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("is busy: process \(getpid())"), "\(refused.stderr)")
        #expect(refused.stderr.contains("nothing was changed"))
        try holder.execute("ROLLBACK")
        #expect(try home.export() == before)
        try home.run(["shop", "add", "Eggs"])
        #expect(try home.shoppingNames() == ["Milk", "Eggs"])
    }
}
