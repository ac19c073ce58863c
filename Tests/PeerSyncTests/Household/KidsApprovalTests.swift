import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold
@testable import PulseNotify

/// Chores a kid reports and a parent approves (issue 58, item 4, decision 0023): the setting,
/// a report counted nowhere until approved, approvals and declines on two computers apart,
/// the peanuts counted once, and bad input refused with nothing written.
@Suite struct KidsApprovalTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        // chore_001 earns 2, chore_002 its own; rule_001 is a rule (kept, not reported).
        a = try Self.kidsHousehold(in: dir, kids: ["Sam", "Zoe"], selected: ["chore_001", "chore_002", "rule_001", "reward_001"])
    }

    @Test func withApprovalOnAChoreWaitsCountedNowhereUntilAParentApprovesIt() throws {
        #expect(try a.settings().kidsApproval == false)
        #expect(code { try a.reportChore(kid: "Sam", item: "chore_001") } == "approval_off")
        #expect(code { try a.setKidsApproval("on", pin: nil) } == "pin_required")
        #expect(code { try a.setKidsApproval("on", pin: "9999") } == "wrong_pin")
        #expect(code { try a.setKidsApproval("maybe", pin: "1234") } == "invalid_switch")
        #expect(try a.setKidsApproval("on", pin: "1234"))
        #expect(try a.settings().kidsApproval)
        // A chore is reported, never earned at a tap; a rule still earns at once.
        #expect(code { try a.markDone(kid: "Sam", item: "chore_001") } == "needs_approval")
        #expect(try a.markDone(kid: "Sam", item: "rule_001").outcome == "counted")
        let balance = try a.resolveKid("Sam").balance
        let report = try a.reportChore(kid: "Sam", item: "chore_001")
        #expect(report.status == .waiting && report.kidName == "Sam" && report.peanuts == 2)
        #expect(try a.resolveKid("Sam").balance == balance, "waiting: counted nowhere")
        #expect(try a.itemsDoneToday(kid: a.resolveKid("Sam")).contains("chore_001") == false)
        #expect(code { try a.reportChore(kid: "Sam", item: "chore_001") } == "already_reported")
        // Without the PIN: refused, nothing changed.
        #expect(code { try a.approveReport(report.id, pin: nil) } == "pin_required")
        #expect(code { try a.declineReport(report.id, word: nil, pin: "0000") } == "wrong_pin")
        #expect(try a.choreReports(kid: "Sam").first?.status == .waiting)
        let approved = try a.approveReport(report.id, pin: "1234")
        #expect(approved.status == .approved && approved.outcome == "counted" && approved.decidedBy == "Anna")
        #expect(try a.resolveKid("Sam").balance == balance + 2)
        // Earned on the day it was done: the chore is done today, and cannot be reported again.
        #expect(try a.itemsDoneToday(kid: a.resolveKid("Sam")).contains("chore_001"))
        #expect(code { try a.reportChore(kid: "Sam", item: "chore_001") } == "already_earned_today")
        #expect(code { try a.approveReport(report.id, pin: "1234") } == "already_decided")
        #expect(code { try a.declineReport(report.id, word: "no", pin: "1234") } == "already_decided")
        #expect(try a.resolveKid("Sam").balance == balance + 2, "approving twice counts once")
    }

    @Test func aDeclineSaysTheParentsWordAndTheKidMayReportAgain() throws {
        try a.setKidsApproval("on", pin: "1234")
        let report = try a.reportChore(kid: "Zoe", item: "chore_002")
        #expect(code { try a.declineReport(report.id, word: String(repeating: "x", count: 181), pin: "1234") } == "too_long")
        let declined = try a.declineReport(report.id, word: "  Your room is not tidy yet  ", pin: "1234")
        #expect(declined.status == .declined && declined.word == "Your room is not tidy yet" && declined.decidedBy == "Anna")
        #expect(try a.resolveKid("Zoe").balance == 0)
        // Declined, the kid may try again the same day.
        let again = try a.reportChore(kid: "Zoe", item: "chore_002")
        #expect(again.status == .waiting)
        #expect(try a.choreReports(kid: "Zoe").map(\.status) == [.declined, .waiting])
        #expect(try a.declineReport(again.id, word: "", pin: "1234").word == nil, "an empty word is none")
    }

    @Test func approvedOnOneComputerAndDeclinedOnAnotherApartEachDecisionStandsAndPeanutsCountOnce() throws {
        try a.setKidsApproval("on", pin: "1234")
        let b = try secondMachine()
        let feed = try a.reportChore(kid: "Sam", item: "chore_001")
        let room = try a.reportChore(kid: "Sam", item: "chore_002")
        try sync(a, b)
        #expect(try b.choreReports().map(\.status) == [.waiting, .waiting])
        // Apart: A approves one and B declines the other; and both approve the first (two adults at once).
        try a.approveReport(feed.id, pin: "1234")
        try b.approveReport(feed.id, pin: "1234")
        try b.declineReport(room.id, word: "Not yet", pin: "1234")
        try sync(a, b)
        for household in [a, b] {
            let reports = try household.choreReports(kid: "Sam")
            #expect(reports.map(\.status) == [.approved, .declined])
            #expect(reports.last?.word == "Not yet")
            #expect(try household.resolveKid("Sam").balance == 2, "the chore's 2 peanuts, once")
            #expect(try household.ledger(kid: "Sam").filter { $0.kind == "earn" }.count == 1)
        }
    }

    @Test func anApprovalAndADeclineOfOneReportMadeApartLeaveItApproved() throws {
        try a.setKidsApproval("on", pin: "1234")
        let b = try secondMachine()
        let report = try a.reportChore(kid: "Sam", item: "chore_001")
        try sync(a, b)
        try a.declineReport(report.id, word: "No", pin: "1234")
        try b.approveReport(report.id, pin: "1234")
        try sync(a, b)
        for household in [a, b] {
            #expect(try household.choreReports(kid: "Sam").first?.status == .approved)
            #expect(try household.resolveKid("Sam").balance == 2)
        }
    }

    @Test func badReportsAreRefusedWithNothingWritten() throws {
        try a.setKidsApproval("on", pin: "1234")
        let before = try a.store.versionVector()
        // A chore not selected, a rule, a reward, a kid who is not there.
        #expect(code { try a.reportChore(kid: "Sam", item: "chore_009") } == "not_found")
        #expect(code { try a.reportChore(kid: "Sam", item: "rule_001") } == "not_found")
        #expect(code { try a.reportChore(kid: "Sam", item: "reward_001") } == "not_found")
        #expect(code { try a.reportChore(kid: "Nobody", item: "chore_001") } == "not_found")
        #expect(code { try a.approveReport("no-such-report", pin: "1234") } == "not_found")
        #expect(try a.store.versionVector() == before, "nothing written")
    }

    @Test func aReportArrivingFromAnotherComputerIsAnEventNamingTheKidAndTheChore() throws {
        try a.setKidsApproval("on", pin: "1234")
        let b = try secondMachine()
        try sync(a, b)
        try a.reportChore(kid: "Sam", item: "chore_001")
        let changes = try a.store.allDeltas(for: try b.store.versionVector()).flatMap(\.changes)
        try sync(a, b)
        let events = try b.filledIn(EventRules.events(of: [changes], labels: [:]), local: false).filter { $0.type == .kidReported }
        #expect(events.count == 1 && events.first?.authorName == "Sam" && events.first?.titleKey == "catalogue.chore_001")
        let group = try #require(events.first.map { NotificationPolicy.group(for: $0, me: "someone", settings: NotificationSettings()) })
        #expect(group == .approval)
    }

    @Test func aReportNotifiesEveryComputerButTheOneItWasMadeOn() throws {
        var remote = HouseholdEvent(type: .kidReported, entity: "chore_report", row: "r", title: "Feed the cat", author: "m", authorName: "Sam", time: 10)
        remote.local = false
        var local = remote
        local.local = true
        let on = NotificationSettings()
        #expect(NotificationPolicy.group(for: remote, me: "m", settings: on) == .approval, "even on the author's member's other computer")
        #expect(NotificationPolicy.group(for: local, me: "x", settings: on) == nil)
        var off = on
        off.kids = false
        #expect(NotificationPolicy.group(for: remote, me: "x", settings: off) == nil)
        let note = NotificationBatcher.notification(id: 1, replaces: nil, group: .approval, events: [remote])
        #expect(note.summary == "Sam did “Feed the cat”: waiting for your approval")
    }
}
