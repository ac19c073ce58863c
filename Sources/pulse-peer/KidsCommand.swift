import ArgumentParser
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif
import PeerSync

/// The kids' ledger (Mindful Home): kids earn peanuts for keeping rules and doing chores,
/// and spend them on rewards; adults pick what the kids see, behind a 4-digit PIN.
struct KidsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "kids",
        abstract: "The kids' ledger: rules, chores and rewards from a catalogue; peanuts earned and spent.",
        discussion: """
            Kid actions: done, redeem, basket, history, goal, report. Adult actions (PIN): add, rename, remove, select, deselect, own, adjust, bonus,
            goal --redeem, approve, decline, approval on|off, rotate.
            The PIN is asked on the terminal (not echoed), or read from standard input with --pin-stdin.
            Examples:
              pulse-peer kids                       balances, and what each kid can do or redeem
              pulse-peer kids done Sam 2            Sam did item 2: peanuts earned
              pulse-peer kids catalogue; pulse-peer kids select 1 4 7   (adult)
            """,
        subcommands: [
            List.self, Add.self, Rename.self, Remove.self, CatalogueList.self, Select.self, Deselect.self, Own.self,
            Done.self, Redeem.self, Basket.self, History.self, Adjust.self, Bonus.self, Goal.self, Report.self, Reports.self, Approve.self,
            Decline.self, Approval.self, Rotate.self, PIN.self,
        ],
        defaultSubcommand: List.self
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The kids with their balances, what they can do (numbered for `done`) and the rewards (for `redeem`).")
        @OptionGroup var options: HomeOptions
        @Flag(help: "Print JSON.") var json = false

        struct Listing: Encodable {
            let kids: [Kid]
            let todo: [CatalogueItem]
            let rewards: [CatalogueItem]
        }

        func run() throws {
            let listing = try options.read { h in
                Listing(kids: try h.kids(), todo: try h.selectedItems().filter { $0.kind != .reward }, rewards: try h.selectedItems(.reward))
            }
            if json { return try Output.json(listing) }
            if listing.kids.isEmpty {
                print(say("cli.kids.none"))
            } else {
                print(say("cli.kids.heading", ["count": JSONValue(listing.kids.count)]))
                for (index, kid) in listing.kids.enumerated() {
                    print("\(String(index + 1).leftPadded(3))  \(kid.name)  \(peanutCount(kid.balance))")
                    if let goal = kid.goal { print("       " + goalLine(goal)) }
                }
            }
            print("\n" + say(listing.todo.isEmpty ? "cli.kids.no_todo" : "cli.kids.todo_heading"))
            for (index, item) in listing.todo.enumerated() { print(itemLine(index + 1, item)) }
            print("\n" + say(listing.rewards.isEmpty ? "cli.kids.no_rewards" : "cli.kids.rewards_heading"))
            for (index, item) in listing.rewards.enumerated() { print(itemLine(index + 1, item)) }
        }
    }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add a kid (adult).")
        @OptionGroup var options: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "The kid's name.") var name: String
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let kid = try options.write { try $0.addKid(name, pin: try pin.read(for: $0)) }
            if json { return try Output.json(kid) }
            print(say("cli.kids.added", ["name": .string(kid.name)]))
        }
    }

    struct Rename: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Rename a kid (adult).")
        @OptionGroup var options: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "The kid (number, name or id).") var kid: String
        @Argument(help: "The new name.") var newName: String
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let renamed = try options.write { try $0.renameKid(kid, to: newName, pin: try pin.read(for: $0)) }
            if json { return try Output.json(renamed) }
            print(say("cli.kids.renamed", ["name": .string(renamed.name)]))
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a kid from the lists (adult); their history is kept.")
        @OptionGroup var options: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "The kid (number, name or id).") var kid: String
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let removed = try options.write { try $0.removeKid(kid, pin: try pin.read(for: $0)) }
            if json { return try Output.json(removed) }
            print(say("cli.kids.removed", ["name": .string(removed.name)]))
        }
    }

    struct CatalogueList: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "catalogue", abstract: "The catalogue: rules, chores and rewards by category; ● marks what is selected.")
        @OptionGroup var options: HomeOptions
        @Option(help: "Only this kind: rule, chore or reward.") var kind: CatalogueItem.Kind?
        @Flag(help: "Only the selected items.") var selected = false
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let all = try options.read { try $0.catalogue() }
            let shown = all.enumerated().filter { (kind == nil || $0.element.kind == kind) && (!selected || $0.element.selected) }
            if json { return try Output.json(shown.map(\.element)) }
            var heading = ""
            for (index, item) in shown {
                // Rewards' categories have names of their own ("Treats", not "Security").
                let category = item.kind == .reward ? "reward." + item.category : item.category
                let title = say("cli.kids.catalogue.heading", ["kind": .string(item.kind.rawValue), "category": .string(category)])
                if title != heading {
                    print("\(heading.isEmpty ? "" : "\n")\(title)")
                    heading = title
                }
                print(
                    "\(String(index + 1).leftPadded(3)) \(item.selected ? "●" : "○") \(catalogueTitle(item))  \(peanutCount(item.peanuts))"
                        + (item.own ? "  " + say("cli.kids.catalogue.own") : ""))
            }
            if shown.isEmpty { print(say("cli.kids.catalogue.nothing")) }
        }
    }

    struct Select: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Select catalogue items (adult): the kids see them.")
        @OptionGroup var options: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "Items: numbers from `kids catalogue`, titles or ids.") var items: [String] = []
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let chosen = try options.write { try $0.selectCatalogueItems(items, pin: try pin.read(for: $0)) }
            if json { return try Output.json(chosen) }
            for item in chosen { print(say("cli.kids.selected", ["title": .string(catalogueTitle(item))])) }
        }
    }

    struct Deselect: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Deselect catalogue items (adult): the kids no longer see them.")
        @OptionGroup var options: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "Items: numbers from `kids catalogue`, titles or ids.") var items: [String] = []
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let chosen = try options.write { try $0.deselectCatalogueItems(items, pin: try pin.read(for: $0)) }
            if json { return try Output.json(chosen) }
            for item in chosen { print(say("cli.kids.deselected", ["title": .string(catalogueTitle(item))])) }
        }
    }

    struct Own: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add the family's own rule, chore or reward (adult); selected at once.")
        @OptionGroup var options: HomeOptions
        @OptionGroup var pin: PINOptions
        @Option(help: "rule, chore or reward.") var kind: String
        @Option(help: "security, respect or fun.") var category: String
        @Option(help: "Peanuts, 1–20.") var peanuts = 1
        @Argument(help: "The title.") var title: String
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let item = try options.write {
                try $0.addOwnCatalogueItem(kind: kind, title: title, peanuts: peanuts, category: category, pin: try pin.read(for: $0))
            }
            if json { return try Output.json(item) }
            let params: [String: JSONValue] = [
                "title": .string(catalogueTitle(item)), "kind": .string(item.kind.rawValue), "peanuts": JSONValue(item.peanuts),
            ]
            print(say("cli.kids.own_added", params))
        }
    }

    struct Done: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A kid kept a rule or did a chore: peanuts earned (once per kid, item and day).")
        @OptionGroup var options: HomeOptions
        @Argument(help: "The kid (number, name or id).") var kid: String
        @Argument(help: "The rule or chore (number from `kids`, title or id).") var item: String
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let (line, cheer) = try options.write { h in (try h.markDone(kid: kid, item: item), try h.settings().celebrations) }
            if json { return try Output.json(line) }
            let params: [String: JSONValue] = [
                "peanuts": JSONValue(line.peanuts), "title": .string(ledgerTitle(line)), "balance": JSONValue(line.balanceAfter),
            ]
            // "Great job!" only while this machine's celebrations are on (`settings celebrations off`).
            print(say(cheer ? "cli.kids.done" : "cli.kids.done_quiet", params))
        }
    }

    struct Redeem: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A kid spends peanuts on a reward (the balance must cover it).")
        @OptionGroup var options: HomeOptions
        @Argument(help: "The kid (number, name or id).") var kid: String
        @Argument(help: "The reward (number from `kids`, title or id).") var reward: String
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let (line, cheer) = try options.write { h in (try h.redeem(kid: kid, reward: reward), try h.settings().celebrations) }
            if json { return try Output.json(line) }
            let params: [String: JSONValue] = ["title": .string(ledgerTitle(line)), "balance": JSONValue(line.balanceAfter)]
            print(say(cheer ? "cli.kids.redeemed" : "cli.kids.redeemed_quiet", params))
        }
    }

    struct Basket: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A kid's basket of redeemed rewards; --remove hides one (no refund).")
        @OptionGroup var options: HomeOptions
        @Argument(help: "The kid (number, name or id).") var kid: String
        @Option(help: "Remove this reward from the basket (number, title or id); no refund.") var remove: String?
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            if let remove {
                let removed = try options.write { try $0.removeFromBasket(kid: kid, entry: remove) }
                if json { return try Output.json(removed) }
                return print(say("cli.kids.basket.removed", ["title": .string(ledgerTitle(removed))]))
            }
            let basket = try options.read { try $0.basket(kid: kid) }
            if json { return try Output.json(basket) }
            print(basket.isEmpty ? say("cli.kids.basket.empty") : say("cli.kids.basket.heading", ["count": JSONValue(basket.count)]))
            for (index, line) in basket.enumerated() {
                print("\(String(index + 1).leftPadded(3))  \(ledgerTitle(line))  \(peanutCount(line.peanuts))")
            }
        }
    }

    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "A kid's ledger, oldest first, with what was declined and why.")
        @OptionGroup var options: HomeOptions
        @Argument(help: "The kid (number, name or id).") var kid: String
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let lines = try options.read { try $0.ledger(kid: kid) }
            if json { return try Output.json(lines) }
            if lines.isEmpty { return print(say("cli.kids.history.empty")) }
            for line in lines {
                let sign = line.kind == "earn" ? "+" : "-"
                var text = "\(sign)\(line.peanuts)".leftPadded(5) + "  \(ledgerTitle(line))"
                if let day = line.day { text += "  (\(day))" }
                switch line.outcome {
                case "declined-overspend": text += "  " + say("cli.kids.history.declined_overspend")
                case "declined-repeat": text += "  " + say("cli.kids.history.declined_repeat")
                default: break
                }
                if line.hidden { text += "  " + say("cli.kids.history.hidden") }
                print(text + "  → \(line.balanceAfter)")
            }
        }
    }

    struct Adjust: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Correct a kid's balance (adult): --add N or --take N, with a reason.")
        @OptionGroup var options: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "The kid (number, name or id).") var kid: String
        @Option(help: "Peanuts to add.") var add: Int?
        @Option(help: "Peanuts to take away (never below zero).") var take: Int?
        @Option(help: "Why (shown in the history).") var reason: String
        @Flag(help: "Print JSON.") var json = false
        func validate() throws {
            guard (add == nil) != (take == nil) else { throw ValidationError(say("cli.kids.adjust.one_of")) }
            guard (1...1000).contains(add ?? take ?? 0) else { throw ValidationError(say("cli.kids.adjust.range")) }
        }
        func run() throws {
            let amount = add ?? -(take ?? 0)
            let line = try options.write { try $0.adjustKid(kid, peanuts: amount, reason: reason, pin: try pin.read(for: $0)) }
            if json { return try Output.json(line) }
            let params: [String: JSONValue] = [
                "title": .string(ledgerTitle(line)), "amount": .string("\(amount > 0 ? "+" : "")\(amount)"), "balance": JSONValue(line.balanceAfter),
            ]
            print(say("cli.kids.adjusted", params))
        }
    }

    struct Bonus: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A bonus for a chore or rule a kid did (adult): once per one done.",
            discussion: "Example: pulse-peer kids bonus Sam chore_001 2   (Sam's latest \"chore_001\" done: +2)")
        @OptionGroup var options: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "The kid (number, name or id).") var kid: String
        @Argument(help: "What was done: the item (its latest done), or the history entry's id.") var done: String
        @Argument(help: "Peanuts (1–100).") var peanuts: Int
        @Flag(help: "Print JSON.") var json = false
        func run() throws {
            let line = try options.write { try $0.giveBonus(kid: kid, for: done, peanuts: peanuts, pin: try pin.read(for: $0)) }
            if json { return try Output.json(line) }
            let params: [String: JSONValue] = [
                "title": .string(ledgerTitle(line)), "amount": .string("+\(line.peanuts)"), "balance": JSONValue(line.balanceAfter),
            ]
            print(say("cli.kids.adjusted", params))
        }
    }

    struct Goal: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "A kid's savings goal: a reward to save for, --cancel, or --redeem once reached (adult).",
            discussion: """
                The kid's balance, up to the reward's cost, is kept for it: other rewards only from what is beyond.
                Examples: pulse-peer kids goal Sam reward_006; pulse-peer kids goal Sam --redeem --pin-stdin
                """)
        @OptionGroup var options: HomeOptions
        @OptionGroup var pin: PINOptions
        @Argument(help: "The kid (number, name or id).") var kid: String
        @Argument(help: "The reward to save for (number, title or id).") var reward: String?
        @Flag(help: "Stop saving for it (nothing is lost).") var cancel = false
        @Flag(help: "Give the reward of a reached goal (adult).") var redeem = false
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard [reward != nil, cancel, redeem].filter({ $0 }).count <= 1 else { throw ValidationError(say("cli.kids.goal.one_of")) }
        }

        func run() throws {
            if redeem {
                let line = try options.write { try $0.redeemGoal(kid: kid, pin: try pin.read(for: $0)) }
                if json { return try Output.json(line) }
                return print(say("cli.kids.redeemed", ["title": .string(ledgerTitle(line)), "balance": JSONValue(line.balanceAfter)]))
            }
            if cancel {
                let goal = try options.write { try $0.cancelGoal(kid: kid) }
                if json { return try Output.json(goal) }
                return print(say("cli.kids.goal.cancelled", ["kid": .string(kid), "title": .string(goalTitle(goal))]))
            }
            if let reward {
                let goal = try options.write { try $0.setGoal(kid: kid, reward: reward) }
                if json { return try Output.json(goal) }
                print(say("cli.kids.goal.set", ["kid": .string(kid), "title": .string(goalTitle(goal)), "peanuts": JSONValue(goal.peanuts)]))
                return print("       " + goalLine(goal))
            }
            let found = try options.read { try $0.resolveKid(kid) }
            if json { return try Output.json(found.goal) }
            guard let goal = found.goal else { throw Refusal(.noGoal, ["kid": .string(found.name)]) }
            print(goalLine(goal))
        }
    }

    struct PIN: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "pin", abstract: "The adults' 4-digit PIN, one for the household: set it once, change it with the current one.",
            subcommands: [Status.self, Set.self, Change.self, Reset.self, Ok.self], defaultSubcommand: Status.self)

        struct Status: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Whether a PIN is set, and its last change no adult here has confirmed (every adult is told).")
            @OptionGroup var options: HomeOptions
            func run() throws {
                let state = try options.read { $0.kidsPINState() }
                print(say(state.set ? "cli.kids.pin.status_set" : "cli.kids.pin.status_unset"))
                if let change = state.change {
                    print(
                        say(
                            "cli.kids.pin.status_change",
                            [
                                "what": .string(change.kind), "machine": .string(change.machine ?? "?"),
                                "date": .string(Output.dateTime(milliseconds: change.time)),
                            ]))
                }
            }
        }

        struct Ok: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "Confirm, with the PIN as it is now, that its last change was a parent's (it is no longer shown here).")
            @OptionGroup var options: HomeOptions
            @Flag(help: "Read the PIN from standard input (one line) instead of a prompt.") var pinStdin = false
            func run() throws {
                _ = try options.openHousehold()
                let pin = try PINOptions.readSecret(say("cli.kids.pin.prompt_current") + " ", fromStdin: pinStdin)
                try options.write { try $0.acknowledgeKidsPINChange(pin: pin) }
                print(say("cli.kids.pin.confirmed"))
            }
        }

        struct Set: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Set the PIN (first time only).")
            @OptionGroup var options: HomeOptions
            @Flag(help: "Read the new PIN from standard input (one line) instead of a prompt.") var pinStdin = false
            func run() throws {
                _ = try options.openHousehold() // the home is checked before a PIN is asked
                let new = try PINOptions.readSecret(say("cli.kids.pin.prompt_new") + " ", fromStdin: pinStdin)
                if !pinStdin, try PINOptions.readSecret(say("cli.kids.pin.prompt_again") + " ", fromStdin: false) != new {
                    throw CLIError(message: say("cli.kids.pin.differ"))
                }
                try options.write { try $0.setKidsPIN(new) }
                print(say("cli.kids.pin.set"))
            }
        }

        struct Change: ParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Change the PIN (the current one first).")
            @OptionGroup var options: HomeOptions
            @Flag(help: "Read the current and the new PIN from standard input (two lines).") var pinStdin = false
            func run() throws {
                _ = try options.openHousehold() // the home is checked before a PIN is asked
                let current = try PINOptions.readSecret(say("cli.kids.pin.prompt_current") + " ", fromStdin: pinStdin)
                let new = try PINOptions.readSecret(say("cli.kids.pin.prompt_new") + " ", fromStdin: pinStdin)
                try options.write { try $0.changeKidsPIN(current: current, new: new) }
                print(say("cli.kids.pin.changed"))
            }
        }

        struct Reset: ParsableCommand {
            static let configuration = CommandConfiguration(
                abstract: "A forgotten PIN: ask here, confirm on another computer of the household.",
                discussion: """
                    Without --confirm: shows a 6-digit code (good for 24 hours). On another computer of the household,
                    once it has synced, `pulse-peer kids pin reset --confirm CODE` clears the PIN everywhere; then
                    an adult sets a new one with `pulse-peer kids pin set`. A reset asked on one computer cannot be
                    confirmed on the same one, so a child alone at one computer cannot clear the PIN.
                    """)
            @OptionGroup var options: HomeOptions
            @Option(help: "The code shown by `kids pin reset` on another computer.") var confirm: String?
            func run() throws {
                if let confirm {
                    try options.write { try $0.confirmKidsPINReset(code: confirm) }
                    print(say("cli.kids.pin.cleared"))
                } else {
                    let code = try options.write { try $0.requestKidsPINReset() }
                    print(say("cli.kids.pin.reset_code", ["code": .string(code)]))
                    print(say("cli.kids.pin.reset_confirm", ["code": .string(code)]))
                }
            }
        }
    }
}

