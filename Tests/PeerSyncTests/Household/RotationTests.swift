import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold

/// Chores that rotate (issue 58, item 1): the rule's table (decision 0021's "fair"), its bound
/// over random absences, then rotations through the household on two computers.
@Suite struct RotationTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        a = try Household.create(
            HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: ["Anna", "Ben", "Cleo", "Tom"])
    }

    /// Monday, 1 December 2025, and the Mondays after it: in the past, as a period's task is
    /// stamped with its day (a peer holds aside a change stamped ahead of its clock).
    static let monday = IsoDate("2025-12-01")!
    static func week(_ n: Int) -> IsoDate { Days.adding(7 * (n - 1), to: monday) }

    static func away(_ member: String, weeks: ClosedRange<Int>) -> RotationRules.Away {
        RotationRules.Away(member: member, first: week(weeks.lowerBound), last: Days.adding(6, to: week(weeks.upperBound)))
    }

    static let table: [(String, [RotationRules.Away], [RotationRules.Swap], String)] = [
        // what, away, swaps → whose turn the Mondays of weeks 1–9 are
        ("nobody away: round robin in the order named", [], [], "A B C A B C A B C"),
        (
            "C away in weeks 3–4: A and B share them, C's turn comes back first on return, with no debt",
            [away("C", weeks: 3...4)], [], "A B A B C A B C A"
        ),
        (
            "A away in week 1: B and C share it, so C (half a week behind) goes before A rejoins the round",
            [away("A", weeks: 1...1)], [], "B C A B C A B C A"
        ),
        (
            "everyone away in week 2: nobody's turn, and nobody owes it", [away("A", weeks: 2...2), away("B", weeks: 2...2), away("C", weeks: 2...2)], [],
            "A - B C A B C A B"
        ),
        (
            "weeks 5 and 6 swapped: C does A's, A does C's", [away("C", weeks: 3...4)], [RotationRules.Swap(first: week(5), second: week(6))],
            "A B A B A C B C A"
        ),
        (
            "two swaps of one week apply in the order made", [],
            [RotationRules.Swap(first: week(1), second: week(2)), RotationRules.Swap(first: week(2), second: week(3))], "B C A A B C A B C"
        ),
        ("a swap with a week past the end still moves the week it names", [], [RotationRules.Swap(first: week(9), second: week(11))], "A B C A B C A B B"),
        (
            "a swap naming no period of the chore changes nothing", [], [RotationRules.Swap(first: Days.adding(1, to: week(2)), second: week(3))],
            "A B C A B C A B C"
        ),
    ]

    @Test(arguments: table)
    func aWeeklyChoreOfThreeGoesToWhoeverIsMostBehindTheirShareAmongThoseAtHome(
        _ row: (String, [RotationRules.Away], [RotationRules.Swap], String)
    ) {
        let turns = RotationRules.turns(
            schedule: "weekly:mon", rotation: ["A", "B", "C"], from: Self.monday, through: Days.adding(6, to: Self.week(9)), away: row.1,
            swaps: row.2)
        #expect(turns.map(\.period) == (1...9).map(Self.week), "\(row.0): one turn a period")
        #expect(turns.map { $0.member ?? "-" }.joined(separator: " ") == row.3, "\(row.0)")
    }

    @Test func aRotationOfOneIsAlwaysTheirsAndNoneIsNoTurnsAtAll() {
        let one = RotationRules.turns(schedule: "daily", rotation: ["A"], from: Self.monday, through: Days.adding(9, to: Self.monday))
        #expect(one.count == 10 && one.allSatisfy { $0.member == "A" })
        #expect(RotationRules.turns(schedule: "daily", rotation: [], from: Self.monday, through: Self.week(3)).isEmpty)
        #expect(RotationRules.turns(schedule: "daily", rotation: ["A"], from: Self.week(3), through: Self.monday).isEmpty)
    }

    /// The bound "fair" promises: whatever the absences, nobody's turns are ever more than one
    /// away from their share of the periods they were home for (a share of 1/k among k at home).
    @Test func overAnyAbsencesNobodyIsEverMoreThanOneTurnFromTheirShare() {
        var generator = SeededGenerator(seed: 58)
        for seed in 0..<1000 {
            let people = Int.random(in: 1...6, using: &generator)
            let rotation = (0..<people).map { "p\($0)" }
            let schedule = ["daily", "weekly:mon,thu", "weekly:sat", "monthly:31"].randomElement(using: &generator)!
            let away = (0..<Int.random(in: 0...5, using: &generator)).map { _ in
                let first = Days.adding(Int.random(in: 0...120, using: &generator), to: Self.monday)
                return RotationRules.Away(
                    member: rotation.randomElement(using: &generator)!, first: first, last: Days.adding(Int.random(in: 0...30, using: &generator), to: first))
            }
            let turns = RotationRules.turns(schedule: schedule, rotation: rotation, from: Self.monday, through: Days.adding(150, to: Self.monday), away: away)
            var owed = [String: Double]()
            var done = [String: Double]()
            for turn in turns {
                let home = rotation.filter { person in !away.contains { $0.member == person && $0.first <= turn.period && turn.period <= $0.last } }
                #expect((turn.member == nil) == home.isEmpty, "seed \(seed): a turn whenever someone is home")
                if let member = turn.member { #expect(home.contains(member), "seed \(seed): never someone away") }
                for person in home { owed[person, default: 0] += 1 / Double(home.count) }
                if let member = turn.member { done[member, default: 0] += 1 }
            }
            for person in rotation {
                let gap = abs(done[person, default: 0] - owed[person, default: 0])
                #expect(gap < 1 + 1e-9, "seed \(seed): \(person) did \(done[person, default: 0]) of a share of \(owed[person, default: 0])")
            }
        }
    }

    // MARK: Through the household

    /// Makes each Monday's task of weeks 1...weeks on `machine`, and says whose each is.
    func assignees(_ machine: Household, _ template: String, weeks: ClosedRange<Int>) throws -> [String] {
        let names = try machine.memberNames()
        return try weeks.map { week in
            let date = Self.week(week)
            try machine.generateRecurringTasks(on: date)
            let row = try machine.store.row(.task, "rt-\(template)-\(date)")
            return row["assignee"]?.textValue.flatMap { names[$0] } ?? "-"
        }
    }

    @Test func aRotatingChoresTasksGoInTurnWithOnePersonAwayAndOneSwap() throws {
        let today = Self.monday
        let template = try a.addRecurringTemplate("Bins out", schedule: "weekly:mon", rotation: ["Anna", "Ben", "Cleo"], today: today)
        #expect(template.rotation?.map(\.name) == ["Anna", "Ben", "Cleo"])
        #expect(try assignees(a, template.id, weeks: 1...2) == ["Anna", "Ben"])
        // In week 2 (the task made), Cleo will be away in weeks 3 and 4.
        try a.markAway("Cleo", from: Self.week(3).description, through: Days.adding(6, to: Self.week(4)).description, today: Self.week(2))
        let shown = try a.recurringTemplates(today: Self.week(2)).first { $0.id == template.id }
        #expect(shown?.turns?.map { $0.member ?? "-" } == ["Ben", "Anna", "Ben", "Cleo"], "today's turn first, then the next three")
        #expect(try assignees(a, template.id, weeks: 3...4) == ["Anna", "Ben"])
        // Week 5: Cleo's turn; she swaps it with Anna's of week 6.
        try a.swapTurns(template.id, Self.week(5).description, Self.week(6).description, today: Self.week(4))
        #expect(try assignees(a, template.id, weeks: 5...9) == ["Anna", "Cleo", "Ben", "Cleo", "Anna"])
    }

    @Test func markingTodaysPersonAwayHandsTodaysTaskOnAndComingBackKeepsTheDaysAway() throws {
        let today = Self.monday
        let template = try a.addRecurringTemplate("Dishes", schedule: "daily", rotation: ["Anna", "Ben"], today: today)
        #expect(try assignees(a, template.id, weeks: 1...1) == ["Anna"])
        try a.markAway("Anna", from: "today", through: Days.adding(3, to: today).description, today: today)
        #expect(try a.store.row(.task, "rt-\(template.id)-\(today)")["assignee"]?.textValue == a.memberID(named: "Ben"))
        // Back two days later: the span ends the day before, and the days away stay away.
        let back = Days.adding(2, to: today)
        #expect(try a.endAway("Anna", today: back) == 1)
        #expect(try a.awaySpans(today: back).isEmpty)
        let turns = try a.recurringTemplates(today: back).first { $0.id == template.id }?.turns?.map { $0.member ?? "-" }
        #expect(turns == ["Anna", "Ben", "Anna", "Ben"], "Anna is most behind on her return: two days of Ben's")
        #expect(code { try a.endAway("Anna", today: back) } == "not_away")
    }

    @Test func twoComputersMakingTheSamePeriodsTaskWhileApartEndWithOneTaskForTheSamePerson() throws {
        let b = try secondMachine()
        let template = try a.addRecurringTemplate("Hoover", schedule: "weekly:mon", rotation: ["Anna", "Ben", "Cleo"], today: Self.monday)
        try sync(a, b)
        let onA = try assignees(a, template.id, weeks: 1...4)
        let onB = try assignees(b, template.id, weeks: 1...4)
        #expect(onA == onB && onA == ["Anna", "Ben", "Cleo", "Anna"])
        try sync(a, b)
        for machine in [a, b] {
            let made = try machine.store.rows(.task, RowQuery(where: [("template", .text(template.id))]))
            #expect(made.count == 4, "one task a period")
        }
        // Apart again, only A knows Ben is away in week 5: the merge decides, one task either way.
        try a.markAway("Ben", from: Self.week(5).description, through: Self.week(5).description, today: Self.week(4))
        let a5 = try assignees(a, template.id, weeks: 5...5)
        let b5 = try assignees(b, template.id, weeks: 5...5)
        #expect(a5 == ["Cleo"] && b5 == ["Ben"])
        try sync(a, b)
        let id = "rt-\(template.id)-\(Self.week(5))"
        let rowA = try a.store.row(.task, id)
        let rowB = try b.store.row(.task, id)
        #expect(rowA == rowB, "the same task on both")
    }

    @Test func theListSaysWhoDidItThisMonthAndWhoIsNext() throws {
        let template = try a.addRecurringTemplate("Bins out", schedule: "weekly:mon", rotation: ["Anna", "Ben"], today: Self.monday)
        // Each done in its week (an undone one leaves the list when the next is made).
        _ = try assignees(a, template.id, weeks: 1...1)
        _ = try a.completeTask("rt-\(template.id)-\(Self.week(1))")
        _ = try assignees(a, template.id, weeks: 2...3)
        _ = try a.completeTask("rt-\(template.id)-\(Self.week(3))")
        let shown = try #require(try a.recurringTemplates(today: Self.week(3)).first { $0.id == template.id })
        #expect(shown.doneThisMonth?.map { "\($0.member) \($0.done)" } == ["Anna 2", "Ben 0"])
        #expect(shown.turns?.first?.period == Self.week(3).description && shown.turns?.first?.member == "Anna")
    }

    @Test func badRotationsSwapsAndSpansAwayAreRefusedAndChangeNothing() throws {
        let today = Self.monday
        let template = try a.addRecurringTemplate("Bins out", schedule: "weekly:mon", rotation: ["Anna", "Ben"], today: today)
        let plain = try a.addRecurringTemplate("Plants", schedule: "daily", today: today)
        let before = try a.store.versionVector()
        #expect(code { try a.setRotation(template.id, members: [], today: today) } == "rotation_empty")
        #expect(code { try a.setRotation(template.id, members: ["Anna", "anna"], today: today) } == "listed_twice")
        #expect(code { try a.setRotation(template.id, members: ["Anna", "Zed"], today: today) } == "unknown_member")
        #expect(code { try a.setRotation(plain.id, members: [], off: true, today: today) } == "no_rotation")
        #expect(code { try a.addRecurringTemplate("X", schedule: "daily", assignee: "Anna", rotation: ["Ben"], today: today) } == "assignee_and_rotation")
        #expect(code { try a.swapTurns(plain.id, "today", "tomorrow", today: today) } == "no_rotation")
        #expect(code { try a.swapTurns(template.id, Days.adding(-7, to: today).description, today.description, today: today) } == "turn_in_the_past")
        #expect(code { try a.swapTurns(template.id, today.description, Days.adding(371, to: today).description, today: today) } == "turn_too_far")
        #expect(code { try a.swapTurns(template.id, today.description, "tomorrow", today: today) } == "not_a_turn")
        #expect(code { try a.swapTurns(template.id, today.description, Self.week(3).description, today: today) } == "same_person")
        #expect(code { try a.swapTurns(template.id, today.description, "2025-13-01", today: today) } == "invalid_date")
        #expect(code { try a.markAway("Ben", from: "2025-11-24", through: "2025-12-20", today: today) } == "away_in_the_past")
        #expect(code { try a.markAway("Ben", from: "2025-12-20", through: "2025-12-10", today: today) } == "away_ends_before_it_starts")
        #expect(code { try a.markAway("Ben", from: "2025-12-20", through: "2027-12-10", today: today) } == "away_too_long")
        #expect(code { try a.markAway("Zed", from: "2025-12-20", through: "2025-12-21", today: today) } == "unknown_member")
        #expect(code { try a.setRotation(template.id, members: (1...13).map { "m\($0)" }, today: today) } == "rotation_too_long")
        #expect(try a.store.versionVector() == before, "nothing written")
    }
}
