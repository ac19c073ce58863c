import Crypto
import CryptoExtras
import FoundationEssentials
import PulseModel
import PulseStore

/// The adults' 4-digit PIN for the kids' ledger: **one for the household**, replicated as a
/// salted slow hash (scrypt, N = 2^15, r = 8, p = 1: about 0.1 s per guess in a release build)
/// in the `kids_pin` entity (protocol 5), so a machine that joins has it.
///
/// - Set once, by a machine that holds the household's data (``syncedOnceKey``): a child at a
///   newly joined computer cannot set one before the parents' arrives. Changed only with the
///   current PIN. Wrong attempts are rate-limited per machine: from the third wrong one in a
///   row, the next must wait 5 s, doubling up to 15 minutes; kid actions are never blocked.
/// - Forgotten: `kids pin reset` on one computer shows a 6-digit code (kept as a scrypt hash,
///   24 hours); `kids pin reset --confirm CODE` on **another** computer of the household clears
///   the PIN everywhere, and an adult sets a new one. A child alone at one computer cannot.
/// - A machine of an earlier release kept its own PIN in `meta`: it is still accepted there
///   until the household's PIN row exists, and becomes the household's the first time a parent
///   uses it (when the household has none): nobody is locked out by the upgrade.
/// - Honest limits (docs/SECURITY.md): 10 000 PINs are tried offline in minutes by anyone who can
///   read a database file or a backup; a child who can use two of the family's computers can
///   reset it; the PIN stops a child at the keyboard, not an adult with the files.
extension Household {
    package static let pinKey = "kids_pin"
    package static let pinFailuresKey = "kids_pin_failures"
    package static let pinRetryAtKey = "kids_pin_retry_at"
    static let scryptRounds = 1 << 15

    /// Set in `meta` once this database holds the household's data (it made the household,
    /// was restored from a backup, or completed a catch-up from a peer): before that, a machine
    /// cannot know whether the household has a PIN, and may not set a first one.
    package static let syncedOnceKey = "synced_once"
    static let pinRowID = "pin"
    /// How long a requested reset can be confirmed from another machine.
    static let resetLifetimeMilliseconds: Int64 = 24 * 3_600_000

    /// The household's PIN row: its hash (nil: none, or reset), and whether the row exists.
    private func householdPIN() throws -> (exists: Bool, hash: String?, reset: String?) {
        let row = try store.row(.kidsPIN, Self.pinRowID)
        return (!row.isEmpty, row["hash"]?.textValue, row["reset"]?.textValue)
    }

    /// A PIN set on this machine alone by a release before the household's PIN (protocol 4):
    /// still accepted here until the household has a PIN row of its own.
    private func legacyPIN() throws -> String? { try store.meta(Self.pinKey)?.textValue }

    public var hasKidsPIN: Bool {
        guard let pin = try? householdPIN() else { return false }
        if pin.exists { return pin.hash != nil }
        return (try? legacyPIN()) != nil
    }

    public var hasSyncedOnce: Bool { (try? store.meta(Self.syncedOnceKey)) != nil }

    /// Records that this database holds the household's data (see ``syncedOnceKey``).
    public func noteSyncedOnce() throws {
        if try store.meta(Self.syncedOnceKey) == nil { try store.setMeta(Self.syncedOnceKey, .integer(1)) }
    }

    private func writePIN(hash: String?, reset: String?) throws {
        try store.write(member: memberID) { tx in
            try tx.put(.kidsPIN, Self.pinRowID, ["hash": hash.map(FieldValue.text) ?? .null, "reset": reset.map(FieldValue.text) ?? .null])
        }
        try store.removeMeta(Self.pinKey)
    }

    /// Sets the household's PIN the first time; refused once one is set (change it with the
    /// current one), and on a machine that has not synced with the household yet (it cannot
    /// know that none is set: a child at a newly joined computer would otherwise set one).
    public func setKidsPIN(_ new: String) throws {
        let fresh = try Self.checkedPIN(new)
        guard !hasKidsPIN else {
            throw HouseholdError.refuse(.pinAlreadySet)
        }
        guard hasSyncedOnce else {
            throw HouseholdError.refuse(.notSyncedYet)
        }
        let first = try householdPIN().exists == false
        try writePIN(hash: try Self.hashPIN(fresh), reset: nil)
        // The household's first PIN is no news where it was made; a PIN set after a reset is
        // news everywhere (the one who set it proved nothing: every adult must see it).
        if first { try acknowledgeLastPINChange() }
    }

    public func changeKidsPIN(current: String, new: String) throws {
        let fresh = try Self.checkedPIN(new)
        try requireAdult(current)
        try writePIN(hash: try Self.hashPIN(fresh), reset: nil)
        try acknowledgeLastPINChange() // made here by someone who proved the PIN: no news here
    }

    // MARK: Every adult is told (issue 52, item 4)

    /// The last change of the PIN, as the household's data tells it (never the hash): what
    /// (`changed`, `reset_asked`, `cleared`), when, on which computer, by whose computer's member.
    public struct PINChange: Sendable, Codable, Equatable {
        public let kind: String
        public let time: Int64
        public let machine: String?
        public let by: String?
    }

