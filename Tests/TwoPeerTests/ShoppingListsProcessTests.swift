import Foundation
import Testing

/// Several shopping lists (issue 57, item 2) between two computers' agents and CLIs: a list and
/// its items reach the other computer; a list deleted on one computer while the other, apart,
/// adds to it loses nothing; bad requests are refused in words and change nothing; 1 000 items
/// over 20 lists stay quick to list.
@Suite(.serialized) struct ShoppingListsProcessTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    func names(_ home: Home, _ args: [String]) throws -> [String] {
        let items = try JSONSerialization.jsonObject(with: Data(try home.run(args + ["--json"]).stdout.utf8)) as? [[String: Any]] ?? []
        return items.compactMap { $0["name"] as? String }
    }

    @Test func aListDeletedOnOneComputerWhileTheOtherAddsToItLosesNothing() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        try a.run(["shop", "lists", "add", "Lidl"])
        try a.run(["shop", "--list", "Lidl", "add", "2 butter", "Rice"])
        var agentA = try AgentProcess(home: a.path)
        var agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try b.waitUntil("synced")
        #expect(try names(b, ["shop", "--list", "lidl", "list"]) == ["butter", "Rice"])
        #expect(try names(b, ["shop", "list"]).isEmpty)
        #expect(agentB.stop() == 0)
        #expect(agentA.stop() == 0)
        // Apart: A deletes Lidl, moving its items; B adds to Lidl and checks Rice off there.
        try a.run(["shop", "lists", "delete", "Lidl", "--move-items-to", ""])
        try b.run(["shop", "--list", "Lidl", "add", "Cheese"])
        try b.run(["shop", "--list", "Lidl", "check", "Rice"])
        agentA = try AgentProcess(home: a.path)
        agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try a.waitUntil("synced")
        try b.waitUntil("synced")
        for home in [a, b] {
            #expect(try names(home, ["shop", "list"]) == ["butter", "Cheese"], "B's Cheese on the first list, where Lidl's items went")
            #expect(try names(home, ["shop", "list", "--restock"]) == ["Rice"])
            let refused = try home.run(["shop", "--list", "Lidl", "list"], orFail: false)
            #expect(refused.status != 0 && refused.stderr.contains("there is no shopping list called “Lidl”"), "\(refused.stderr)")
        }
        #expect(try a.export() == b.export())
        #expect(agentA.stop() == 0)
        #expect(agentB.stop() == 0)
    }

    @Test func badListRequestsAreRefusedInWordsAndChangeNothing() throws {
        let homes = try scratch.household("a")
        let a = homes[0]
        try a.run(["shop", "lists", "add", "Lidl"])
        try a.run(["shop", "lists", "add", "Gone"])
        try a.run(["shop", "lists", "delete", "Gone"])
        try a.run(["shop", "--list", "Lidl", "add", "Butter"])
        try a.run(["shop", "add", "Milk"])
        let before = try a.export()
        let cases: [([String], String)] = [
            (["shop", "lists", "add", "lidl"], "there is already a shopping list called “lidl”"),
            (["shop", "lists", "add", "Einkaufsliste"], "there is already a shopping list called “Einkaufsliste”"),
            (["shop", "lists", "add", String(repeating: "L", count: 61)], "longer than 60 characters"),
            (["shop", "lists", "rename", "Shopping List", "Groceries"], "cannot be renamed or deleted"),
            (["shop", "lists", "delete", "Lidl"], "pass --move-items-to LIST"),
            (["shop", "lists", "delete", "Lidl", "--move-items-to", "", "--delete-items"], "exclude each other"),
            (["shop", "transfer", "Milk", "Gone"], "there is no shopping list called “Gone”"),
            (["shop", "--list", "Gone", "add", "Eggs"], "there is no shopping list called “Gone”"),
            (["shop", "--list", "Lidl", "add", "Eggs", "--quantity", String(repeating: "9", count: 41)], "longer than 40 characters"),
            (["shop", "--list", "Lidl", "edit", "Butter", "--note", String(repeating: "n", count: 201)], "longer than 200 characters"),
            (["shop", "--list", "Lidl", "transfer", "Butter", "Lidl"], ""),
        ]
        for (args, words) in cases {
            let result = try a.run(args, orFail: false)
            if words.isEmpty {
                #expect(result.status == 0, "\(args): \(result.stderr)") // moving an item to its own list changes nothing
            } else {
                #expect(result.status != 0 && result.stderr.contains(words), "\(args): \(result.stderr)")
            }
        }
        #expect(try a.export() == before, "a refused request changed the household")
    }

    @Test func aThousandItemsOverTwentyListsListQuickly() throws {
        let homes = try scratch.household("a")
        let a = homes[0]
        for n in 1...20 {
            try a.run(["shop", "lists", "add", "List \(n)"])
            try a.run(["shop", "--list", "List \(n)", "add", "--exact"], stdin: (1...50).map { "Item \(n)-\($0)" }.joined(separator: "\n") + "\n")
        }
        let lists = try JSONSerialization.jsonObject(with: Data(try a.run(["shop", "lists", "--json"]).stdout.utf8)) as? [[String: Any]] ?? []
        #expect(lists.count == 21)
        #expect(lists.dropFirst().allSatisfy { $0["active"] as? Int == 50 }, "\(lists)")
        #expect(try names(a, ["shop", "--list", "List 7", "list"]).count == 50)
        #expect(try names(a, ["shop", "list"]).isEmpty)
        // The figures (`shop list --list X` among 20 lists × 200 items) are the bench's (docs/PERFORMANCE.md).
    }
}
