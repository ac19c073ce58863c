import Testing
@testable import PulseStore
@testable import PulseHousehold

/// What the household suites share: a first machine `a` in a temporary directory, more
/// machines of the same household, syncing them, and an error's message.
protocol HouseholdFixture {
    var dir: TemporaryDirectory { get }
    var a: Household { get }
}

extension HouseholdFixture {
    /// The kids' suites' first machine: Anna and Tom's household in `dir`, its PIN 1234, `kids`,
    /// and the catalogue items `selected`.
    static func kidsHousehold(in dir: TemporaryDirectory, kids: [String], selected: [String]) throws -> Household {
        let a = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: ["Anna", "Tom"])
        try a.setKidsPIN("1234")
        for kid in kids { try a.addKid(kid, pin: "1234") }
        try a.selectCatalogueItems(selected, pin: "1234")
        return a
    }

    /// Another machine of `a`'s household (Tom's), synced from `a`.
    func machine(_ name: String) throws -> Household {
        let m = try Household.join(HouseholdHome(directory: dir.url.appendingPathComponent(name)), invitation: a.invitation(forMember: "Tom"))
        try a.store.sync(to: m.store)
        return m
    }

    func secondMachine() throws -> Household { try machine("b") }

    func sync(_ x: Household, _ y: Household) throws {
        try x.store.sync(to: y.store)
        try y.store.sync(to: x.store)
    }

    /// The refusal's code `body` throws (nil when it throws none).
    func code(_ body: () throws -> Void) -> String? {
        do { try body(); return nil } catch { return Refusal(error).code.rawValue }
    }

    /// The error `body` throws, as a person reads it ("" when it throws none).
    func message(_ body: () throws -> Void) -> String {
        do { try body(); return "" } catch { return "\(error)" }
    }
}
