import Crypto
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PulseModel
import PulseStore
import PulseIdentity

/// Errors a person can act on: each says what happened and what to do.
public enum HouseholdError: Error, CustomStringConvertible, Equatable {
    /// A household rule said no (``Refusal``: a code and its parameters).
    case refused(Refusal)
    /// A file or the database failed (the operating system's words).
    case io(String)

    public static func alreadyExists(_ path: String) -> HouseholdError { .refused(Refusal(.householdExists, ["path": .string(path)])) }
    public static func notInitialized(_ path: String) -> HouseholdError { .refused(Refusal(.noHousehold, ["path": .string(path)])) }

    /// A refusal with `code` and `params`.
    public static func refuse(_ code: Refusal.Code, _ params: [String: JSONValue] = [:]) -> HouseholdError {
        .refused(Refusal(code, params))
    }

    public var refusal: Refusal {
        switch self {
        case let .refused(refusal): refusal
        case let .io(detail): Refusal(.storage, ["detail": .string(detail)])
        }
    }

    public var description: String { refusal.cliMessage() }
}

/// Where a household lives on this machine: `--home`, else `$PULSE_HOME`, else
/// `$XDG_DATA_HOME/house-pulse`, else `~/.local/share/house-pulse`.
public struct HouseholdHome: Sendable, Equatable {
    public let directory: URL

    public init(directory: URL) { self.directory = directory.standardizedFileURL }

    public static func resolve(_ explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> HouseholdHome {
        if let explicit, !explicit.isEmpty { return HouseholdHome(directory: URL(fileURLWithPath: explicit)) }
        if let home = environment["PULSE_HOME"], !home.isEmpty { return HouseholdHome(directory: URL(fileURLWithPath: home)) }
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            return HouseholdHome(directory: URL(fileURLWithPath: xdg).appendingPathComponent("house-pulse"))
        }
        let user = environment["HOME"] ?? FileManager.default.homeDirectoryForCurrentUser.path
        return HouseholdHome(directory: URL(fileURLWithPath: user).appendingPathComponent(".local/share/house-pulse"))
    }

    public var databasePath: String { directory.appendingPathComponent(ReplicaStore.fileName).path }

    /// Why this cannot be a household's directory (it names a file, or something under a
    /// file), or nil.
    public var problem: Refusal? {
        var isDirectory = false
        var url = directory
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) {
                if isDirectory { return nil }
                return url == directory
                    ? Refusal(.homeIsFile, ["path": .string(url.path)])
                    : Refusal(.homeUnderFile, ["path": .string(url.path), "home": .string(directory.path)])
            }
            url = url.deletingLastPathComponent()
        }
        return nil
    }
    public var path: String { directory.path }
    public var hasHousehold: Bool { FileManager.default.fileExists(atPath: databasePath) }
}

/// A household on this machine: its replicated store plus who this machine is.
/// The household rules (shopping, tasks, …) are written on top of this type so the
/// CLI and the agent's local API share one implementation of each.
public final class Household {
    public static let defaultName = "Smith Family Home"
    public static let defaultMembers = ["Anna", "Tom"]

    public let home: HouseholdHome
    package let store: ReplicaStore
    public let identity: MachineIdentity
    public let householdID: String
    /// A phone's member, for the household as a phone's call sees it (``acting(as:)``);
    /// `.none`: this machine's member.
    let actingMember: String??

    /// The member this machine belongs to (writes are signed with it). Read afresh: it is
    /// a local setting another process (`whoami --set`) may change.
    /// For a phone's call (``acting(as:)``), the phone's member.
    public var memberID: String? {
        if let actingMember { return actingMember }
        return (try? store.meta("member_id"))?.textValue
    }

    private init(home: HouseholdHome, store: ReplicaStore, identity: MachineIdentity) throws {
        self.home = home
        self.store = store
        self.identity = identity
        guard case let .text(id)? = try store.meta("household_id") else {
            throw HouseholdError.notInitialized(home.path)
        }
        householdID = id
        actingMember = nil
    }

    private init(_ household: Household, actingAs member: String?) {
        home = household.home
        store = household.store
        identity = household.identity
        householdID = household.householdID
        actingMember = .some(member)
    }

    /// The same household, as a phone's call sees it: its writes are signed with `member` (nil:
    /// a phone of nobody in particular), and "me" is that member (``currentMemberID()``).
    public func acting(as member: String?) -> Household { Household(self, actingAs: member) }

