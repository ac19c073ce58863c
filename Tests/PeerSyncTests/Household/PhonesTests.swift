import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold

/// The household's phones (issue 42, protocol 7): replicated rows, so a phone added on one
/// computer is known to every agent and a removal on any of them reaches all; a phone's
/// writes are signed with its member.
@Suite struct PhonesTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        a = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: [])
    }

    static let credential = String(repeating: "ab", count: 32)

    func code(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch { return Refusal(error).code.rawValue }
    }

    @Test func aPhoneAddedOnOneComputerIsKnownOnEveryOneAndItsRemovalReachesThemAll() throws {
        let tom = try #require(try a.members().first { $0.name == "Tom" })
        let added = try a.addPhone(name: "  Tom's phone ", member: "Tom", credential: Self.credential)
        #expect(added.name == "Tom's phone" && added.memberID == tom.id && added.member == "Tom" && added.removed == nil)
        #expect(added.addedBy == a.identity.machineID)
        let b = try secondMachine()
        #expect(try b.phone(credential: Self.credential)?.id == added.id)
        #expect(try b.phone(credential: String(repeating: "cd", count: 32)) == nil)
        let removed = try b.removePhone(added.id)
        #expect(removed.removed != nil)
        #expect(try a.phone(credential: Self.credential) != nil, "not yet heard of")
        try sync(a, b)
        #expect(try a.phone(credential: Self.credential) == nil)
        #expect(try a.phones().map(\.id) == [added.id] && a.phones()[0].removed != nil)
        #expect(code { _ = try a.removePhone(added.id) } == "already_removed")
        // A rename made before the removal arrived does not bring the phone back.
        #expect(try a.phone(credential: Self.credential) == nil)
    }

    @Test func badPhonesAreRefusedAndChangeNothing() throws {
        #expect(code { _ = try a.addPhone(name: "p", member: nil, credential: "short") } == "invalid_secret")
        #expect(code { _ = try a.addPhone(name: "p", member: nil, credential: String(repeating: "AB", count: 32)) } == "invalid_secret")
        #expect(code { _ = try a.addPhone(name: " ", member: nil, credential: Self.credential) } == "empty")
        #expect(code { _ = try a.addPhone(name: String(repeating: "x", count: 101), member: nil, credential: Self.credential) } == "too_long")
        #expect(code { _ = try a.addPhone(name: "p", member: "Nobody", credential: Self.credential) } == "not_found")
        #expect(code { _ = try a.removePhone("no-such-phone") } == "no_such_phone")
        #expect(try a.phones().isEmpty)
    }

    @Test func aPhonesWritesAreSignedWithItsMember() throws {
        let tom = try #require(try a.members().first { $0.name == "Tom" })
        let before = try a.store.versionVector()
        try Household.$actingMember.withValue(.some(tom.id)) { _ = try a.addShoppingItems(["Bread"]) }
        _ = try a.addShoppingItems(["Milk"])
        let changes = try a.store.allDeltas(for: before).flatMap(\.changes)
        #expect(changes.count == 2)
        #expect(changes.first { $0.seq == changes.map(\.seq).min() }?.member == tom.id)
        #expect(changes.first { $0.seq == changes.map(\.seq).max() }?.member == a.memberID)
        #expect(a.memberID != tom.id)
    }
}
