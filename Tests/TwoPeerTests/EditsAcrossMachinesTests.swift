import Foundation
import Testing

/// Edits that cross machines, run as a person runs them: the binary and two machines with
/// their own agents (fields kept on both sides, conflicts in words, clear and undo, settings
/// of this machine or the household), and bad input of those commands.
@Suite(.serialized) struct EditsAcrossMachinesTests: TwoMachineFixture {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    @Test func aTaskEditedOnBothMachinesKeepsBothFieldsAndLogsTheSameFieldInWords() throws {
        let (a, b, agentA, agentB) = try pair()
        try a.run(["task", "add", "Water plants"])
        try synced(a, b)
        let restarted = try whileBIsOffline(
            a, b, agentB,
            online: {
                try a.run(["task", "edit", "1", "--title", "Water the plants", "--due", "2026-12-01"])
            },
            offline: {
                try b.run(["task", "edit", "Water plants", "--assignee", "me", "--due", "2026-12-24"])
            })
        #expect(try a.export() == b.export())
        let tasks = try json(try a.run(["task", "--json"]).stdout) as? [[String: Any]] ?? []
        #expect(tasks.count == 1)
        // Different fields: both kept. The same field (due): the later edit, B's.
        #expect(tasks.first?["title"] as? String == "Water the plants")
        #expect(tasks.first?["assignee"] as? String == "Tom")
        #expect(tasks.first?["due"] as? String == "2026-12-24")
        // Logged on the machine that received the other's due date, in people's words.
        let logs = try [a, b].map { try $0.run(["conflicts"]).stdout }.filter { !$0.hasPrefix("No conflicts") }
        #expect(!logs.isEmpty)
        for log in logs {
            #expect(log.contains("Tom (on ") && log.contains("Anna (on ") && log.contains("due date"), "\(log)")
            #expect(log.contains("the task “Water the plants”") && log.contains("“2026-12-24”, the later one, was kept"), "\(log)")
            let id = tasks.first?["id"] as? String ?? "?"
            #expect(!log.contains(id), "no row ids: \(log)")
        }
        // Tom's machine lists it as his; Anna's does not.
        #expect(try b.run(["task", "--mine"]).stdout.contains("Water the plants"))
        #expect(!(try a.run(["task", "--mine"]).stdout.contains("Water the plants")))
        restarted.stop()
        agentA.stop()
    }

    @Test func aBacklogItemMovedOnAWhileRenamedOnBKeepsBoth() throws {
        let (a, b, agentA, agentB) = try pair()
        try a.run(["backlog", "category", "add", "Garden"])
        try a.run(["backlog", "category", "add", "Outside"])
        for item in ["Fence", "Pond", "Shed"] { try a.run(["backlog", "add", "Garden", item]) }
        try synced(a, b)
        let restarted = try whileBIsOffline(
            a, b, agentB,
            online: {
                try a.run(["backlog", "move", "Fence", "--category", "Outside"])
                try a.run(["backlog", "move", "Shed", "--position", "1"])
            },
            offline: {
                try b.run(["backlog", "rename", "Fence", "Paint the fence"])
            })
        #expect(try a.export() == b.export())
        for home in [a, b] {
            let backlog = try json(try home.run(["backlog", "--json"]).stdout) as? [[String: Any]] ?? []
            let titles = backlog.map { ($0["items"] as? [[String: Any]] ?? []).compactMap { $0["title"] as? String } }
            #expect(titles == [["Shed", "Pond"], ["Paint the fence"]], "\(titles)")
            #expect(try home.run(["conflicts"]).stdout.hasPrefix("No conflicts"))
        }
        restarted.stop()
        agentA.stop()
    }

    /// Milk is in the restock pool on both. B, offline, restocks it and clears the list
    /// (Milk deleted there); later A adds "milk": the same item comes back from A's pool.
    /// The later action wins on both machines, and the other is in the log, in words.
    @Test func restockByNameOfAnItemTheOtherMachineDeleted() throws {
        let (a, b, agentA, agentB) = try pair()
        try a.run(["shop", "add", "Milk"])
        try a.run(["shop", "check", "Milk"])
        try synced(a, b)
        let restarted = try whileBIsOffline(
            a, b, agentB, online: {},
            offline: {
                try b.run(["shop", "restock", "Milk"])
                try b.run(["shop", "clear"])
                let added = try a.run(["shop", "add", "milk"]).stdout
                #expect(added.contains("Back from the restock pool: Milk"), "\(added)")
            })
        #expect(try a.export() == b.export())
        for home in [a, b] {
            #expect(try home.shoppingNames() == ["Milk"])
            let pool = try json(try home.run(["shop", "list", "--restock", "--json"]).stdout) as? [Any]
            #expect(pool?.isEmpty == true)
        }
        // One Milk row in the whole household: brought back, not made again.
        let export = try json(try a.export()) as? [String: Any]
        let items = (export?["entities"] as? [String: Any])?["shopping_item"] as? [String: Any] ?? [:]
        #expect(items.count == 1)
        let log = try b.run(["conflicts"]).stdout
        #expect(log.contains("the shopping item “Milk”") && log.contains("on the list, the later one, was kept; removed was not"), "\(log)")
        restarted.stop()
        agentA.stop()
    }

