import Crypto
import CryptoExtras
import FoundationEssentials
import PulseModel
import PulseStore

/// The adults' 4-digit PIN for the kids' ledger.
///
/// Per machine, not replicated: it guards this computer's keyboard (a child at it), and the
/// parents of a household set it on each family computer. Replicating it would spread the
/// hash to every machine without protecting anything more. Stored only as a salted scrypt
/// hash (N = 2^15, r = 8, p = 1: about 0.1 s per guess in a release build) in the local
/// `meta` table. Honest limits: 10 000 PINs are tried offline in minutes by anyone who can
/// read the database file; the PIN stops a child at the keyboard, not an adult with the
/// file. Wrong PINs are rate-limited per machine: from the third wrong one in a row, the
/// next attempt must wait 5 s, doubling up to 15 minutes; kid actions are never blocked.
extension Household {
    package static let pinKey = "kids_pin"
    package static let pinFailuresKey = "kids_pin_failures"
    package static let pinRetryAtKey = "kids_pin_retry_at"
    static let scryptRounds = 1 << 15

    public var hasKidsPIN: Bool { (try? store.meta(Self.pinKey))??.textValue != nil }

    /// Sets the PIN the first time; refused once one is set (change it with the current one).
    public func setKidsPIN(_ new: String) throws {
        guard !hasKidsPIN else { throw HouseholdError.invalidInput("a PIN is already set: change it with `kids pin change`") }
        try store.setMeta(Self.pinKey, .text(try Self.hashPIN(Self.checkedPIN(new))))
    }

    public func changeKidsPIN(current: String, new: String) throws {
        let fresh = try Self.checkedPIN(new)
        try requireAdult(current)
        try store.setMeta(Self.pinKey, .text(try Self.hashPIN(fresh)))
    }

    /// Checks an adult's PIN, with the per-machine rate limit; throws when it is missing,
    /// wrong or tried too soon. Nothing else is written.
    package func requireAdult(_ pin: String?) throws {
        guard case let .text(stored)? = try store.meta(Self.pinKey) else {
            throw HouseholdError.invalidInput("adult actions need a PIN: set one first with `pulse-peer kids pin set`")
        }
        guard let pin else { throw HouseholdError.invalidInput("this is an adult action: give the PIN (prompted, or --pin-stdin)") }
        let now = ReplicaStore.systemClock()
        let retryAt = try store.meta(Self.pinRetryAtKey)?.integerValue ?? 0
        if now < retryAt {
            let seconds = (retryAt - now + 999) / 1000
            throw HouseholdError.invalidInput("too many wrong PINs: try again in \(seconds) s")
        }
        if try Self.verify(pin, against: stored) {
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
        throw HouseholdError.invalidInput("wrong PIN")
    }

    static func checkedPIN(_ pin: String) throws -> String {
        guard pin.count == 4, pin.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw HouseholdError.invalidInput("a PIN is exactly 4 digits")
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
              (1 << 10...1 << 20).contains(rounds), (1...16).contains(blockSize), (1...4).contains(parallelism) else {
            throw HouseholdError.io("the stored PIN hash is damaged (docs/ARCHITECTURE.md, \"The kids' PIN\", says how to clear it)")
        }
        let actual = try derive(pin, salt: Array(salt), rounds: rounds, blockSize: blockSize, parallelism: parallelism)
        // Constant time: every byte compared.
        guard actual.count == expected.count else { return false }
        return zip(actual, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static func derive(_ pin: String, salt: [UInt8], rounds: Int, blockSize: Int, parallelism: Int) throws -> [UInt8] {
        let key = try KDF.Scrypt.deriveKey(from: Array(pin.utf8), salt: salt, outputByteCount: 32, rounds: rounds,
                                           blockSize: blockSize, parallelism: parallelism)
        return key.withUnsafeBytes { Array($0) }
    }
}