    /// Opens the household in `home`; fails when there is none.
    /// `maxClockAheadMilliseconds`: how far ahead of this clock a peer's change may be
    /// stamped before it is held (see ``ReplicaStore/releaseHeldChanges()``).
    public static func open(
        _ home: HouseholdHome,
        physicalClock: @escaping @Sendable () -> Int64 = ReplicaStore.systemClock,
        maxClockAheadMilliseconds: Int64 = HybridClock.defaultMaxDriftMilliseconds
    ) throws -> Household {
        if let problem = home.problem { throw HouseholdError.refused(problem) }
        guard home.hasHousehold else { throw HouseholdError.notInitialized(home.path) }
        let identity = try MachineIdentity.load(from: home.directory.appendingPathComponent(MachineIdentity.fileName))
        // The database holds the household's secrets (the HELLO key, advertisement keys):
        // owner-only, like identity.pem, or nothing opens it.
        for path in [home.databasePath, home.databasePath + "-wal"] {
            var info = stat()
            if stat(path, &info) == 0, info.st_mode & 0o077 != 0 {
                throw IdentityError.unsafePermissions(path, mode: Int(info.st_mode & 0o777))
            }
        }
        let store: ReplicaStore
        do {
            store = try ReplicaStore(path: home.databasePath, physicalClock: physicalClock, maxDriftMilliseconds: maxClockAheadMilliseconds)
        } catch let error as StoreError {
            // A home a newer release wrote (a downgrade, an older package over a newer backup):
            // refused before anything is written, in words that say what to do.
            if case .newerSchema = error { throw HouseholdError.refused(Refusal(error)) }
            throw error
        }
        let household = try Household(home: home, store: store, identity: identity)
        store.publishesWrites = household.agentPublishes()
        return household
    }

    /// Creates a new household in `home`: its profile, default settings and members, and
    /// this machine's replica record, committed at once. Refuses, changing nothing, when
    /// `home` already holds one.
    @discardableResult
    public static func create(
        _ home: HouseholdHome, name: String?, members: [String], label: String? = nil,
        physicalClock: @escaping @Sendable () -> Int64 = ReplicaStore.systemClock
    ) throws -> Household {
        let householdName = try Validation.name(name ?? defaultName, what: "household_name", max: 100)
        let memberNames = try (members.isEmpty ? defaultMembers : members).map { try Validation.memberName($0) }
        if let duplicate = Validation.firstDuplicate(memberNames) {
            throw HouseholdError.refuse(.listedTwice, ["name": .string(duplicate)])
        }
        return try build(home, physicalClock: physicalClock) { store, identity in
            let memberIDs = memberNames.map { _ in RowIDRules.newRowID() }
            try store.setMeta("household_id", .text(RowIDRules.random()))
            try store.setMeta(secretKey, .text(Hex.string(newSecret())))
            try store.setMeta("member_id", .text(memberIDs[0]))
            try store.setMeta(syncedOnceKey, .integer(1)) // it holds the household's data: it made it
            try store.write(member: memberIDs[0]) { tx in
                try tx.put(.household, "profile", ["name": .text(householdName)])
                try tx.put(.settings, "settings", ["appearance": .text("system"), "celebrations": .bool(true), "suggestions": .bool(true)])
                for (index, memberName) in memberNames.enumerated() {
                    try tx.put(
                        .member, memberIDs[index],
                        [
                            "name": .text(memberName),
                            "initials": .text(MemberStyle.initials(of: memberName)),
                            "color": .text(MemberStyle.color(at: index)),
                            "removed": .bool(false),
                        ])
                }
                try recordReplica(&tx, store: store, identity: identity, label: label)
                // The founding machine is the household's first machine, and the first key
                // of its advertisements (docs/SECURITY.md).
                let now = try store.orderingKey()
                try tx.put(
                    .machine, identity.machineID,
                    [
                        "name": .text(machineName(label)), "member": .text(memberIDs[0]),
                        "added_by": .text(identity.machineID), "added": .integer(now),
                    ])
                try tx.create(.discoveryKey, RowIDRules.newRowID(), ["key": .text(newDiscoveryKey()), "created": .integer(now)])
            }
        }
    }

    /// The name a machine gives itself: `label`, or its host name.
    package static func machineName(_ label: String?) -> String {
        let name = String((label ?? ProcessInfo.processInfo.hostName).trimmed.prefix(100))
        return name.isEmpty ? "unnamed" : name
    }

    /// Records which machine this replica (database incarnation) belongs to.
    static func recordReplica(
        _ tx: inout ReplicaStore.LocalWriter, store: ReplicaStore,
        identity: MachineIdentity, label: String?
    ) throws {
        try tx.put(
            .replica, store.replicaID.description,
            [
                "machine": .text(identity.machineID),
                "label": .text(String((label ?? ProcessInfo.processInfo.hostName).prefix(100))),
            ])
    }

