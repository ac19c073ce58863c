import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseModel
import PulseStore
import PulseIdentity

/// Which automatic backups a home keeps: one a day, the last 7 days; one a week (named by
/// the week's Monday), the last 4 weeks. Pure: names in, names out (table-tested).
public enum BackupSchedule {
    public static let directoryName = "backups"
    public static let dailyKept = 7
    public static let weeklyKept = 4

    public static func dailyName(_ day: IsoDate) -> String { "daily-\(day).sqlite" }
    public static func weeklyName(_ day: IsoDate) -> String { "weekly-\(monday(of: day)).sqlite" }

    /// The Monday of `day`'s week.
    public static func monday(of day: IsoDate) -> IsoDate {
        Days.adding(-(Days.weekday(day) - 1), to: day)
    }

    /// What to make today and what to delete, given the names in the directory.
    public static func plan(existing: [String], today: IsoDate) -> (make: [String], delete: [String]) {
        let daily = dailyName(today), weekly = weeklyName(today)
        let make = [daily, weekly].filter { !existing.contains($0) }
        let all = Set(existing + make)
        func kept(_ prefix: String, _ count: Int) -> [String] {
            // ISO dates in the names: the text order is the time order.
            all.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".sqlite") }.sorted(by: >).dropFirst(count).sorted()
        }
        return (make, kept("daily-", dailyKept) + kept("weekly-", weeklyKept))
    }
}

extension Household {
    /// The home's automatic backups, newest first (complete files only: a `.partial` is never one).
    public static func backupsDirectory(_ home: HouseholdHome) -> String {
        home.directory.appendingPathComponent(BackupSchedule.directoryName).path
    }

    /// Makes today's automatic backups if missing and deletes those the schedule no longer
    /// keeps; returns the names made. A backup is a consistent snapshot (StoreBackup).
    @discardableResult
    public static func backUpDaily(_ home: HouseholdHome, today: IsoDate = Days.today()) throws -> [String] {
        let directory = backupsDirectory(home)
        try Directories.make(directory, mode: 0o700)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let plan = BackupSchedule.plan(existing: names, today: today)
        for name in plan.make { try StoreBackup.write(database: home.databasePath, to: directory + "/" + name) }
        for name in plan.delete { unlink(directory + "/" + name) }
        // A backup cut short by a crash left its partial file: never a backup, removed here.
        for name in names where name.contains(StoreBackup.partialSuffix) { unlink(directory + "/" + name) }
        return plan.make
    }

    /// A backup of this household now, to `path` (see StoreBackup.write).
    public func backUp(to path: String) throws -> Int {
        try StoreBackup.write(database: home.databasePath, to: path)
    }

    /// A backup of the household in `home` now, to `path`, without opening it as a household.
    @discardableResult
    public static func backUp(_ home: HouseholdHome, to path: String) throws -> Int {
        try StoreBackup.write(database: home.databasePath, to: path)
    }

    /// Meta keys that are the lost machine's own, dropped by a restore.
    static let machineOwnKeys = [
        "static_peers", "went_back_in_time", AgentLockFile.publishingTokenKey, introducedByKey, introducedKeyKey,
        pinFailuresKey, pinRetryAtKey, lastClearKey(), lastClearKey("*"),
    ]

    /// Brings a household back from a backup into `home`, which must hold none: for when every
    /// machine of the household was lost. This machine comes back as a **new machine** of the
    /// household: a new identity (the backup holds no key), a new replica, listed on the
    /// household's machines as added by itself; the lost machines stay listed (a family removes
    /// those gone for good with `devices remove`); their changes stay theirs.
    /// Nothing is written when the backup is refused.
    public static func restore(
        from backup: String, into home: HouseholdHome, label: String? = nil,
        physicalClock: @escaping @Sendable () -> Int64 = ReplicaStore.systemClock
    ) throws -> (Household, BackupSummary) {
        if let problem = home.problem { throw HouseholdError.refused(problem) }
        let info = try StoreBackup.inspect(backup)
        if home.hasHousehold {
            let current = try? open(home)
            if current?.householdID == info.householdID {
                throw HouseholdError.refuse(.restoreSameHousehold, ["path": .string(home.path)])
            }
            throw HouseholdError.refuse(.restoreOtherHousehold, ["path": .string(home.path)])
        }
        var cameBack = false
        let household = try build(home, physicalClock: physicalClock, from: backup) { store, identity in
            try store.beginAsRestoredReplica(dropping: machineOwnKeys)
            try store.setMeta(syncedOnceKey, .integer(1))
            let memberID = try store.meta("member_id")?.textValue
            // This computer's own key kept (its database lost, `identity.pem` not), and the
            // backup lists it as a member: it is back as itself — its name kept, trusted by the
            // others at once — not a new machine (issue 52, item 18).
            let known = try store.row(.machine, identity.machineID)
            let removed = try store.row(.machineRemoval, identity.machineID)
            cameBack = !known.isEmpty && removed.isEmpty
            try store.write(member: memberID) { tx in
                try recordReplica(&tx, store: store, identity: identity, label: label ?? (cameBack ? known["name"]?.textValue : nil))
                if cameBack {
                    if let label { try tx.put(.machine, identity.machineID, ["name": .text(machineName(label))]) }
                } else {
                    try tx.put(
                        .machine, identity.machineID,
                        [
                            "name": .text(machineName(label)), "member": memberID.map(FieldValue.text) ?? .null,
                            "added_by": .text(identity.machineID), "added": .integer(try store.orderingKey()),
                        ])
                }
            }
        }
        var summary = BackupSummary(householdID: info.householdID, householdName: info.householdName, bytes: info.bytes)
        summary.cameBack = cameBack
        return (household, summary)
    }
}

/// What a backup file holds, checked (``Household/inspectBackup(_:)``).
public struct BackupSummary: Sendable, Equatable {
    public let householdID: String
    public let householdName: String?
    public let bytes: Int
    /// After a restore: this computer was already a member of the household (its key kept),
    /// and came back as itself rather than as a new machine.
    public var cameBack = false
}

extension Household {
    /// Checks that `path` is a whole, readable household backup, or says what it is not.
    public static func inspectBackup(_ path: String) throws -> BackupSummary {
        let info = try StoreBackup.inspect(path)
        return BackupSummary(householdID: info.householdID, householdName: info.householdName, bytes: info.bytes)
    }
}
