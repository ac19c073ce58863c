import Foundation
import Testing

/// `pulse-peer init` and `export`, end to end through the built binary.
@Suite struct InitExportCLITests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    @Test func initThenExportPrintsTheDefaultHousehold() throws {
        let home = scratch.home("a")
        let created = try PulsePeer.run(["init", "--home", home])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(created.stdout.contains("Created household"))
        let export = try PulsePeer.run(["export", "--json", "--home", home])
        #expect(export.status == 0)
        let json = try JSONSerialization.jsonObject(with: Data(export.stdout.utf8)) as! [String: Any]
        #expect(json["format"] as? String == "house-pulse-export/1")
        let entities = json["entities"] as! [String: [String: [String: Any]]]
        #expect(entities["household"]?["profile"]?["name"] as? String == "Smith Family Home")
        #expect(Set(entities["member"]!.values.compactMap { $0["name"] as? String }) == ["Anna", "Tom"])
        // Canonical: printing twice gives the same bytes.
        #expect(try PulsePeer.run(["export", "--json", "--home", home]).stdout == export.stdout)
    }

    @Test func initTakesNamesAndTheEnvironmentHome() throws {
        let home = scratch.home("b")
        let created = try PulsePeer.run(
            ["init", "--household", "The Kowalskis", "--member", "Ola", "--member", "Jan"],
            environment: ["PULSE_HOME": home])
        #expect(created.status == 0, "\(created.stderr)")
        let export = try PulsePeer.run(["export", "--json", "--home", home])
        #expect(export.stdout.contains("\"The Kowalskis\""))
        #expect(export.stdout.contains("\"Ola\"") && export.stdout.contains("\"Jan\""))
        #expect(!export.stdout.contains("\"Anna\""))
        // Without --json: a summary for people.
        let summary = try PulsePeer.run(["export", "--home", home]).stdout
        #expect(summary.hasPrefix("The Kowalskis\n"), "\(summary)")
        #expect(summary.contains("members: Jan, Ola"))
        #expect(summary.contains("shopping: 0 on the list, 0 in the restock pool"))
    }

    @Test func aSecondInitRefusesAndChangesNothing() throws {
        let home = scratch.home("c")
        #expect(try PulsePeer.run(["init", "--home", home]).status == 0)
        let before = try PulsePeer.run(["export", "--json", "--home", home]).stdout
        let again = try PulsePeer.run(["init", "--home", home, "--household", "Other"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("already exists"))
        #expect(try PulsePeer.run(["export", "--json", "--home", home]).stdout == before)
    }

    @Test func badInputGetsAClearErrorAndCreatesNothing() throws {
        let home = scratch.home("d")
        let empty = try PulsePeer.run(["init", "--home", home, "--member", "  "])
        #expect(empty.status != 0)
        #expect(empty.stderr.contains("member name may not be empty"))
        #expect(!FileManager.default.fileExists(atPath: home))
        let missing = try PulsePeer.run(["export", "--home", home])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no household in"))
        let unknown = try PulsePeer.run(["init", "--home", home, "--colour", "red"])
        #expect(unknown.status != 0)
        #expect(unknown.stderr.contains("Unknown option"))
        #expect(try PulsePeer.run(["conflicts", "--home", home, "--limit", "0"]).status != 0)
    }

    @Test func conflictsOnAFreshHouseholdSaysThereAreNone() throws {
        let home = scratch.home("e")
        #expect(try PulsePeer.run(["init", "--home", home]).status == 0)
        let log = try PulsePeer.run(["conflicts", "--home", home])
        #expect(log.status == 0)
        #expect(log.stdout.contains("No conflicts"))
        #expect(try PulsePeer.run(["conflicts", "--json", "--home", home]).stdout == "[]\n")
    }
}
