import PulseModel

/// One item as a person typed it in rapid entry: "2 milk", "500 g flour", "1,5 l mleka",
/// "3 Dosen Tomaten", "2x eggs" — an amount first, then the name (issue 57). Pure, table-tested
/// (ShoppingEntryTests); the CLI's `shop add`, the page's and the phone's rapid entry all reach it
/// through `shop.add`, so every front end reads a line the same way.
///
/// **The rule.** A line starts with an amount when it starts with a number followed by a space
/// (or by `x`/`×` and a space, or by a unit written against it: "500g"), then optionally a unit
/// word and a space, and what is left holds a letter. The number is digits with an optional
/// decimal part ("1.5", "1,5"), a fraction ("1/2") or a vulgar fraction ("½", "1½"). A bare count
/// (no unit) is 1–999 and not 0: "1984 book" and "0 milk" stay names. Anything else is a name as
/// typed, so a name that merely starts with a digit keeps it: "7up", "100% juice", "3-in-1
/// coffee", "4x4 tyres". A unit word is taken only with a name after it ("2 bags" is two of
/// "bags"). The units are those of every language we speak at once (a family's languages mix;
/// the words do not collide with a first word of a name often enough to matter — "7 Up" with a
/// space is read as seven of "Up": write it as the can does). The amount is kept as typed, its
/// spaces made single ("500 g"; "2x" is "2").
public struct ShoppingEntry: Sendable, Equatable {
    public var name: String
    public var quantity: String?
    /// Never from a line: given beside it (the CLI's `--note`, the API's `note`).
    public var note: String?

    public init(name: String, quantity: String? = nil, note: String? = nil) {
        self.name = name
        self.quantity = quantity
        self.note = note
    }

    /// The longest quantity and note (the schema's bounds, `shopping_item`).
    public static let quantityLimit = 40
    public static let noteLimit = 200

    /// This entry with its name, quantity and note checked (trimmed; a blank quantity or note is none).
    func checked() throws -> ShoppingEntry {
        ShoppingEntry(
            name: try Validation.name(name, what: "item_name", max: 200), quantity: try quantity.flatMap(Self.checkedQuantity),
            note: try note.flatMap(Self.checkedNote))
    }

    /// A quantity as stored: trimmed, within bounds; blank is none.
    static func checkedQuantity(_ text: String) throws -> String? {
        text.trimmed.isEmpty ? nil : try Validation.name(text, what: "quantity", max: quantityLimit)
    }

    static func checkedNote(_ text: String) throws -> String? {
        text.trimmed.isEmpty ? nil : try Validation.name(text, what: "item_note", max: noteLimit)
    }

    /// The fields an item made or brought back by this entry writes (those it gives).
    var fields: [String: FieldValue] {
        var fields: [String: FieldValue] = [:]
        if let quantity { fields["quantity"] = .text(quantity) }
        if let note { fields["note"] = .text(note) }
        return fields
    }

    public static func parse(_ line: String) -> ShoppingEntry {
        let text = line.trimmed
        let whole = ShoppingEntry(name: text)
        let characters = Array(text)
        var index = 0
        guard let number = Self.number(characters, &index) else { return whole }
        // Glued to the number: `x`/`×` (a count), or a unit ("500g").
        var glued = ""
        while index < characters.count, characters[index].isLetter || characters[index] == "×" {
            glued.append(characters[index])
            index += 1
        }
        guard index < characters.count, characters[index].isWhitespace else { return whole }
        let afterNumber = Self.skipSpaces(characters, index)
        var times = Self.isTimes(glued)
        var unit: String?
        var nameStart = afterNumber
        if !glued.isEmpty, !times {
            guard Self.isUnit(glued) else { return whole }
            unit = glued
        } else if glued.isEmpty, let (word, end) = Self.word(characters, afterNumber), end < characters.count,
            characters[end].isWhitespace, Self.isTimes(word) || Self.isUnit(word)
        {
            // A unit word (or `x`) after the space, when a name follows it ("of" after a unit is
            // English's: "2 bottles of wine").
            times = Self.isTimes(word)
            unit = times ? nil : word
            nameStart = Self.skipSpaces(characters, end)
            if !times, let (of, after) = Self.word(characters, nameStart), of.lowercased() == "of", after < characters.count,
                characters[after].isWhitespace
            {
                nameStart = Self.skipSpaces(characters, after)
            }
        }
        let rest = String(characters[nameStart...])
        guard rest.contains(where: \.isLetter) else {
            // "2 bags": the packaging word was the name ("500 g" is no item: a line as typed).
            let bare = String(characters[afterNumber...])
            guard unit != nil, glued.isEmpty, Self.isCount(number), bare.contains(where: \.isLetter), !Self.measures.contains(bare.lowercased())
            else { return whole }
            return ShoppingEntry(name: bare, quantity: number)
        }
        if let unit { return ShoppingEntry(name: rest, quantity: "\(number) \(unit)") }
        guard times || Self.isCount(number), !Self.measures.contains(rest.lowercased()) else { return whole }
        return ShoppingEntry(name: rest, quantity: number)
    }

