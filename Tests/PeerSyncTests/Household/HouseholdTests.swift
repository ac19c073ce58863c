import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseIdentity
@testable import PulseHousehold

@Suite struct HouseholdTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory() }

    func home(_ name: String) -> HouseholdHome { HouseholdHome(directory: dir.url.appendingPathComponent(name)) }

    func mode(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as! Int
    }

    @Test func createsTheDefaultHousehold() throws {
        let household = try Household.create(home("a"), name: nil, members: [])
        let store = household.store
        #expect(try store.value(.household, "profile", "name") == .text("Smith Family Home"))
        let members = try store.canonicalState()[.member] ?? [:]
        #expect(Set(members.values.compactMap { $0["name"]?.textValue }) == ["Anna", "Tom"])
        let me = try #require(household.memberID)
        #expect(members[me]?["name"] == .text("Anna"))
        #expect(members[me]?["initials"] == .text("A"))
        #expect(try store.row(.settings, "settings") == ["appearance": .text("system"), "celebrations": .bool(true), "suggestions": .bool(true)])
        let replica = try store.row(.replica, store.replicaID.description)
        #expect(replica["machine"] == .text(household.identity.machineID))
        #expect(household.identity.machineID.count == 64)
        #expect(try mode(home("a").databasePath) & 0o777 == 0o600)
        #expect(try mode(home("a").directory.appendingPathComponent("identity.pem").path) & 0o777 == 0o600)
        #expect(try mode(home("a").path) & 0o777 == 0o700)
    }

    @Test func namesAreTrimmedAndValidated() throws {
        let household = try Household.create(home("b"), name: "  The Kowalskis ", members: ["Ola Kowalska", "Jan"])
        #expect(try household.store.value(.household, "profile", "name") == .text("The Kowalskis"))
        let initials = (try household.store.canonicalState()[.member] ?? [:]).values.compactMap { $0["initials"]?.textValue }.sorted()
        #expect(initials == ["J", "OK"])
        for (name, members) in [("", ["A"]), ("Home", [" "]), ("Home", ["Anna", "anna"]), (String(repeating: "x", count: 101), ["A"])] {
            #expect(throws: HouseholdError.self) { try Household.create(home("c"), name: name, members: members) }
            #expect(!FileManager.default.fileExists(atPath: home("c").path), "nothing is created on bad input")
        }
    }

    @Test func aSecondInitRefusesAndChangesNothing() throws {
        let first = try Household.create(home("a"), name: "One", members: ["Ann"])
        let before = try first.canonicalExport()
        let key = try Data(contentsOf: home("a").directory.appendingPathComponent("identity.pem"))
        #expect { try Household.create(home("a"), name: "Two", members: ["Bob"]) } throws: {
            String(describing: $0).contains("already exists")
        }
        #expect(try Household.open(home("a")).canonicalExport() == before)
        #expect(try Data(contentsOf: home("a").directory.appendingPathComponent("identity.pem")) == key)
    }

    @Test func aLeftoverFromACrashedInitIsIgnored() throws {
        try FileManager.default.createDirectory(at: home("a").directory, withIntermediateDirectories: true)
        try Data("half-written".utf8).write(to: URL(fileURLWithPath: home("a").databasePath + ".new"))
        #expect(!home("a").hasHousehold)
        let household = try Household.create(home("a"), name: nil, members: [])
        #expect(try household.store.integrityCheck() == "ok")
    }

    @Test func openingWithoutAHouseholdSaysHowToCreateOne() {
        #expect { try Household.open(home("none")) } throws: { String(describing: $0).contains("pulse-peer init") }
    }

    @Test func anIdentityReadableByOthersIsRefused() throws {
        try Household.create(home("a"), name: nil, members: [])
        let key = home("a").directory.appendingPathComponent("identity.pem").path
        chmod(key, 0o644)
        #expect { try Household.open(home("a")) } throws: { String(describing: $0).contains("chmod 600") }
    }

    @Test func aReplicaOnASecondMachineConvergesToTheSameExport() throws {
        let a = try Household.create(home("a"), name: nil, members: [])
        let b = try Household.join(home("b"), invitation: a.invitation())
        #expect(a.identity.machineID != b.identity.machineID)
        try a.store.write(member: a.memberID) { try $0.put(.shoppingItem, "i1", shoppingItem("Milk")) }
        try b.store.write(member: b.memberID) { try $0.put(.shoppingItem, "i2", shoppingItem("Bread")) }
        try a.store.sync(to: b.store)
        try b.store.sync(to: a.store)
        #expect(try a.canonicalExport() == b.canonicalExport())
        #expect(try a.canonicalExport().contains("\"Bread\""))
    }

    @Test func aReplicaJoinedFromAnInvitationSharesTheHouseholdAndTrustsItsIntroducer() throws {
        let a = try Household.create(home("a"), name: nil, members: ["Anna", "Tom"])
        let invitation = try a.invitation(forMember: "tom")
        #expect(invitation.memberID == (try a.memberID(named: "Tom")))
        #expect(throws: HouseholdError.self) { try a.invitation(forMember: "Zed") }
        let key = try a.discoveryKeys()[0].withUnsafeBytes { Array($0) }
        let b = try Household.join(home("b"), invitation: invitation, introducedBy: a.identity.machineID, discoveryKey: key)
        #expect(b.householdID == a.householdID)
        #expect(b.memberID == invitation.memberID)
        #expect(try b.membershipKey() == a.membershipKey())
        // Before the household's list arrives, B trusts the machine that admitted it, and
        // recognises its advertisements with the key it was given.
        #expect(try trust(b, a.identity.machineID) == .member)
        #expect(try b.discoveryKeys()[0] == a.discoveryKeys()[0])
        // A does not know B until it admits it.
        #expect(try trust(a, b.identity.machineID) == .unknown)
        try a.admit(machine: b.identity.machineID, name: "laptop", memberID: invitation.memberID)
        #expect(try trust(a, b.identity.machineID) == .member)
        _ = try a.removeMachine(String(b.identity.machineID.prefix(12)))
        #expect(try trust(a, b.identity.machineID) == .removed)
        #expect(try trust(a, "not a machine id") == .unknown)
    }

    /// The rule as the household reads it, checked to agree with the same rule read on a
    /// session's own connection (a `DeltaReader`: how a sender checks a peer's standing).
    func trust(_ household: Household, _ machine: String) throws -> MachineTrust {
        let viaStore = try household.trust(of: machine)
        #expect(try Household.trust(of: machine, in: DeltaReader(path: household.store.path)) == viaStore)
        return viaStore
    }

    @Test func homeResolutionOrder() {
        let env = ["PULSE_HOME": "/p", "XDG_DATA_HOME": "/x", "HOME": "/h"]
        #expect(HouseholdHome.resolve("/explicit", environment: env).path == "/explicit")
        #expect(HouseholdHome.resolve(nil, environment: env).path == "/p")
        #expect(HouseholdHome.resolve(nil, environment: ["XDG_DATA_HOME": "/x", "HOME": "/h"]).path == "/x/house-pulse")
        #expect(HouseholdHome.resolve(nil, environment: ["HOME": "/h"]).path == "/h/.local/share/house-pulse")
    }

    @Test func canonicalJSONIsStable() {
        let value = CanonicalJSON.object(["b": .integer(1), "a": .array([.string("x\"\n\u{1}é"), .null, .bool(true)]), "B": .object([:])])
        #expect(
            value.rendered() == """
                {
                  "B": {},
                  "a": [
                    "x\\"\\n\\u0001é",
                    null,
                    true
                  ],
                  "b": 1
                }

                """)
    }
}
