import FoundationEssentials
import Testing
import PulseModel
@testable import PulseHousehold
@testable import PulseNotify

/// Who reads which language (issue 40): the command line's variables and the page's header.
@Suite struct LanguagesTests {
    static let all = ["en", "pl", "de", "nl"]

    @Test(
        arguments: [
            (nil, [:], "en"),
            ("pl", ["LANG": "de_DE.UTF-8"], "pl"),
            (nil, ["PULSE_LANG": "nl", "LANG": "de_DE.UTF-8"], "nl"),
            (nil, ["LANGUAGE": "fr:de:en", "LC_ALL": "pl_PL.UTF-8"], "de"),
            (nil, ["LC_ALL": "pl_PL.UTF-8", "LC_MESSAGES": "de_DE.UTF-8", "LANG": "nl_NL.UTF-8"], "pl"),
            (nil, ["LC_MESSAGES": "de_DE.UTF-8", "LANG": "nl_NL.UTF-8"], "de"),
            (nil, ["LANG": "nl_NL.UTF-8"], "nl"),
            (nil, ["LANG": "C.UTF-8"], "en"),
            (nil, ["LC_ALL": "POSIX", "LANG": "pl_PL.UTF-8"], "pl"),
            ("fr", ["LANG": "fr_FR.UTF-8"], "en"),
        ] as [(String?, [String: String], String)])
    func theCommandLineReadsItsVariablesInOrder(explicit: String?, environment: [String: String], expected: String) {
        #expect(Languages.forCommandLine(explicit: explicit, environment: environment, available: Self.all) == expected)
    }

    @Test(
        arguments: [
            (nil, "en"),
            ("pl", "pl"),
            ("pl-PL,pl;q=0.9,en-US;q=0.8", "pl"),
            ("fr-FR, de;q=0.7, nl;q=0.9", "nl"),
            ("en;q=0.5, de;q=0.5", "en"),
            ("de;q=0, nl", "nl"),
            ("*", "en"),
            ("fr, es;q=0.9", "en"),
            ("de;q=abc, pl;q=0.1", "pl"),
        ] as [(String?, String)])
    func thePageTakesTheHeaviestAvailableLanguage(header: String?, expected: String) {
        #expect(Languages.forAcceptLanguage(header, available: Self.all) == expected)
    }

    @Test func fourLanguagesAreBuiltInAndAnExplicitUnknownOneIsNamed() {
        #expect(Languages.available == ["en", "pl", "de", "nl"])
        #expect(Languages.choice(explicit: "pl", environment: [:]) == Languages.Choice(language: "pl", unknown: nil))
        #expect(Languages.choice(explicit: "fr", environment: [:]) == Languages.Choice(language: "en", unknown: "fr"))
        #expect(Languages.choice(explicit: nil, environment: ["PULSE_LANG": "xx", "LANG": "de_DE.UTF-8"]) == Languages.Choice(language: "de", unknown: "xx"))
        // The system's own language may be one we lack: no line for that.
        #expect(Languages.choice(explicit: nil, environment: ["LANG": "fr_FR.UTF-8"]) == Languages.Choice(language: "en", unknown: nil))
    }
}

/// The catalogues in use: Polish plurals in real messages, a home's own file, the choice
/// per member and per machine, and the words of notifications and conflicts.
@Suite struct LanguageCatalogueTests {
    let dir: TemporaryDirectory
    init() throws { dir = try TemporaryDirectory() }

    @Test func polishCountsPeanutsInTheRefusalsAsAPoleDoes() throws {
        let polish = try #require(MessageCatalogue.builtIn("pl"))
        func peanuts(_ n: Int) -> String {
            Refusal(.notEnoughPeanuts, ["kid": "Ola", "balance": JSONValue(n), "reward": "Lody", "cost": 30]).message(polish)
        }
        #expect(peanuts(1).contains("1 orzeszek"), "\(peanuts(1))")
        #expect(peanuts(2).contains("2 orzeszki"), "\(peanuts(2))")
        #expect(peanuts(5).contains("5 orzeszków"), "\(peanuts(5))")
        #expect(peanuts(22).contains("22 orzeszki") && peanuts(25).contains("25 orzeszków") && peanuts(112).contains("112 orzeszków"))
    }

    @Test func everyBuiltInLanguageHasEveryEnglishKey() throws {
        let english = MessageCatalogue.english
        for language in Languages.builtIn {
            let catalogue = try #require(MessageCatalogue.builtIn(language))
            let missing = english.keys.filter { catalogue.messages[$0] == nil }
            #expect(missing.isEmpty, "\(language) lacks \(missing.sorted().prefix(10))")
        }
    }