    static let pinSeenKey = "kids_pin_seen"

    /// What a PIN row's fields say happened: a reset asked, a PIN set or changed, or cleared.
    static func pinChangeKind(hash: FieldValue?, reset: FieldValue?) -> String {
        if reset?.textValue != nil { return "reset_asked" }
        return hash?.textValue != nil ? "changed" : "cleared"
    }

    /// The last change of the PIN and its stamp, or nil when the household never had one.
    func lastPINChange() throws -> (change: PINChange, stamp: Int64)? {
        let versions = try store.versions(.kidsPIN, Self.pinRowID)
        let latest = [versions[field: "hash"], versions[field: "reset"]].compactMap { $0 }.max { $0.stamp < $1.stamp }
        guard let latest else { return nil }
        let names = try memberNames()
        let change = PINChange(
            kind: Self.pinChangeKind(hash: versions[field: "hash"]?.value, reset: versions[field: "reset"]?.value),
            time: Int64(latest.stamp.hlc.milliseconds), machine: try replicaLabels()[latest.stamp.origin],
            by: latest.member.flatMap { names[$0] })
        return (change, latest.stamp.hlc.rawValue)
    }

    /// The last change of the PIN while no adult at this computer has said it was theirs.
    public func unacknowledgedPINChange() throws -> PINChange? {
        guard let (change, stamp) = try lastPINChange() else { return nil }
        let seen = try store.meta(Self.pinSeenKey)?.integerValue ?? Int64.min
        return stamp > seen ? change : nil
    }

    /// An adult at this computer says the last change was a parent's (with the PIN as it is
    /// now: a cleared PIN is answered by setting a new one, itself a change to acknowledge).
    public func acknowledgeKidsPINChange(pin: String) throws {
        try requireAdult(pin)
        try acknowledgeLastPINChange()
    }

    private func acknowledgeLastPINChange() throws {
        guard let (_, stamp) = try lastPINChange() else { return }
        try store.setMeta(Self.pinSeenKey, .integer(stamp))
    }

    /// Starts the reset of a forgotten PIN on this machine: returns a 6-digit code, good for
    /// 24 hours, that must be confirmed on **another** computer of the household
    /// (``confirmKidsPINReset(code:)``): a child alone at one computer cannot clear the PIN.
    public func requestKidsPINReset() throws -> String {
        guard hasKidsPIN else { throw HouseholdError.refuse(.noPIN) }
        var generator = SystemRandomNumberGenerator()
        let number = String(Int.random(in: 0...999_999, using: &generator))
        let code = String(repeating: "0", count: 6 - number.count) + number
        let pin = try householdPIN()
        let hash = pin.exists ? pin.hash : try legacyPIN()
        let request = "\(identity.machineID)$\(ReplicaStore.systemClock())$\(try Self.hashPIN(code))"
        try writePIN(hash: hash, reset: request)
        return code
    }

    /// Confirms, on another computer than the one that asked, the reset of the PIN: the PIN is
    /// cleared for the whole household, and an adult sets a new one (`kids pin set`).
    public func confirmKidsPINReset(code: String) throws {
        let pin = try householdPIN()
        let parts = pin.reset?.split(separator: "$", maxSplits: 2).map(String.init) ?? []
        guard parts.count == 3, let asked = Int64(parts[1]) else {
            throw HouseholdError.refuse(.noResetAsked)
        }
        guard parts[0] != identity.machineID else {
            throw HouseholdError.refuse(.resetOnThisMachine)
        }
        guard ReplicaStore.systemClock() - asked < Self.resetLifetimeMilliseconds else {
            throw HouseholdError.refuse(.resetExpired, ["hours": 24])
        }
        try rateLimited(wrong: .wrongResetCode) {
            guard try Self.verify(code, against: parts[2]) else { return false }
            try writePIN(hash: nil, reset: nil)
            return true
        }
    }

    /// Whether the household has a PIN, and whether this machine may set the first one
    /// (what a page asks before showing "Choose a PIN" or "Enter the PIN").
    public struct PINState: Sendable, Codable, Equatable {
        public let set: Bool
        public let canSet: Bool
        /// The last change of the PIN no adult here has acknowledged (shown until one does).
        public var change: PINChange? = nil
        /// A reset asked on this computer, to confirm on another one.
        public var resetAskedHere = false
    }

    public func kidsPINState() -> PINState {
        var state = PINState(set: hasKidsPIN, canSet: !hasKidsPIN && hasSyncedOnce)
        state.change = try? unacknowledgedPINChange()
        state.resetAskedHere = (try? householdPIN().reset?.hasPrefix(identity.machineID + "$")) == true
        return state
    }

    /// Checks an adult's PIN as every adult action does (rate-limited the same way): what
    /// a page asks before it opens parents' mode. Throws when missing, wrong or too soon.
    public func checkKidsPIN(_ pin: String) throws { try requireAdult(pin) }

