import Foundation
import Testing

/// Backups that restore, and outputs that are whole or absent.
@Suite struct BackupTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    /// The export without the machines' own rows (a restored home is a new machine: it adds
    /// its `machine` and `replica` rows and nothing else).
    static func household(of export: String) throws -> NSDictionary {
        var json = try #require(try JSONSerialization.jsonObject(with: Data(export.utf8)) as? [String: Any])
        var entities = try #require(json["entities"] as? [String: Any])
        entities["machine"] = nil
        entities["replica"] = nil
        json["entities"] = entities
        return json as NSDictionary
    }

    @Test func aBackupBringsTheHouseholdBackWhenEveryMachineWasLostAndANewMachinePairsWithIt() throws {
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        let agentA = try AgentProcess(home: a.path, ["--first-backup-after", "0"])
        let agentB = try AgentProcess(home: b.path, ["--peer", agentA.address])
        try a.run(["shop", "add", "Milk", "Eggs"])
        try b.run(["task", "add", "Dishes", "--assignee", "Tom"])
        try a.waitUntil("synced")
        try b.waitUntil("synced")
        // The agent keeps its automatic backups in the home.
        let automatic = a.path + "/backups"
        #expect(
            eventually(timeout: 10) {
                ((try? FileManager.default.contentsOfDirectory(atPath: automatic)) ?? []).contains { $0.hasPrefix("daily-") }
            })
        let listed = try a.run(["backup", "--list"]).stdout
        #expect(listed.contains("daily-") && listed.contains("weekly-"), "\(listed)")
        // Each file's size as it is (it read "0 KiB" for every one: issue 52, item 11).
        #expect(!listed.contains(" 0 KiB") && listed.contains("KiB"), "\(listed)")
        let file = scratch.home("family.sqlite")
        let made = try a.run(["backup", file])
        #expect(made.stdout.contains("pulse-peer restore \(file)"), "\(made.stdout)")
        let attributes = try FileManager.default.attributesOfItem(atPath: file)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let before = try Self.household(of: a.export())
        _ = agentB.stop()
        _ = agentA.stop()
        // Every machine lost.
        try FileManager.default.removeItem(atPath: a.path)
        try FileManager.default.removeItem(atPath: b.path)
        let c = Home(path: scratch.home("c"))
        let restored = try c.run(["restore", file, "--name", "New laptop"])
        #expect(restored.stdout.contains("new machine of the household"), "\(restored.stdout)")
        // Advice that works (issue 52, item 18): the others join this one (what follows does
        // just that), and a computer still running is not called lost.
        #expect(restored.stdout.contains("`pulse-peer invite` here, `pulse-peer join CODE` there"), "\(restored.stdout)")
        #expect(restored.stdout.contains("The household's other computers are still listed"), "\(restored.stdout)")
        #expect(!restored.stdout.contains("lost computers"), "\(restored.stdout)")
        #expect(try Self.household(of: c.export()) == before)
        // It runs, and a new machine pairs with it and gets everything.
        let agentC = try AgentProcess(home: c.path)
        let d = Home(path: scratch.home("d"))
        try d.pair(with: c, at: agentC)
        let agentD = try AgentProcess(home: d.path, ["--peer", agentC.address])
        try d.waitUntil("synced")
        try c.waitUntil("synced")
        #expect(try c.export() == d.export())
        #expect(Set(try d.shoppingNames()) == ["Milk", "Eggs"])
        let devices = try c.run(["devices"]).stdout
        #expect(devices.contains("New laptop"), "\(devices)")
        // What either writes now reaches the other.
        try d.run(["shop", "add", "Jam"])
        try c.waitUntil("synced")
        #expect(try c.shoppingNames().contains("Jam"))
        _ = agentD.stop()
        _ = agentC.stop()
    }

    @Test func killNineDuringABackupLeavesThePreviousBackupWholeAndNoPartialFileTakenForOne() throws {
        let home = Home(path: scratch.home("a"))
        try home.run(["init"])
        try home.run(["shop", "add"], stdin: (1...20_000).map { "Thing \($0) with a longer name" }.joined(separator: "\n"))
        let folder = scratch.home("usb")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let file = folder + "/family.sqlite"
        try home.run(["backup", file])
        let previous = try Data(contentsOf: URL(fileURLWithPath: file))
        try home.run(["shop", "add", "After the first backup"])
        var interrupted = 0
        for attempt in 0..<5 {
            let process = Process()
            process.executableURL = PulsePeer.executable
            process.arguments = ["backup", file, "--force", "--home", home.path]
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            // The fault's moment: once the snapshot is being written (its partial file is
            // there), a little later at each attempt. A spin with a deadline, not a sleep.
            let partial = file + ".partial"
            let deadline = Date().addingTimeInterval(10)
            while !FileManager.default.fileExists(atPath: partial) && process.isRunning && Date() < deadline { sched_yield() }
            var spins = attempt * 20_000
            while spins > 0 && process.isRunning { spins -= 1; sched_yield() }
            let writing = FileManager.default.fileExists(atPath: partial)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            if process.terminationReason == .uncaughtSignal && writing { interrupted += 1 }
            // Under the backup's name: the previous backup, or a whole new one. Never a part.
            let now = try Data(contentsOf: URL(fileURLWithPath: file))
            if now != previous {
                let check = try PulsePeer.run(["restore", file, "--home", scratch.home("check-\(attempt)")])
                #expect(check.status == 0, "a backup cut short is under the backup's name: \(check.stderr)")
            }
            let names = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(names.allSatisfy { $0 == "family.sqlite" || $0.hasPrefix("family.sqlite.partial") }, "\(names)")
        }
        #expect(interrupted > 0, "no backup was interrupted while writing its snapshot")
        // A partial file is never a backup: refused, and the next backup removes it.
        let partial = file + ".partial"
        if FileManager.default.fileExists(atPath: partial) {
            #expect(try PulsePeer.run(["restore", partial, "--home", scratch.home("from-partial")]).status != 0)
        }
        try home.run(["backup", file, "--force"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["family.sqlite"])
        let restored = Home(path: scratch.home("restored"))
        try restored.run(["restore", file])
        #expect(try restored.shoppingNames().contains("After the first backup"))
    }

    @Test(.enabled(if: SmallDisk.canMount, "mounting a tmpfs needs root (CAP_SYS_ADMIN)"))
    func anExportToAFullDiskFailsInWordsAndLeavesNoTruncatedFile() throws {
        let home = Home(path: scratch.home("a"))
        try home.run(["init"])
        try home.run(["shop", "add"], stdin: (1...400).map { "Thing \($0) with a longer name" }.joined(separator: "\n"))
        let whole = try home.export()
        let disk = try SmallDisk(at: scratch.home("disk"), megabytes: 1)
        try disk.fill(leaving: 8 * 1024)
        let target = disk.path + "/household.json"
        let refused = try home.run(["export", "--json", "--output", target], orFail: false)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("No space left on device"), "\(refused.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: disk.path) == ["filler"])
        // Standard output redirected to the full disk: every write is checked.
        #expect(FileManager.default.createFile(atPath: target, contents: nil))
        let process = Process()
        process.executableURL = PulsePeer.executable
        process.arguments = ["export", "--json", "--home", home.path]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: target))
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus != 0)
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(said.contains("the output is incomplete"), "\(said)")
        // A backup to the full disk: refused in words, nothing left under its name.
        let backup = try home.run(["backup", disk.path + "/family.sqlite"], orFail: false)
        #expect(backup.status != 0 && backup.stderr.contains("no backup was made"), "\(backup.stderr)")
        #expect(!FileManager.default.fileExists(atPath: disk.path + "/family.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: disk.path + "/family.sqlite.partial"))
        disk.free()
        try home.run(["export", "--json", "--output", disk.path + "/household.json"])
        #expect(try String(contentsOfFile: disk.path + "/household.json", encoding: .utf8) == whole)
    }

    @Test func badInputToBackupAndRestoreIsRefusedInWordsAndChangesNothing() throws {
        let homes = try scratch.household("a")
        let a = homes[0]
        try a.run(["shop", "add", "Milk"])
        let other = Home(path: scratch.home("other"))
        try other.run(["init", "--household", "Other family"])
        let good = scratch.home("good.sqlite")
        try a.run(["backup", good])
        let otherBackup = scratch.home("other.sqlite")
        try other.run(["backup", otherBackup])
        let data = try Data(contentsOf: URL(fileURLWithPath: good))
        let truncated = scratch.home("truncated.sqlite")
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: truncated))
        let text = scratch.home("notes.txt")
        try "milk, eggs\n".write(toFile: text, atomically: true, encoding: .utf8)
        let notHousehold = scratch.home("plain.sqlite")
        #expect(
            try Shell.run([
                "python3", "-c", "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.execute('create table t(x)'); c.commit()",
                notHousehold,
            ]).status == 0)
        let folder = scratch.home("folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let empty = scratch.home("empty")
        let cases: [(file: String, home: String, says: String)] = [
            (scratch.home("missing.sqlite"), empty, "no such file"),
            (text, empty, "not a usable House Pulse backup"),
            (notHousehold, empty, "not a household's"),
            (truncated, empty, "not a usable House Pulse backup"),
            (folder, empty, "is a directory"),
            (otherBackup, a.path, "already holds another household"),
            (good, a.path, "already belongs to that household"),
        ]
        let exportA = try a.export()
        for entry in cases {
            let result = try PulsePeer.run(["restore", entry.file, "--home", entry.home])
            #expect(result.status != 0, "\(entry.file)")
            #expect(result.stderr.contains(entry.says), "\(entry.file): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: empty), "a refused restore wrote into the empty home")
        #expect(try a.export() == exportA)
        // Backup: an existing file is not replaced without --force; a missing folder is said.
        let exists = try a.run(["backup", good], orFail: false)
        #expect(exists.status != 0 && exists.stderr.contains("exists"), "\(exists.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: good)) == data)
        let nowhere = try a.run(["backup", scratch.home("no/such/folder/x.sqlite")], orFail: false)
        #expect(nowhere.status != 0 && nowhere.stderr.contains("no backup was made"), "\(nowhere.stderr)")
        #expect(try a.export() == exportA)
    }
}
