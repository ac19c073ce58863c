import Testing
@testable import PulseHousehold

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

    @Test func onlyEnglishIsAvailableUntilItsCataloguesAreComplete() {
        #expect(Languages.available == ["en"])
        #expect(Languages.forCommandLine(explicit: "pl", environment: [:]) == "en")
    }
}