    /// A count on its own: a whole 1–999, or a decimal or fraction below 1000 ("1984 book" and
    /// "0 milk" are names).
    private static func isCount(_ number: String) -> Bool {
        let whole = number.prefix { $0.isASCIIDigit }
        guard whole.count <= 3 else { return false }
        if whole.count == number.count { return Int(whole).map { $0 > 0 } ?? false }
        return true
    }

    private static func isTimes(_ word: String) -> Bool { word == "x" || word == "X" || word == "×" }

    /// The number at `index` (moved past it), as typed.
    private static func number(_ characters: [Character], _ index: inout Int) -> String? {
        var text = ""
        var position = index
        while position < characters.count, characters[position].isASCIIDigit {
            text.append(characters[position])
            position += 1
        }
        if !text.isEmpty, position + 1 < characters.count, [".", ",", "/"].contains(characters[position]), characters[position + 1].isASCIIDigit {
            text.append(characters[position])
            position += 1
            while position < characters.count, characters[position].isASCIIDigit {
                text.append(characters[position])
                position += 1
            }
        }
        if position < characters.count, vulgarFractions.contains(characters[position]) {
            text.append(characters[position])
            position += 1
        }
        guard !text.isEmpty, text.count <= 8 else { return nil }
        index = position
        return text
    }

    private static func skipSpaces(_ characters: [Character], _ index: Int) -> Int {
        var position = index
        while position < characters.count, characters[position].isWhitespace { position += 1 }
        return position
    }

    /// The word at `index` (letters, then an optional abbreviation's dot; or `×`) and where it ends.
    private static func word(_ characters: [Character], _ index: Int) -> (String, Int)? {
        if index < characters.count, characters[index] == "×" { return ("×", index + 1) }
        var position = index
        var word = ""
        while position < characters.count, characters[position].isLetter {
            word.append(characters[position])
            position += 1
        }
        if !word.isEmpty, position < characters.count, characters[position] == "." {
            word.append(".")
            position += 1
        }
        return word.isEmpty ? nil : (word, position)
    }

    private static func isUnit(_ word: String) -> Bool {
        let lowered = word.lowercased()
        return units.contains(lowered.hasSuffix(".") ? String(lowered.dropLast()) : lowered)
    }

    private static let vulgarFractions: Set<Character> = ["½", "⅓", "⅔", "¼", "¾", "⅕", "⅛"]

    /// The measures: a line of a number and one of these alone ("500 g") names no item.
    static let measures: Set<String> = ["g", "kg", "mg", "dag", "dkg", "l", "ml", "cl", "dl", "lb", "lbs", "oz", "gr"]

    /// Units and packagings, lower case, without an abbreviation's dot: measures, then English,
    /// Polish, German and Dutch words (singular and plural forms people type).
    static let units: Set<String> = measures.union([
        // English
        "pc", "pcs", "piece", "pieces", "pack", "packs", "pk", "packet", "packets", "bottle", "bottles", "can", "cans", "jar", "jars",
        "box", "boxes", "bag", "bags", "bunch", "bunches", "dozen", "loaf", "loaves", "tin", "tins", "roll", "rolls", "tub", "tubs",
        "carton", "cartons", "slice", "slices",
        // Polish
        "szt", "sztuka", "sztuki", "sztuk", "opak", "op", "opakowanie", "opakowania", "opakowań", "butelka", "butelki", "butelek",
        "puszka", "puszki", "puszek", "paczka", "paczki", "paczek", "słoik", "słoiki", "słoików", "kostka", "kostki", "kostek",
        "karton", "kartony", "kartonów", "pęczek", "pęczki", "pęczków", "bochenek", "bochenki", "bochenków", "worek", "worki", "worków",
        // German
        "stk", "stück", "pck", "pkg", "packung", "packungen", "flasche", "flaschen", "dose", "dosen", "glas", "gläser", "bund",
        "tüte", "tüten", "becher", "beutel", "kiste", "kisten", "laib", "rolle", "rollen", "schachtel", "schachteln",
        // Dutch
        "st", "stuk", "stuks", "pak", "pakken", "pakje", "pakjes", "fles", "flessen", "blik", "blikken", "pot", "potten", "zak",
        "zakken", "bos", "bossen", "doos", "dozen", "krat", "kratten", "rol", "rollen",
    ])
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