    /// Checks an adult's PIN, with the per-machine rate limit; throws when it is missing,
    /// wrong or tried too soon. A right legacy PIN (this machine's own, from before the
    /// household's) becomes the household's when it has none yet.
    package func requireAdult(_ pin: String?) throws {
        let household = try householdPIN()
        let legacy = household.exists ? nil : try legacyPIN()
        guard household.hash != nil || legacy != nil else {
            throw HouseholdError.refuse(.pinNotSet)
        }
        guard let pin else { throw HouseholdError.refuse(.pinRequired) }
        try rateLimited(wrong: .wrongPIN) {
            if let hash = household.hash { return try Self.verify(pin, against: hash) }
            guard let legacy, try Self.verify(pin, against: legacy) else { return false }
            if hasSyncedOnce { try writePIN(hash: legacy, reset: nil) } // published once a parent uses it
            return true
        }
    }

    /// Runs `check` unless this machine must wait after wrong attempts; counts a failure
    /// (from the third in a row, a wait of 5 s doubling to 15 min) or clears the count.
    private func rateLimited(wrong: Refusal.Code, _ check: () throws -> Bool) throws {
        let now = ReplicaStore.systemClock()
        let retryAt = try store.meta(Self.pinRetryAtKey)?.integerValue ?? 0
        if now < retryAt {
            let seconds = (retryAt - now + 999) / 1000
            throw HouseholdError.refuse(.pinLocked, ["retryAfterSeconds": .integer(seconds)])
        }
        if try check() {
            if try store.meta(Self.pinFailuresKey) != nil {
                try store.setMeta(Self.pinFailuresKey, .integer(0))
                try store.setMeta(Self.pinRetryAtKey, .integer(0))
            }
            return
        }
        let failures = (try store.meta(Self.pinFailuresKey)?.integerValue ?? 0) + 1
        try store.setMeta(Self.pinFailuresKey, .integer(failures))
        if failures >= 3 {
            let delay = min(Int64(5_000) << min(failures - 3, 20), 15 * 60_000)
            try store.setMeta(Self.pinRetryAtKey, .integer(now + delay))
        }
        throw HouseholdError.refuse(wrong)
    }

    static func checkedPIN(_ pin: String) throws -> String {
        guard pin.count == 4, pin.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw HouseholdError.refuse(.invalidPIN)
        }
        return pin
    }

    /// `scrypt$N$r$p$salt$hash` (base64).
    static func hashPIN(_ pin: String) throws -> String {
        var salt = [UInt8](repeating: 0, count: 16)
        var generator = SystemRandomNumberGenerator()
        for index in salt.indices { salt[index] = UInt8.random(in: 0...255, using: &generator) }
        let hash = try derive(pin, salt: salt, rounds: scryptRounds, blockSize: 8, parallelism: 1)
        return "scrypt$\(scryptRounds)$8$1$\(Data(salt).base64EncodedString())$\(Data(hash).base64EncodedString())"
    }

    static func verify(_ pin: String, against stored: String) throws -> Bool {
        let parts = stored.split(separator: "$").map(String.init)
        guard parts.count == 6, parts[0] == "scrypt", let rounds = Int(parts[1]), let blockSize = Int(parts[2]),
            let parallelism = Int(parts[3]), let salt = Data(base64Encoded: parts[4]), let expected = Data(base64Encoded: parts[5]),
            (1 << 10...1 << 16).contains(rounds), (1...8).contains(blockSize), (1...2).contains(parallelism)
        else {
            throw HouseholdError.io("the stored PIN hash is damaged (docs/ARCHITECTURE.md, \"The kids' PIN\", says how to clear it)")
        }
        let actual = try derive(pin, salt: Array(salt), rounds: rounds, blockSize: blockSize, parallelism: parallelism)
        // Constant time: every byte compared.
        guard actual.count == expected.count else { return false }
        return zip(actual, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static func derive(_ pin: String, salt: [UInt8], rounds: Int, blockSize: Int, parallelism: Int) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(
            from: Array(pin.utf8), salt: salt, outputByteCount: 32, rounds: rounds,
            blockSize: blockSize, parallelism: parallelism)
        return key.withUnsafeBytes { Array($0) }
    }
}

extension Household {
    static let pinMethods: [APIMethod] = [
        // Whether the PIN changed lately: every adult is told, on the phone too (never the PIN itself).
        .read("kids.pin.get", for: APIMethod.everyone) { _, h in h.kidsPINState() },
        // Writes: a wrong PIN counts towards this machine's delay.
        .write("kids.pin.check") { a, h in
            try h.checkKidsPIN(a.string("pin"))
            return true
        },
        .write("kids.pin.set") { a, h in
            try h.setKidsPIN(a.string("pin"))
            return true
        },
        .write("kids.pin.change") { a, h in
            try h.changeKidsPIN(current: a.string("pin"), new: a.string("new"))
            return true
        },
        .write("kids.pin.reset") { _, h in try h.requestKidsPINReset() },
        .write("kids.pin.confirmReset") { a, h in
            try h.confirmKidsPINReset(code: a.string("code"))
            return true
        },
        .write("kids.pin.acknowledge") { a, h in
            try h.acknowledgeKidsPINChange(pin: a.string("pin"))
            return true
        },
    ]
}
