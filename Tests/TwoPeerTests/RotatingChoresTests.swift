import Foundation
import Testing

/// Chores that rotate (issue 58, item 1) across real processes: nine Mondays of a weekly chore
/// among three people on two computers, each week's command run with that Monday's clock
/// (libfaketime: the injectable clock here is the process's own), one person away for two
/// weeks, one swap, and a week's task made on both computers while apart.
@Suite struct RotatingChoresTests {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    /// The Mondays of weeks 1–9, from 1 December 2025: in the past, as each period's task is
    /// stamped with its day and a peer holds aside a change stamped ahead of its own clock.
    static let mondays = [
        "2025-12-01", "2025-12-08", "2025-12-15", "2025-12-22", "2025-12-29", "2026-01-05", "2026-01-12", "2026-01-19", "2026-01-26",
    ]

    /// The agents' clock: this week's or next week's Wednesday (1–7 days ahead, its time of day
    /// the real one). An agent makes each template's task of its own today (at its start, then
    /// daily): on a real Monday the agents made this Monday's "Bins", which hid weeks 8 and 9's
    /// (a later period supersedes), and the CLI's `task done Bins` of week 9 completed it.
    static var agentsClock: [String] {
        let weekday = Calendar(identifier: .gregorian).component(.weekday, from: Date()) // 1: Sunday … 4: Wednesday
        return FakeTime.offset("+\((4 - weekday + 6) % 7 + 1)d")
    }

    /// `args` on `home` with its clock at 09:00 of `day`.
    @discardableResult
    func on(_ day: String, _ home: Home, _ args: [String]) throws -> PulsePeer.Result {
        var home = home
        home.wrapper = FakeTime.offset("@\(day) 09:00:00")
        return try home.run(args)
    }

    /// Whose `period`'s task of `template` is in `home`'s database, and how many there are.
    func task(_ home: Home, _ template: String, _ period: String) throws -> (assignee: String, count: Int) {
        let query = try Shell.run([
            "python3", "-c",
            """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            rows = c.execute("SELECT coalesce(m.name, '-') FROM task t LEFT JOIN member m ON m.id = t.assignee "
                             "WHERE t.template = ? AND t.period = ?", (sys.argv[2], sys.argv[3])).fetchall()
            print(len(rows), rows[0][0] if rows else '')
            """,
            home.path + "/household.sqlite", template, period,
        ])
        let parts = query.stdout.split(separator: " ", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        return (parts.count > 1 ? parts[1] : "", Int(parts.first ?? "") ?? -1)
    }

    @Test(.enabled(if: FakeTime.available, "needs libfaketime (scripts/setup.sh --tests installs `faketime`)"))
    func nineWeeksOfAChoreRotateFairlyWithOnePersonAwayOneSwapAndAWeekMadeOnBothComputersApart() throws {
        defer { FakeTime.removeLeftovers() }
        let homes = try scratch.household("a", "b")
        let (a, b) = (homes[0], homes[1])
        let week = Self.mondays
        try a.run(["member", "add", "Cleo"])
        try on(week[0], a, ["recurring", "add", "Bins", "--weekly", "mon", "--rotate", "Anna,Tom,Cleo"])
        let listed = try JSONSerialization.jsonObject(with: Data(a.run(["recurring", "--json"]).stdout.utf8)) as? [[String: Any]]
        let template = try #require(listed?.first?["id"] as? String)
        var seen: [String] = []
        func make(_ n: Int, on home: Home) throws {
            try on(week[n], home, ["task", "list"]) // the week's task made, as any listing does
            let made = try task(home, template, week[n])
            #expect(made.count == 1, "week \(n + 1): one task")
            seen.append(made.assignee)
        }
        try make(0, on: a)
        // In week 2, Cleo says she will be away in weeks 3 and 4.
        try on(week[1], a, ["recurring", "away", "add", "Cleo", "--from", week[2], "--to", "2025-12-28"])
        for n in 1...3 { try make(n, on: a) }
        // In week 4: week 5 is Cleo's (back, and half a week behind each of the others); she
        // swaps it with Anna's week 6.
        let swapped = try on(week[3], a, ["recurring", "swap", "Bins", week[4], week[5]]).stdout
        #expect(swapped.contains("next turns: 2025-12-22 Tom · 2025-12-29 Anna · 2026-01-05 Cleo"), "\(swapped)")
        for n in 4...5 { try make(n, on: a) }

        // B catches up through the agents, then the two are apart for week 7: each makes it.
        let agentA = try AgentProcess(home: a.path, wrapper: Self.agentsClock)
        var agentB: AgentProcess? = try AgentProcess(home: b.path, ["--peer", agentA.address], wrapper: Self.agentsClock)
        try b.waitUntil("synced")
        #expect(agentB?.stop() == 0)
        agentB = nil
        try on(week[6], a, ["task", "list"])
        try on(week[6], b, ["task", "list"])
        let apartA = try task(a, template, week[6])
        let apartB = try task(b, template, week[6])
        #expect(apartA.count == 1 && apartB.count == 1 && apartA.assignee == apartB.assignee, "\(apartA) \(apartB)")
        agentB = try AgentProcess(home: b.path, ["--peer", agentA.address], wrapper: Self.agentsClock)
        try b.waitUntil("synced")
        try a.waitUntil("synced")
        #expect(try task(a, template, week[6]).count == 1 && task(b, template, week[6]).count == 1, "one task for week 7 on each")
        seen.append(apartA.assignee)
        // Weeks 8 and 9 on B: the same rotation goes on there.
        for n in 7...8 { try make(n, on: b) }
        #expect(seen == ["Anna", "Tom", "Anna", "Tom", "Anna", "Cleo", "Tom", "Cleo", "Anna"], "\(seen)")
        // Week 9's done on B: its listing counts it for Anna, this month (January).
        try on(week[8], b, ["task", "done", "Bins"])
        let shown = try on(week[8], b, ["recurring"]).stdout
        #expect(shown.contains("rotates among: Anna, Tom, Cleo") && shown.contains("done this month: Anna 1 · Tom 0 · Cleo 0"), "\(shown)")
        #expect(agentB?.stop() == 0)
        #expect(agentA.stop() == 0)
    }
}