    @Test func aHomeFileCorrectsWordsOrAddsALanguageAndABrokenOneIsNamed() throws {
        let home = HouseholdHome(directory: dir.url)
        let own = dir.url.appendingPathComponent("messages-pl.json")
        try Data(#"{"refusal.wrong_pin": "zły PIN, spróbuj jeszcze raz"}"#.utf8).write(to: own)
        let polish = try MessageCatalogue.load("pl", home: home)
        #expect(polish.text("refusal.wrong_pin") == "zły PIN, spróbuj jeszcze raz")
        #expect(polish.text("refusal.invalid_pin") == MessageCatalogue.builtIn("pl")!.text("refusal.invalid_pin"))

        // A language of the family's own: offered, and English where it says nothing.
        try Data(#"{"refusal.wrong_pin": "fel PIN"}"#.utf8).write(to: dir.url.appendingPathComponent("messages-sv.json"))
        #expect(MessageCatalogue.languages(home: home) == ["en", "pl", "de", "nl", "sv"])
        let swedish = try MessageCatalogue.load("sv", home: home)
        #expect(swedish.text("refusal.wrong_pin") == "fel PIN" && swedish.text("refusal.invalid_pin") == "a PIN is exactly 4 digits")

        for (broken, problem) in [
            ("{not json", "not a JSON object"), (#"{"refusal.wrong_pin": 3}"#, "not a JSON object"),
            (#"{"no.such.key": "x"}"#, "no message of House Pulse"), (#"{"refusal.wrong_pin": "{x"}"#, "do not balance"),
        ] {
            try Data(broken.utf8).write(to: own)
            do {
                _ = try MessageCatalogue.load("pl", home: home)
                Issue.record("\(broken) was taken")
            } catch {
                #expect(error.refusal.code == .messagesInvalid)
                #expect(error.description.contains(own.path) && error.description.contains(problem), "\(error)")
            }
        }
    }

    @Test func theMachinesChoiceWinsOverTheMembersWhichFollowsThemEverywhere() throws {
        let a = try Household.create(HouseholdHome(directory: dir.url.appendingPathComponent("a")), name: nil, members: ["Anna", "Tom"])
        // The first member is this computer's: nothing chosen yet.
        #expect(try a.languageChoice() == LanguageChoice(machine: nil, member: nil, memberName: "Anna", available: Languages.builtIn))
        #expect(try a.setLanguage(scope: "member", language: "pl").chosen == "pl")
        #expect(try a.members().first { $0.name == "Anna" }?.language == "pl")
        #expect(try a.setLanguage(scope: "machine", language: "DE").chosen == "de")
        #expect(try a.setLanguage(scope: "machine", language: nil).chosen == "pl")
        do {
            _ = try a.setLanguage(scope: "machine", language: "fr")
            Issue.record("fr was taken")
        } catch {
            #expect((error as? HouseholdError)?.refusal.code == .unknownLanguage)
        }
        #expect(try a.languageChoice().machine == nil)
    }

    @Test func aNotificationIsInTheReadersWordsWithTheReadersPlural() throws {
        func added(_ title: String) -> HouseholdEvent {
            HouseholdEvent(type: .shoppingAdded, entity: "shopping_item", row: title, title: title, author: "m-tom", authorName: "Tom", time: 1)
        }
        let polish = try #require(MessageCatalogue.builtIn("pl"))
        let three = NotificationBatcher.notification(id: 1, replaces: nil, group: .shopping, events: ["Mleko", "Jajka", "Chleb"].map(added), words: polish)
        let five = NotificationBatcher.notification(id: 2, replaces: nil, group: .shopping, events: (1...5).map { added("i\($0)") }, words: polish)
        #expect(three.summary != NotificationBatcher.notification(id: 1, replaces: nil, group: .shopping, events: ["a", "b", "c"].map(added)).summary)
        #expect(three.summary.contains("3") && five.summary.contains("5"))
        #expect(three.summary.replacing("3", with: "") != five.summary.replacing("5", with: ""), "few and many differ: \(three.summary) / \(five.summary)")
        #expect(!three.body.contains(" and ") && three.body.contains("Tom"), "\(three.body)")

        // A kid's reward from the built-in catalogue: in the reader's words; the family's own as written.
        var redeemed = HouseholdEvent(type: .kidRedeemed, entity: "ledger_entry", row: "e1", title: "Ice cream", author: "m-tom", time: 1)
        redeemed.titleKey = "catalogue.reward_001"
        let reward = NotificationBatcher.notification(id: 3, replaces: nil, group: .kids, events: [redeemed], words: polish)
        #expect(reward.summary.contains(polish.text("catalogue.reward_001")) && !reward.summary.contains("Ice cream"), "\(reward.summary)")
        redeemed.titleKey = nil
        #expect(NotificationBatcher.notification(id: 4, replaces: nil, group: .kids, events: [redeemed], words: polish).summary.contains("Ice cream"))
    }

    @Test func aBuiltInItemsTitleKeyHoldsOnlyWhileItsTitleIsTheBuiltInOne() throws {
        let builtIn = try Catalogue.builtIn().items[0]
        #expect(Catalogue.titleKey(id: builtIn.id, title: builtIn.title) == "catalogue.\(builtIn.id)")
        #expect(Catalogue.titleKey(id: builtIn.id, title: "Our own words") == nil)
        #expect(Catalogue.titleKey(id: "own-123", title: builtIn.title) == nil)
        #expect(Catalogue.titleKey(id: nil, title: builtIn.title) == nil)
    }
}
