import Testing
@testable import PulseModel
@testable import PulseHousehold

@Suite struct BackupScheduleTests {
    static func day(_ text: String) -> IsoDate { IsoDate(text)! }

    @Test(arguments: [
        ("2026-11-23", "2026-11-23"), ("2026-11-24", "2026-11-23"), ("2026-11-29", "2026-11-23"),
        ("2026-11-30", "2026-11-30"), ("2027-01-01", "2026-12-28"),
    ])
    func aWeeklyBackupIsNamedByItsWeeksMonday(_ day: String, _ monday: String) {
        #expect(BackupSchedule.monday(of: Self.day(day)) == Self.day(monday))
    }

    @Test func anEmptyDirectoryGetsTodaysDailyAndThisWeeksWeekly() {
        let plan = BackupSchedule.plan(existing: [], today: Self.day("2026-11-24"))
        #expect(plan.make == ["daily-2026-11-24.sqlite", "weekly-2026-11-23.sqlite"])
        #expect(plan.delete.isEmpty)
    }

    @Test func theLastSevenDailiesAndFourWeekliesAreKeptAndNothingElseIsTouched() {
        let dailies = (1...10).map { String(format: "daily-2026-11-%02d.sqlite", $0) }
        let weeklies = [
            "weekly-2026-10-12.sqlite", "weekly-2026-10-19.sqlite", "weekly-2026-10-26.sqlite",
            "weekly-2026-11-02.sqlite", "weekly-2026-11-09.sqlite",
        ]
        let others = ["house-pulse-backup-2026-01-01.sqlite", "daily-2026-11-11.sqlite.partial", "notes.txt"]
        let plan = BackupSchedule.plan(existing: dailies + weeklies + others, today: Self.day("2026-11-11"))
        #expect(plan.make == ["daily-2026-11-11.sqlite"]) // this week's Monday (11-09) exists
        // With today's, eleven dailies: the four oldest go; six weeklies… five here: the oldest goes.
        #expect(
            plan.delete == [
                "daily-2026-11-01.sqlite", "daily-2026-11-02.sqlite", "daily-2026-11-03.sqlite",
                "daily-2026-11-04.sqlite", "weekly-2026-10-12.sqlite",
            ])
    }

    @Test func aDayAlreadyBackedUpMakesNothing() {
        let plan = BackupSchedule.plan(existing: ["daily-2026-11-24.sqlite", "weekly-2026-11-23.sqlite"], today: Self.day("2026-11-24"))
        #expect(plan.make.isEmpty && plan.delete.isEmpty)
    }
}