/// How an adult action gets the PIN: a prompt on the terminal (not echoed), or a line of
/// standard input with `--pin-stdin`; never an argument (`ps` would show it).
struct PINOptions: ParsableArguments {
    @Flag(help: "Read the adults' PIN from standard input (one line) instead of a prompt.") var pinStdin = false

    /// The PIN, or nil when none is set on this machine (the household says how to set one).
    func read(for household: Household) throws -> String? {
        guard household.hasKidsPIN else { return nil }
        return try Self.readSecret(say("cli.kids.pin.prompt") + " ", fromStdin: pinStdin)
    }

    static func readSecret(_ prompt: String, fromStdin: Bool) throws -> String {
        if fromStdin {
            guard let line = readLine() else { throw CLIError(message: say("cli.kids.pin.stdin_empty")) }
            return line.filter { !$0.isWhitespace }
        }
        guard isatty(STDIN_FILENO) == 1 else {
            throw CLIError(message: say("cli.kids.pin.needs_terminal"))
        }
        var original = termios()
        tcgetattr(STDIN_FILENO, &original)
        var silent = original
        silent.c_lflag &= ~tcflag_t(ECHO)
        writeToStderr(prompt)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &silent)
        defer {
            tcsetattr(STDIN_FILENO, TCSAFLUSH, &original)
            writeToStderr("\n")
        }
        return (readLine() ?? "").filter { !$0.isWhitespace }
    }
}

