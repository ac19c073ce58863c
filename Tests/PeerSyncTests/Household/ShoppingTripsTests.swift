import Foundation
import Synchronization
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold
@testable import PulseNotify

/// "I'm going shopping" (issue 57, item 4): the rule of a trip's end on its own, then trips
/// through the household on two computers, and the notification in each language.
@Suite struct ShoppingTripsTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    /// The household's clock, moved by the test alone.
    final class Clock: Sendable {
        // Now: another computer holds aside a change stamped over 10 minutes ahead of its clock.
        let now = Mutex<Int64>(Int64(Date().timeIntervalSince1970 * 1000))
    }
    let clock = Clock()
    init() throws {
        dir = try TemporaryDirectory()
        let clock = self.clock
        a = try Household.create(
            HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: ["Anna", "Tom"],
            physicalClock: { clock.now.withLock { $0 } })
    }

    func advance(minutes: Int64) { clock.now.withLock { $0 += minutes * 60_000 } }

    static let ends: [(String, Bool, Int64, Bool, Bool, Bool)] = [
        // what, ended, now (ms after the start), list empty, checked since the start → over
        ("going on", false, 60_000, false, false, false),
        ("ended by its shopper", true, 60_000, false, false, true),
        ("at its time limit", false, ShoppingTripRules.limitMilliseconds, false, false, true),
        ("a minute before it", false, ShoppingTripRules.limitMilliseconds - 60_000, false, true, false),
        ("the list done after a check-off", false, 60_000, true, true, true),
        ("a list empty at the start waits for what is added", false, 60_000, true, false, false),
    ]

    @Test(arguments: ends)
    func aTripIsOverWhenEndedAtItsLimitOrWhenItsListIsDone(_ row: (String, Bool, Int64, Bool, Bool, Bool)) {
        let start: Int64 = 1_800_000_000_000
        let until = HybridTimestamp(milliseconds: start + ShoppingTripRules.limitMilliseconds).rawValue
        let over = ShoppingTripRules.isOver(ended: row.1, until: until, now: start + row.2, listEmpty: row.3, checkedSinceStart: row.4)
        #expect(over == row.5, "\(row.0)")
    }

    @Test func aComputerOrPhoneOfNobodyIsAskedWhoUsesItBeforeGoingShopping() throws {
        // A computer that belongs to no member (as one whose member was removed).
        let nobodys = try secondMachine()
        try nobodys.store.removeMeta("member_id")
        try #require(try nobodys.currentMemberID() == nil)
        #expect(code { try nobodys.startShoppingTrip() } == "no_member_for_machine")
        #expect(code { try a.acting(as: nil).startShoppingTrip() } == "no_member_for_phone")
        #expect(try nobodys.shoppingTrips().isEmpty && a.shoppingTrips().isEmpty, "nothing started")
    }

    @Test func aTripIsSeenOnTheOtherComputerAndEndsByEachOfItsRules() throws {
        let b = try secondMachine()
        try a.addShoppingItems(["Milk", "Bread"])
        let trip = try a.startShoppingTrip(shop: "Lidl on Main Street")
        #expect(trip.mine && trip.memberName == "Anna" && trip.shop == "Lidl on Main Street")
        #expect(try a.startShoppingTrip().id == trip.id, "going again: the same trip")
        try sync(a, b)
        let seen = try b.shoppingTrips()
        #expect(seen.map(\.id) == [trip.id] && seen.allSatisfy { !$0.mine })
        // Ended by its shopper: gone on both.
        try a.endShoppingTrip()
        try sync(a, b)
        #expect(try a.shoppingTrips().isEmpty && b.shoppingTrips().isEmpty)
        #expect(code { try a.endShoppingTrip() } == "not_shopping")
        // The list done: empty after her check-offs.
        try a.startShoppingTrip()
        _ = try a.checkShoppingItem("Milk")
        #expect(try a.shoppingTrips().count == 1)
        _ = try a.checkShoppingItem("Bread")
        #expect(try a.shoppingTrips().isEmpty, "the list is done")
        // Its time limit.
        try a.addShoppingItems(["Eggs"])
        try a.startShoppingTrip()
        advance(minutes: 119)
        #expect(try a.shoppingTrips().count == 1)
        advance(minutes: 2)
        #expect(try a.shoppingTrips().isEmpty, "two hours later")
    }

    @Test func aTripIsOneListsAndItsItemsAddedMeanwhileAreLaterThanItsStart() throws {
        let lidl = try #require(try a.addShoppingList("Lidl").id)
        try a.addShoppingItems(["Soap"], on: lidl)
        let trip = try a.startShoppingTrip(on: lidl)
        #expect(trip.list == lidl && trip.listName == "Lidl")
        #expect(code { try a.endShoppingTrip() } == "not_shopping", "no trip for the first list")
        advance(minutes: 1)
        let added = try a.addShoppingItems(["Butter"], on: lidl)[0]
        #expect(added.listed > trip.started)
        #expect(try a.shoppingItems(on: lidl).first { $0.name == "Soap" }!.listed < trip.started)
        #expect(code { try a.startShoppingTrip(shop: String(repeating: "s", count: 61)) } == "too_long")
    }

    @Test func everyoneElseIsToldInTheirLanguage() throws {
        let b = try secondMachine()
        let lidl = try #require(try a.addShoppingList("Lidl").id)
        try a.startShoppingTrip(on: lidl)
        let changes = try a.store.allDeltas(for: try b.store.versionVector()).flatMap(\.changes)
        try sync(a, b)
        let events = try b.filledIn(EventRules.events(of: [changes], labels: [:]), local: false).filter { $0.type == .shoppingTrip }
        #expect(events.count == 1 && events[0].listName == "Lidl" && events[0].authorName == "Anna")
        let settings = NotificationSettings()
        #expect(NotificationPolicy.group(for: events[0], me: b.memberID, settings: settings) == .trip)
        #expect(NotificationPolicy.group(for: events[0], me: a.memberID, settings: settings) == nil, "never the shopper")
        let said = try ["en", "pl", "de", "nl"].map { language in
            NotificationBatcher.notification(id: 1, replaces: nil, group: .trip, events: events, words: try #require(MessageCatalogue.builtIn(language)))
                .summary
        }
        #expect(
            said == [
                "Anna is going to Lidl: add what you need now", "Anna idzie do: Lidl — dopisz teraz, czego potrzebujesz",
                "Anna geht zu Lidl: Trag jetzt ein, was du brauchst", "Anna gaat naar Lidl: zet er nu op wat je nodig hebt",
            ])
    }
}