    @Test func clearAndUndoAcrossMachines() throws {
        let (a, b, agentA, agentB) = try pair()
        try a.run(["shop", "add", "Milk", "Eggs"])
        try a.run(["shop", "clear"])
        try synced(a, b)
        #expect(try b.shoppingNames().isEmpty) // B sees the clear
        let notHere = try PulsePeer.run(["shop", "undo", "--home", b.path])
        #expect(notHere.status != 0 && notHere.stderr.contains("undone on the machine that made it"))
        try b.run(["shop", "add", "Milk"]) // somebody re-adds Milk on B
        try synced(b, a)
        let before = try a.export()
        let refused = try PulsePeer.run(["shop", "undo", "--home", a.path])
        #expect(refused.status != 0 && refused.stderr.contains("“Milk”") && refused.stderr.contains("Nothing was restored"), "\(refused.stderr)")
        #expect(try a.export() == before)
        try a.run(["shop", "check", "Milk"]) // the new one is bought
        #expect(try a.run(["shop", "undo"]).stdout.contains("Restored 2 items"))
        try synced(a, b)
        #expect(try b.shoppingNames() == ["Milk", "Eggs"])
        #expect(try a.export() == b.export())
        agentB.stop()
        agentA.stop()
    }

    @Test func appearanceIsThisMachinesAndSuggestionsTheHouseholds() throws {
        let (a, b, agentA, agentB) = try pair()
        try a.run(["settings", "appearance", "dark"])
        try a.run(["settings", "suggestions", "off"])
        try synced(a, b)
        let onB = try json(try b.run(["settings", "--json"]).stdout) as? [String: Any]
        #expect(onB?["appearance"] as? String == "system" && onB?["suggestions"] as? Bool == false)
        let onA = try a.run(["settings"]).stdout
        #expect(onA.contains("appearance    dark   (this machine)") && onA.contains("suggestions   off    (the household)"), "\(onA)")
        agentB.stop()
        agentA.stop()
    }

    /// Every new command's bad inputs: a clear error, a non-zero exit, nothing changed.
    @Test func badInputsOfTheNewCommandsChangeNothing() throws {
        let home = try scratch.household("solo")[0]
        try home.run(["task", "add", "Dishes"])
        try home.run(["backlog", "category", "add", "Garden"])
        try home.run(["backlog", "add", "Garden", "Fence"])
        try home.run(["shop", "add", "Milk"])
        let export = try home.export()
        let cases: [([String], String)] = [
            (["task", "edit", "1"], "nothing to change"),
            (["task", "edit", "1", "--assignee", "Tom", "--no-assignee"], "not both"),
            (["task", "edit", "1", "--due", "today", "--no-due"], "not both"),
            (["task", "edit", "1", "--assignee", "Zed"], "no member called \"Zed\""),
            (["task", "edit", "1", "--due", "someday"], "is not a date"),
            (["task", "edit", "1", "--title", " "], "may not be empty"),
            (["task", "edit", "9", "--title", "x"], "there is no task 9"),
            (["backlog", "move", "Fence"], "say where to"),
            (["backlog", "move", "Fence", "--position", "0"], "counts from 1"),
            (["backlog", "move", "Fence", "--position", "5"], "between 1 and 1"),
            (["backlog", "move", "Fence", "--category", "Attic"], "no category \"Attic\""),
            (["backlog", "rename", "Fence", ""], "may not be empty"),
            (["backlog", "rename", "Shed", "x"], "no backlog item \"Shed\""),
            (["shop", "undo"], "no clear to undo"),
            (["member", "add", "me"], "may not be called \"me\""),
            (["task", "frobnicate"], "unknown task command “frobnicate”"),
            (["kid"], "unknown command “kid” (did you mean “kids”?)"),
            (["backlog", "category", "mv"], "unknown backlog category command “mv”"),
        ]
        for (args, message) in cases {
            let result = try PulsePeer.run(args + ["--home", home.path])
            #expect(result.status != 0, "\(args) should fail")
            #expect(result.stderr.contains(message), "\(args): \(result.stderr)")
            #expect(!result.stderr.contains("Error(") && !result.stderr.contains("CocoaError"), "\(args): \(result.stderr)")
        }
        #expect(try home.export() == export)
    }
}
