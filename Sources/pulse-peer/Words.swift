import FoundationEssentials
import PeerSync
import Synchronization

/// The command line's words: the catalogue of the reader's language (`--lang`,
/// `PULSE_LANG`, then `LANGUAGE`, `LC_ALL`, `LC_MESSAGES`, `LANG`; docs/LANGUAGES.md),
/// chosen once per run when the options are read. `--json` and the APIs stay
/// language-neutral; `--help` is English.
enum Words {
    private static let chosen = Mutex<MessageCatalogue?>(nil)

    /// The words in use: chosen by ``choose(lang:home:)``, else the environment's.
    static var current: MessageCatalogue {
        chosen.withLock { words in
            if let words { return words }
            let language = Languages.forCommandLine(explicit: nil, environment: ProcessInfo.processInfo.environment)
            let built = MessageCatalogue.builtIn(language) ?? .english
            words = built
            return built
        }
    }

    /// Chooses the language for this run; an explicit choice that names no language, or a
    /// broken message file in the home, is said in one line on standard error (then English).
    static func choose(lang: String?, home: HouseholdHome?) {
        let available = MessageCatalogue.languages(home: home)
        let choice = Languages.choice(explicit: lang, environment: ProcessInfo.processInfo.environment, available: available)
        var words: MessageCatalogue
        do { words = try MessageCatalogue.load(choice.language, home: home) } catch {
            Output.toStderr("pulse-peer: " + Refusal(error).cliMessage(.english) + "\n")
            words = .english
        }
        if let unknown = choice.unknown {
            Output.toStderr(
                "pulse-peer: "
                    + words.text("cli.language_unknown", ["language": .string(String(unknown.prefix(40))), "available": JSONValue(available)])
                    + "\n")
        }
        chosen.withLock { $0 = words }
    }

    /// Chooses the language from the raw arguments (`--lang`, `--home`), for what is said
    /// before they are parsed (a word that is no command).
    static func chooseEarly(_ arguments: [String]) {
        func value(_ option: String) -> String? {
            for (index, argument) in arguments.enumerated() {
                if argument == option, index + 1 < arguments.count { return arguments[index + 1] }
                if argument.hasPrefix(option + "=") { return String(argument.dropFirst(option.count + 1)) }
            }
            return nil
        }
        let home = value("--home").flatMap { $0.allSatisfy(\.isWhitespace) ? nil : $0 }
        choose(lang: value("--lang"), home: HouseholdHome.resolve(home))
    }
}

/// The message `key` in the reader's language.
func say(_ key: String, _ params: [String: JSONValue] = [:]) -> String { Words.current.text(key, params) }

/// The message `key` when the catalogue has it, else `fallback` (a value with no word of its own).
func say(_ key: String, or fallback: String, _ params: [String: JSONValue] = [:]) -> String {
    Words.current.has(key) ? Words.current.text(key, params) : fallback
}