    /// Builds a new household database beside its final name, fills it through `fill`,
    /// and renames it into place: a crash leaves either no household or a whole one.
    /// Refuses, changing nothing, when `home` already holds a household.
    /// `source`: a backup the new database starts as a copy of (``restore(from:into:label:)``).
    static func build(
        _ home: HouseholdHome, physicalClock: @escaping @Sendable () -> Int64, from source: String? = nil,
        fill: (ReplicaStore, MachineIdentity) throws -> Void
    ) throws -> Household {
        guard !home.hasHousehold else { throw HouseholdError.alreadyExists(home.path) }
        if let problem = home.problem { throw HouseholdError.refused(problem) }
        try Directories.make(home.path, mode: 0o700)
        let identity = try MachineIdentity.loadOrCreate(in: home.directory)
        let staging = home.databasePath + ".new"
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: staging + suffix) }
        if let source { try FileManager.default.copyItem(atPath: source, toPath: staging) }
        do {
            let store = try ReplicaStore(path: staging, physicalClock: physicalClock)
            try fill(store, identity)
            try store.checkpoint()
        }
        // The household's content is private to its owner; SQLite gives the -wal and
        // -shm files the database file's mode.
        chmod(staging, 0o600)
        try FileSafety.rename(URL(fileURLWithPath: staging), to: URL(fileURLWithPath: home.databasePath))
        for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: staging + suffix) }
        return try open(home, physicalClock: physicalClock)
    }

    /// Prepares `home` to hold a replica of an existing household: an empty database
    /// that knows the household id and (optionally) this machine's member, and records
    /// this machine's replica. It learns the rest from its peers; having nothing, it can
    /// erase nothing (deletions travel only as explicit tombstones).
    @discardableResult
    public static func createReplica(
        _ home: HouseholdHome, householdID: String, memberID: String?, secret: [UInt8],
        label: String? = nil, introducedBy: String? = nil, discoveryKey: [UInt8]? = nil,
        physicalClock: @escaping @Sendable () -> Int64 = ReplicaStore.systemClock
    ) throws -> Household {
        guard secret.count == 32 else { throw HouseholdError.refuse(.invalidSecret) }
        guard RowIDRules.isValid(householdID) else { throw HouseholdError.refuse(.invalidID, ["kind": "household", "value": .string(householdID)]) }
        if let memberID, !RowIDRules.isValid(memberID) { throw HouseholdError.refuse(.invalidID, ["kind": "member", "value": .string(memberID)]) }
        return try build(home, physicalClock: physicalClock) { store, identity in
            try store.setMeta("household_id", .text(householdID))
            try store.setMeta(joinedAtKey, .integer(physicalClock()))
            try store.setMeta(secretKey, .text(Hex.string(secret)))
            if let memberID { try store.setMeta("member_id", .text(memberID)) }
            if let introducedBy { try store.setMeta(introducedByKey, .text(introducedBy)) }
            if let discoveryKey, discoveryKey.count == 32 { try store.setMeta(introducedKeyKey, .text(Hex.string(discoveryKey))) }
            try store.write(member: memberID) { tx in
                try recordReplica(&tx, store: store, identity: identity, label: label)
            }
        }
    }

    static let joinedAtKey = "joined_at"

    /// When this copy of the household was made here (joined or started; Unix ms); nil for
    /// a copy made before it was recorded.
    public func joinedAt() throws -> Int64? {
        if case let .integer(value)? = try store.meta(Self.joinedAtKey) { return value }
        return nil
    }

    /// The canonical export: every replicated row of the household with its fields, keys
    /// sorted, rows sorted. Two machines that have converged print the same bytes.
    public func canonicalExport() throws -> String {
        Self.renderExport(try store.canonicalState(), householdID: householdID)
    }

    /// The canonical export of a replicated state.
    public static func renderExport(_ state: [EntityKind: [String: [String: FieldValue]]], householdID: String) -> String {
        var entities: [String: CanonicalJSON] = [:]
        for kind in EntityKind.allCases {
            let rows = state[kind] ?? [:]
            entities[kind.rawValue] = .object(
                rows.mapValues { fields in
                    var fields = fields
                    // An advertisement key is a secret: the export shows its fingerprint only.
                    if kind == .discoveryKey, let key = fields["key"]?.textValue {
                        fields["key"] = .text("sha256:" + Hex.string(SHA256.hash(data: Array(key.utf8)).prefix(8)))
                    }
                    // The PIN's hash would let anyone holding an export try the 10 000 PINs offline.
                    if kind == .kidsPIN {
                        for name in ["hash", "reset"] where fields[name]?.textValue != nil { fields[name] = .text(name == "hash" ? "set" : "pending") }
                    }
                    return .object(fields.mapValues(CanonicalJSON.init))
                })
        }
        return CanonicalJSON.object([
            "format": .string("house-pulse-export/1"),
            "household": .string(householdID),
            "entities": .object(entities),
        ]).rendered()
    }
}

