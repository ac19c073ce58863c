import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold

/// Savings goals (issue 58, item 2, decision 0022): what is kept for a goal, cancelling,
/// reaching it across two computers, a parent's one-step redemption; and the ledger rule's
/// promise under any merge of offline redemptions, over 1 000 seeds.
@Suite struct KidsGoalsTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        // reward_001 costs 5, reward_006 20; chore_001 earns 2.
        a = try Self.kidsHousehold(in: dir, kids: ["Sam"], selected: ["chore_001", "reward_001", "reward_006"])
    }

    @Test func aGoalKeepsWhatIsSavedForItAndCancellingFreesItWithNothingLost() throws {
        try a.adjustKid("Sam", peanuts: 12, reason: "Pocket money", pin: "1234")
        let goal = try a.setGoal(kid: "Sam", reward: "reward_006")
        #expect(goal.peanuts == 20 && goal.saved == 12 && !goal.reached)
        #expect(try a.kids().first?.goal == goal, "the kid's goal with its progress: 12 of 20")
        // 12 kept for the goal: a reward of 5 cannot be had from the 0 left free.
        #expect(code { try a.redeem(kid: "Sam", reward: "reward_001") } == "kept_for_goal")
        #expect(code { try a.setGoal(kid: "Sam", reward: "reward_006") } == "already_the_goal")
        #expect(code { try a.redeemGoal(kid: "Sam", pin: "1234") } == "goal_not_reached")
        try a.cancelGoal(kid: "Sam")
        #expect(try a.kids().first?.goal == nil && a.kids().first?.balance == 12, "cancelled: nothing lost")
        #expect(try a.redeem(kid: "Sam", reward: "reward_001").balanceAfter == 7)
        #expect(code { try a.cancelGoal(kid: "Sam") } == "no_goal")
    }

    @Test func aGoalReachedAcrossTwoComputersIsRedeemedByAParentInOneStep() throws {
        let b = try secondMachine()
        try a.adjustKid("Sam", peanuts: 14, reason: "Pocket money", pin: "1234")
        try a.setGoal(kid: "Sam", reward: "reward_006")
        try sync(a, b)
        // B offline for part of it: chores done on each, merged.
        for day in 1...2 { try a.markDone(kid: "Sam", item: "chore_001", today: IsoDate(year: 2026, month: 11, day: day)!) }
        try b.markDone(kid: "Sam", item: "chore_001", today: IsoDate(year: 2026, month: 11, day: 3)!)
        #expect(try a.kids().first?.goal?.saved == 18 && b.kids().first?.goal?.saved == 16)
        try sync(a, b)
        let reached = try #require(try b.kids().first?.goal)
        #expect(reached.saved == 20 && reached.reached, "20 of 20 on both")
        #expect(code { try b.redeemGoal(kid: "Sam", pin: nil) } == "pin_required")
        let spend = try b.redeemGoal(kid: "Sam", pin: "1234")
        #expect(spend.kind == "spend" && spend.peanuts == 20 && spend.item == "reward_006" && spend.balanceAfter == 0)
        try sync(a, b)
        #expect(try a.kids().first?.goal == nil && a.kids().first?.balance == 0, "the goal ended with its spend, on both")
        #expect(try a.basket(kid: "Sam").first?.item == "reward_006")
    }

    @Test func redeemingTheGoalsOwnRewardEndsTheGoalAndTheGoalOfARemovedRewardIsRefused() throws {
        try a.adjustKid("Sam", peanuts: 25, reason: "Birthday", pin: "1234")
        try a.setGoal(kid: "Sam", reward: "reward_006")
        #expect(try a.redeem(kid: "Sam", reward: "reward_001").balanceAfter == 20, "5 free beyond the 20 kept")
        try a.redeem(kid: "Sam", reward: "reward_006")
        #expect(try a.kids().first?.goal == nil)
        try a.deselectCatalogueItems(["reward_001"], pin: "1234")
        #expect(code { try a.setGoal(kid: "Sam", reward: "reward_001") } == "not_found", "a goal on a removed reward")
    }

    /// Offline redemptions on several computers, merged in any order: the ledger rule gives
    /// every replica the same outcome and never a negative balance (1 000 seeds of the pure rule).
    @Test func concurrentRedemptionsNeverMakeABalanceNegativeOverAThousandSeeds() {
        for seed in UInt64(1)...1000 {
            var random = SeededGenerator(seed: seed)
            var entries: [Ledger.Entry] = []
            for n in 0..<Int.random(in: 1...40, using: &random) {
                let earn = Bool.random(using: &random)
                entries.append(
                    Ledger.Entry(
                        id: "e\(n)", kind: earn ? .earn : .spend, peanuts: Int.random(in: 1...20, using: &random),
                        item: earn ? nil : "reward", day: nil, created: Int64.random(in: 0...50, using: &random)))
            }
            let resolved = Ledger.resolve(entries)
            #expect(Ledger.resolve(entries.shuffled(using: &random)) == resolved, "seed \(seed): any order of arrival")
            var balance = 0
            for id in resolved.order where resolved.outcomes[id] ?? .counted == .counted {
                let entry = entries.first { $0.id == id }!
                balance += entry.kind == .earn ? entry.peanuts : -entry.peanuts
                #expect(balance >= 0, "seed \(seed): negative after \(id)")
            }
            #expect(balance == resolved.balance, "seed \(seed)")
        }
    }
}
