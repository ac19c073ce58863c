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
        // Nor does a write of null: refused here (and ignored by every replica, MergeTests).
        #expect(throws: (any Error).self) {
            try a.store.write(member: nil) { tx in _ = try tx.put(.phone, added.id, ["removed": .null]) }
        }
        #expect(try a.phone(credential: Self.credential) == nil)
    }

    /// The way back of a phone whose cookie expired unused (issue 51): a new credential, known on
    /// every computer; the old cookie stops working, the roaming credential stays; never for a
    /// removed phone.
    @Test func aPhoneRenewedHasOnlyItsNewCredentialEverywhereAndARemovedOneIsNeverRenewed() throws {
        let added = try a.addPhone(name: "Tom's phone", member: "Tom", credential: Self.credential)
        let roaming = try #require(try a.phoneRoaming(added.id))
        let fresh = String(repeating: "cd", count: 32)
        #expect(try a.renewPhone(added.id, credential: fresh).id == added.id)
        let b = try secondMachine()
        for home in [a, b] {
            #expect(try home.phone(credential: Self.credential) == nil)
            #expect(try home.phone(credential: fresh)?.id == added.id)
            #expect(try home.phone(roaming: roaming)?.id == added.id)
        }
        #expect(code { _ = try a.renewPhone(added.id, credential: "short") } == "invalid_secret")
        #expect(code { _ = try a.renewPhone("no-such-phone", credential: fresh) } == "no_such_phone")
        _ = try a.removePhone(added.id)
        #expect(code { _ = try a.renewPhone(added.id, credential: Self.credential) } == "already_removed")
        #expect(try a.phone(credential: Self.credential) == nil && a.phone(credential: fresh) == nil)
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
        _ = try a.acting(as: tom.id).addShoppingItems(["Bread"])
        _ = try a.addShoppingItems(["Milk"])
        let changes = try a.store.allDeltas(for: before).flatMap(\.changes)
        #expect(changes.count == 2)
        #expect(changes.first { $0.seq == changes.map(\.seq).min() }?.member == tom.id)
        #expect(changes.first { $0.seq == changes.map(\.seq).max() }?.member == a.memberID)
        #expect(a.memberID != tom.id)
    }

    /// On a phone, "me" is the phone's member, not the computer's: its person's tasks are "mine",
    /// they are `isThisMachine` in the member list, and "me" assigns to them; a phone of nobody
    /// in particular has no "me" (refused in the phone's words, as a computer of nobody is in its own).
    @Test func onAPhoneMeIsThePhonesMember() throws {
        let tom = try #require(try a.members().first { $0.name == "Tom" })
        let phone = a.acting(as: tom.id)
        let task = try phone.addTask("Call grandma", assignee: "me")
        #expect(task.assigneeID == tom.id)
        #expect(try phone.tasks(mine: true).map(\.id) == [task.id] && a.tasks(mine: true).isEmpty)
        #expect(try phone.members().filter(\.isThisMachine).map(\.id) == [tom.id])
        #expect(try a.members().filter(\.isThisMachine).map(\.id) == [a.currentMemberID()])
        #expect(code { _ = try a.acting(as: nil).tasks(mine: true) } == "no_member_for_phone")
        #expect(code { _ = try a.acting(as: nil).addTask("x", assignee: "me") } == "no_member_for_phone")
    }

    /// A phone's queue may be sent twice (an answer lost on the way) or to two agents: an
    /// addition carries its ids, a check or restock says `once`; each takes effect once.
    @Test func aPhonesQueuedChangesTakeEffectOnceHoweverOftenTheyArrive() throws {
        let ids = [RowIDRules.newRowID(), RowIDRules.newRowID()]
        let first = try a.addShoppingItems(["Eggs", "Jam"], ids: ids).items
        let before = try a.store.versionVector()
        let again = try a.addShoppingItems(["Eggs", "Jam"], ids: ids).items
        #expect(again.map(\.id) == first.map(\.id) && again.map(\.listed) == first.map(\.listed))
        #expect(try a.store.versionVector() == before, "the replay wrote nothing")
        #expect(try a.shoppingItems().map(\.name) == ["Eggs", "Jam"])

        // The same addition reaching two agents before they meet: one item each, merged into one.
        let b = try secondMachine()
        let bread = RowIDRules.newRowID()
        _ = try a.addShoppingItems(["Bread"], ids: [bread]).items
        _ = try b.addShoppingItems(["Bread"], ids: [bread]).items
        try sync(a, b)
        #expect(try a.shoppingItems().filter { $0.name == "Bread" }.count == 1)
        #expect(try b.shoppingItems().filter { $0.name == "Bread" }.count == 1)

        _ = try a.checkShoppingItem(ids[0], once: true)
        let checked = try a.store.versionVector()
        #expect(try a.checkShoppingItem(ids[0], once: true).state == .restock)
        #expect(try a.store.versionVector() == checked, "the replayed check wrote nothing")
        #expect(code { _ = try a.checkShoppingItem(ids[0]) } != nil, "without once, a second check is refused as before")
        _ = try a.restockShoppingItem(ids[0], once: true)
        #expect(try a.restockShoppingItem(ids[0], once: true).state == .active)

        // A name in the restock pool comes back (the rule of every addition), once.
        let pool = try a.checkShoppingItem("Jam")
        let milkOp = [RowIDRules.newRowID()]
        let back = try a.addShoppingItems(["jam"], ids: milkOp)
        #expect(back.restocked == [pool.id] && back.items.map(\.id) == [pool.id])
        let restockedOnce = try a.store.versionVector()
        _ = try a.addShoppingItems(["jam"], ids: milkOp)
        #expect(try a.store.versionVector() == restockedOnce)
        #expect(try a.shoppingItems().filter { $0.name.lowercased() == "jam" }.map(\.id) == [pool.id])

        // Its answer lost and sent again: answered as the item it brought back (the phone's
        // changes queued after it name that item), while that item is where it was put.
        #expect(try a.addShoppingItems(["jam"], ids: milkOp).items.map(\.id) == [pool.id])
        _ = try a.checkShoppingItem(pool.id, once: true)
        #expect(try a.addShoppingItems(["jam"], ids: milkOp).items.map(\.state) == [.deleted], "moved since: only the kept id")

        #expect(code { _ = try a.addShoppingItems(["x"], ids: ["not an id!"]) } == "invalid_id")
        #expect(code { _ = try a.addShoppingItems(["x", "y"], ids: [RowIDRules.newRowID()]) } == "wrong_type")
    }

    /// A phone uses another agent by its roaming credential: any computer of the household
    /// checks it and none keeps it; forged, for a removed phone, or made before a machine was
    /// removed (a new advertisement key), it is refused; where each computer serves phones is
    /// the household's too.
    @Test func aPhonesRoamingCredentialIsCheckedEverywhereAndEndsWithARemoval() throws {
        let phone = try a.addPhone(name: "Anna's phone", member: nil, credential: Self.credential)
        let b = try secondMachine()
        let roaming = try #require(try a.phoneRoaming(phone.id))
        #expect(try b.phone(roaming: roaming)?.id == phone.id)
        #expect(try b.phoneRoaming(phone.id) == roaming, "the same on every computer")
        #expect(try b.phone(roaming: phone.id + "." + String(repeating: "0", count: 64)) == nil)
        #expect(try b.phone(roaming: "nonsense") == nil)

        // A machine removed: a new advertisement key, so a credential made before is refused
        // (a removed computer could make only those), and the phone's own agent gives the new one.
        let c = try machine("c")
        try sync(a, c)
        _ = try a.removeMachine(String(c.identity.machineID.prefix(12)))
        try sync(a, b)
        #expect(try b.phone(roaming: roaming) == nil)
        let renewed = try #require(try a.phoneRoaming(phone.id))
        #expect(try renewed != roaming && b.phone(roaming: renewed)?.id == phone.id)

        _ = try a.removePhone(phone.id)
        try sync(a, b)
        #expect(try b.phone(roaming: renewed) == nil && a.phoneRoaming(phone.id) == nil)

        // Where phones are served: the household's, the removed machine's never listed.
        _ = try a.setPhoneService(urls: ["https://192.168.1.5:47655", "https://house.local:47655"])
        _ = try c.setPhoneService(urls: ["https://192.168.1.7:47655"])
        try sync(a, b)
        try c.store.sync(to: b.store)
        let services = try b.phoneServices()
        #expect(services.map(\.machine) == [a.identity.machineID] && services[0].urls.count == 2 && !services[0].isThisMachine)
        #expect(code { _ = try a.setPhoneService(urls: ["http://192.168.1.5:47655"]) } == "phone_url")
        _ = try a.setPhoneService(urls: [])
        try sync(a, b)
        #expect(try b.phoneServices().first?.urls == [])
    }
}