/// Directories made with their missing parents, failing in words.
public enum Directories {
    /// Creates `path` and its missing parents with `mode`, saying why in words when it
    /// cannot ("Permission denied", "Read-only file system", …).
    public static func make(_ path: String, mode: mode_t) throws {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            if mkdir(prefix, mode) != 0 && errno != EEXIST {
                throw HouseholdError.io("cannot create the directory \(prefix): \(String(cString: strerror(errno)))")
            }
        }
    }
}

/// Avatar initials and colours derived from a member's name and position.
public enum MemberStyle {
    public static let palette = ["#4F7CAC", "#D78C28", "#7FAD98", "#B5658C", "#7F9BAD", "#C0504D", "#8A6FB0", "#5E8C31"]

    public static func initials(of name: String) -> String {
        // The first letter or digit of the first two words that have one ("<b>Bold</b>" → "B").
        let words = name.split(whereSeparator: { $0 == " " || $0 == "-" }).compactMap { $0.first { $0.isLetter || $0.isNumber } }
        let letters = Array(words.prefix(2))
        let result = String(letters.compactMap { $0 }).uppercased()
        return result.isEmpty ? "?" : String(result.prefix(3))
    }

    public static func color(at index: Int) -> String { palette[index % palette.count] }
}

package enum Validation {
    /// A trimmed, non-empty, single-line name of at most `max` characters.
    package static func name(_ raw: String, what: String, max: Int) throws -> String {
        let trimmed = raw.trimmed
        guard !trimmed.isEmpty else { throw HouseholdError.refuse(.empty, ["field": .string(what)]) }
        // Characters are counted only when the bytes could exceed them (each is a byte or more).
        guard trimmed.utf8.count <= max || trimmed.count <= max else {
            throw HouseholdError.refuse(.tooLong, ["field": .string(what), "max": JSONValue(max)])
        }
        // C0 and DEL are single bytes in UTF-8, and no byte of a longer sequence is below 0x80.
        func control(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }
        guard !(trimmed.utf8.withContiguousStorageIfAvailable { $0.contains(where: control) } ?? trimmed.utf8.contains(where: control)) else {
            throw HouseholdError.refuse(.controlCharacters, ["field": .string(what)])
        }
        return trimmed
    }

    /// `today`, `tomorrow`, or `YYYY-MM-DD` (a due date).
    package static func date(_ text: String, today: IsoDate = Days.today()) throws -> IsoDate {
        guard let date = Days.parse(text, today: today) else {
            throw HouseholdError.refuse(.invalidDate, ["text": .string(text)])
        }
        return date
    }

    /// The word that names this machine's member wherever a member is asked for.
    package static let me = "me"

    /// A member's name: a name, and not "me" (which means this machine's member).
    package static func memberName(_ raw: String) throws -> String {
        let name = try self.name(raw, what: "member_name", max: 60)
        guard name.lowercased() != me else {
            throw HouseholdError.refuse(.reservedName, ["name": .string(me)])
        }
        return name
    }

    package static func firstDuplicate(_ names: [String]) -> String? {
        var seen = Set<String>()
        return names.first { !seen.insert($0.lowercased()).inserted }
    }
}

extension Household {
    /// This database went back in time (PulseStore/Rewind.swift): it continues as a new
    /// replica of the same machine, with the label its former replica had.
    public func continueAsNewReplica() throws -> ReplicaStore.NewReplica {
        try store.continueAsNewReplica(replicaRow: try nextReplicaRow())
    }

    /// Moves this database's branch of a forked history to its own id and seals the origin
    /// (PulseStore/Histories.swift); a sealed own replica continues under a new id.
    public func healFork(of origin: ReplicaID, from forkAt: UInt64, into branch: ReplicaID) throws -> ReplicaStore.HealedFork {
        try store.healFork(of: origin, from: forkAt, into: branch, replicaRow: try nextReplicaRow())
    }

    /// Records where a forked history ends; the new replica id when it was this database's own.
    public func adoptSeal(of origin: ReplicaID, at seq: UInt64) throws -> ReplicaID? {
        try store.adoptSeal(of: origin, at: seq, replicaRow: try nextReplicaRow())
    }

    /// The `replica` row of this database's next replica id: this machine, its label.
    private func nextReplicaRow() throws -> RowFields {
        let label =
            try store.value(.replica, store.replicaID.description, "label")
            ?? .text(String(ProcessInfo.processInfo.hostName.prefix(100)))
        return ["machine": .text(identity.machineID), "label": label]
    }
}