extension CatalogueItem.Kind: ExpressibleByArgument {}

/// "2 peanuts", in the reader's language (Polish has three plural forms).
private func peanutCount(_ count: Int) -> String { say("cli.kids.peanuts", ["count": JSONValue(count)]) }

private func itemLine(_ number: Int, _ item: CatalogueItem) -> String {
    let line = "\(String(number).leftPadded(3))  \(catalogueTitle(item))  \(peanutCount(item.peanuts))"
    // A chore taking turns among kids: whose turn today is.
    guard let turn = item.turns?.first, let kid = turn.kid else { return line }
    return line + "  " + say("cli.kids.turn", ["kid": .string(kid)])
}

/// A catalogue item's title: in the reader's language while it is the built-in one.
func catalogueTitle(_ item: CatalogueItem) -> String { item.titleKey.map { say($0, or: item.title) } ?? item.title }

/// A goal's reward, in the reader's language while it is the built-in one.
func goalTitle(_ goal: KidGoal) -> String { goal.titleKey.map { say($0, or: goal.title) } ?? goal.title }

/// "saving for Bike: 12 of 20".
func goalLine(_ goal: KidGoal) -> String {
    say(
        "cli.kids.goal",
        ["title": .string(goalTitle(goal)), "saved": JSONValue(goal.saved), "peanuts": JSONValue(goal.peanuts), "reached": goal.reached ? "yes" : "no"])
}

/// A ledger line's title: a built-in item's in the reader's language, an adult's
/// adjustment as "Adjustment: REASON" in it, else the title the line was written with.
func ledgerTitle(_ line: LedgerLine) -> String {
    if let key = line.titleKey { return say(key, or: line.title) }
    if let title = line.bonusTitle {
        return say("kids.bonus", ["title": .string(line.bonusTitleKey.map { say($0, or: title) } ?? title)])
    }
    if let reason = line.reason { return say("kids.adjustment", ["reason": .string(reason)]) }
    return line.title
}

private func writeToStderr(_ text: String) {
    var bytes = Array(text.utf8)
    _ = write(STDERR_FILENO, &bytes, bytes.count)
}
