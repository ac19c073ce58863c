import Foundation
import Testing
@testable import PulseModel
@testable import PulseStore
@testable import PulseHousehold

/// The members' passwords for apps over CalDAV (issue 59): shown once, kept as a slow hash,
/// replicated so that every agent checks them, revoked on every agent; bad input changes nothing.
@Suite struct AppPasswordTests: HouseholdFixture {
    let dir: TemporaryDirectory
    let a: Household
    init() throws {
        dir = try TemporaryDirectory()
        a = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: [])
    }

    @Test func aPasswordIsShownOnceKeptAsASlowHashAndWorksOnEveryComputer() throws {
        let made = try a.createAppPassword(label: "  Tom's iPhone Reminders ", member: "tom")
        #expect(made.password.utf8.count == 24 && made.password.split(separator: "-").map(\.count) == [4, 4, 4, 4, 4])
        #expect(made.password.allSatisfy { "abcdefghijkmnpqrstuvwxyz23456789-".contains($0) })
        #expect(made.record.label == "Tom's iPhone Reminders" && made.record.member == "Tom" && made.record.login == "Tom")
        #expect(made.record.revoked == nil && made.record.lastUsed == nil)
        // The row holds an scrypt hash, never the password; the list shows neither.
        let row = try #require(try a.store.rows(.appPassword).first)
        #expect(row.text("hash").hasPrefix("scrypt$16384$8$1$") && !row.text("hash").contains(made.password))
        let listed = try JSONSerialization.data(withJSONObject: try JSONSerialization.jsonObject(with: JSONEncoder().encode(a.appPasswords())))
        #expect(!String(decoding: listed, as: UTF8.self).contains("scrypt") && !String(decoding: listed, as: UTF8.self).contains(made.password))
        // As typed into an app: the user name in any case, the password with or without its dashes, in capitals.
        #expect(try a.appPassword(login: "tom", password: made.password)?.id == made.record.id)
        #expect(try a.appPassword(login: " TOM ", password: made.password.uppercased().replacingOccurrences(of: "-", with: " "))?.id == made.record.id)
        #expect(try a.appPassword(login: "Tom", password: String(made.password.dropLast()) + "x") == nil)
        #expect(try a.appPassword(login: "Anna", password: made.password) == nil, "another member's name")
        #expect(try a.appPassword(login: "", password: made.password) == nil)
        #expect(try a.appPassword(login: "Tom", password: "") == nil)
        // Another computer of the household knows it.
        let b = try secondMachine()
        #expect(try b.appPassword(login: "Tom", password: made.password)?.id == made.record.id)
    }

    @Test func aRenamedMemberKeepsTheNameTheAppWasGivenAndGainsTheNewOne() throws {
        let made = try a.createAppPassword(label: "Tasks.org", member: "Tom")
        _ = try a.editMember("Tom", name: "Thomas")
        #expect(try a.appPassword(login: "Tom", password: made.password)?.member == "Thomas")
        #expect(try a.appPassword(login: "thomas", password: made.password)?.id == made.record.id)
    }

    @Test func aRevocationOnOneComputerReachesEveryOneAndIsForGood() throws {
        let made = try a.createAppPassword(label: "Home Assistant", member: nil)
        let b = try secondMachine()
        let revoked = try b.revokeAppPassword(made.record.id)
        #expect(revoked.revoked != nil)
        #expect(try b.appPassword(login: made.record.login, password: made.password) == nil)
        #expect(try a.appPassword(login: made.record.login, password: made.password) != nil, "not heard of yet")
        try sync(a, b)
        #expect(try a.appPassword(login: made.record.login, password: made.password) == nil)
        #expect(code { _ = try a.revokeAppPassword(made.record.id) } == "already_revoked")
        // No write of null brings it back.
        #expect(throws: (any Error).self) {
            try a.store.write(member: nil) { tx in _ = try tx.put(.appPassword, made.record.id, ["revoked": .null]) }
        }
        #expect(try a.appPasswords().first?.revoked != nil)
        // A removed member's passwords stop working too.
        let tom = try a.createAppPassword(label: "Reminders", member: "Tom")
        _ = try a.removeMember("Tom")
        #expect(try a.appPassword(login: "Tom", password: tom.password) == nil)
        #expect(try a.appPasswords().first { $0.id == tom.record.id }?.member == nil)
    }

    @Test func theLastUseIsWrittenAtMostHourly() throws {
        let made = try a.createAppPassword(label: "Thunderbird", member: nil)
        try a.noteAppPasswordUse(made.record.id)
        let first = try #require(try a.appPasswords().first?.lastUsed)
        let changes = try a.store.rows(.appPassword).first?["last_used"]
        try a.noteAppPasswordUse(made.record.id)
        #expect(try a.appPasswords().first?.lastUsed == first)
        #expect(try a.store.rows(.appPassword).first?["last_used"] == changes, "no second write within the hour")
    }

    @Test func badInputIsRefusedAndChangesNothing() throws {
        _ = try a.createAppPassword(label: "Reminders", member: "Tom")
        let before = try a.canonicalExport()
        #expect(code { _ = try a.createAppPassword(label: "   ", member: nil) } == "empty")
        #expect(code { _ = try a.createAppPassword(label: String(repeating: "x", count: 61), member: nil) } == "too_long")
        #expect(code { _ = try a.createAppPassword(label: "Bad\u{7}", member: nil) } == "control_characters")
        #expect(code { _ = try a.createAppPassword(label: "Siri", member: "Nobody") } == "not_found")
        #expect(code { _ = try a.createAppPassword(label: "reminders", member: "Tom") } == "duplicate")
        #expect(code { _ = try a.revokeAppPassword("nope") } == "no_such_app_password")
        #expect(code { _ = try a.revokeAppPassword(String(repeating: "x", count: 500)) } == "no_such_app_password")
        #expect(try a.canonicalExport() == before)
        // At most 20 live ones a member; a revoked one makes room.
        for n in 2...20 { _ = try a.createAppPassword(label: "App \(n)", member: "Tom") }
        #expect(code { _ = try a.createAppPassword(label: "App 21", member: "Tom") } == "too_many_app_passwords")
        _ = try a.revokeAppPassword(try #require(try a.appPasswords().first { $0.label == "App 2" }).id)
        #expect(try a.createAppPassword(label: "App 21", member: "Tom").record.label == "App 21")
    }

    @Test func theMessagesSayItInEveryLanguage() throws {
        for language in ["en", "pl", "de", "nl"] {
            let catalogue = try #require(MessageCatalogue.builtIn(language))
            let text = Refusal(.tooManyAppPasswords, ["name": "Tom", "max": 20]).message(catalogue)
            #expect(text.contains("Tom") && text.contains("20"), "\(language): \(text)")
            #expect(!Refusal(.alreadyRevoked, ["name": "Siri"]).message(catalogue).contains("{"), "\(language)")
        }
        #expect(Refusal(.tooManyAppPasswords, ["name": "Tom", "max": 20]).message(try #require(MessageCatalogue.builtIn("pl"))).contains("20 haseł"))
    }
}
