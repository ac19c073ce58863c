import FoundationEssentials
import PulseStore

/// A refusal a person can meet: a stable code and its parameters (docs/API.md, "Refusal
/// codes"). Code decides by ``code``, never by a sentence; sentences are rendered from the
/// code and the parameters by the message catalogue (`refusal.<code>`, and for the command
/// line `refusal.<code>.cli` where it says more, such as `--force`).
public struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable, Codable {
        // The household's home
        case householdExists = "household_exists", noHousehold = "no_household", homeIsFile = "home_is_file"
        case homeUnderFile = "home_under_file", storage
        // Names, dates and other values
        case empty, tooLong = "too_long", controlCharacters = "control_characters", invalidDate = "invalid_date"
        case reservedName = "reserved_name", duplicate, listedTwice = "listed_twice", invalidSecret = "invalid_secret"
        case invalidID = "invalid_id", invalidMachineID = "invalid_machine_id"
        // Finding a row by what people type
        case notFound = "not_found", noSuchPosition = "no_such_position", ambiguous
        // Members and settings
        case noMemberForMachine = "no_member_for_machine", unknownMember = "unknown_member", nothingToChange = "nothing_to_change"
        case noMemberForPhone = "no_member_for_phone"
        case lastMember = "last_member", invalidInitials = "invalid_initials", invalidColor = "invalid_color"
        case invalidAppearance = "invalid_appearance", invalidSwitch = "invalid_switch", unknownSetting = "unknown_setting"
        case windowOutOfRange = "window_out_of_range"
        // Tasks, backlog, repeating tasks
        case focusRule = "focus_rule", taskDeleted = "task_deleted", alreadyDone = "already_done", notDone = "not_done"
        case positionOutOfRange = "position_out_of_range", positionOutOfRangeIn = "position_out_of_range_in"
        case categoryNotEmpty = "category_not_empty", missingDestination = "missing_destination"
        case invalidWeekdays = "invalid_weekdays", invalidSchedule = "invalid_schedule"
        // Chores that rotate
        case rotationEmpty = "rotation_empty", rotationTooLong = "rotation_too_long", assigneeAndRotation = "assignee_and_rotation", noRotation = "no_rotation"
        case turnInThePast = "turn_in_the_past", turnTooFar = "turn_too_far", notATurn = "not_a_turn", samePerson = "same_person"
        case awayInThePast = "away_in_the_past", awayEndsBeforeItStarts = "away_ends_before_it_starts", awayTooLong = "away_too_long"
        case notAway = "not_away"
        // Shopping
        case nothingToAdd = "nothing_to_add", listAlreadyEmpty = "list_already_empty", noClearToUndo = "no_clear_to_undo"
        case undoWouldDuplicate = "undo_would_duplicate", nothingToUndo = "nothing_to_undo"
        case tooManyLists = "too_many_lists", firstList = "first_list", sameList = "same_list", listNotEmpty = "list_not_empty"
        case alreadyOnList = "already_on_list", invalidChoice = "invalid_choice", noSuchList = "no_such_list", listNameTaken = "list_name_taken"
        case notShopping = "not_shopping", changedMeanwhile = "changed_meanwhile"
        // The kids' ledger and its catalogue
        case alreadyEarnedToday = "already_earned_today", notEnoughPeanuts = "not_enough_peanuts", cannotTake = "cannot_take"
        case unknownKind = "unknown_kind", unknownCategory = "unknown_category", peanutsOutOfRange = "peanuts_out_of_range"
        case adjustmentOutOfRange = "adjustment_out_of_range", noItemsNamed = "no_items_named"
        case alreadySelected = "already_selected", notSelected = "not_selected"
        case bonusOutOfRange = "bonus_out_of_range", notEarned = "not_earned", alreadyRewarded = "already_rewarded"
        case approvalOff = "approval_off", alreadyReported = "already_reported", alreadyDecided = "already_decided"
        case needsApproval = "needs_approval", notYourTurn = "not_your_turn"
        case alreadyTheGoal = "already_the_goal", noGoal = "no_goal", goalNotReached = "goal_not_reached", keptForGoal = "kept_for_goal"
        case catalogueUnreadable = "catalogue_unreadable", catalogueInvalid = "catalogue_invalid"
        case messagesInvalid = "messages_invalid", unknownLanguage = "unknown_language"
        // The household's PIN
        case pinAlreadySet = "pin_already_set", notSyncedYet = "not_synced_yet", noPIN = "no_pin", pinNotSet = "pin_not_set"
        case pinRequired = "pin_required", pinLocked = "pin_locked", wrongPIN = "wrong_pin", wrongResetCode = "wrong_reset_code"
        case invalidPIN = "invalid_pin", noResetAsked = "no_reset_asked", resetOnThisMachine = "reset_on_this_machine"
        case resetExpired = "reset_expired"
        // Machines, pairing, backups
        case machineRemoved = "machine_removed", machineIDTooShort = "machine_id_too_short", cannotRemoveSelf = "cannot_remove_self"
        case alreadyRemoved = "already_removed", restoreSameHousehold = "restore_same_household"
        case restoreOtherHousehold = "restore_other_household"
        // The API itself
        case missingParameter = "missing_parameter", wrongType = "wrong_type", titleNotNull = "title_not_null"
        case invalidPool = "invalid_pool", invalidOrder = "invalid_order", unknownMethod = "unknown_method"
        // The agent's socket and page
        case badRequest = "bad_request", unknownOp = "unknown_op", unknownTopic = "unknown_topic", agentStopping = "agent_stopping"
        case timedOut = "timed_out", noWebPage = "no_web_page", inviteMinutes = "invite_minutes"
        case pairingCodeFormat = "pairing_code_format", pairingRefused = "pairing_refused", noInviter = "no_inviter"
        case pairingNoInvitation = "pairing_no_invitation", pairingExpired = "pairing_expired"
        case pairingExhausted = "pairing_exhausted", pairingUsed = "pairing_used"
        case peerAddress = "peer_address", welcomeBusy = "welcome_busy"
        case notSignedIn = "not_signed_in", wrongOrigin = "wrong_origin", missingToken = "missing_token"
        case methodNotAllowed = "method_not_allowed", notJSON = "not_json", noSuchPath = "no_such_path", failed
        // Phones (issue 42).
        case phonesPort = "phones_port", phonesCannotListen = "phones_cannot_listen", phonesOff = "phones_off"
        case phonesHost = "phones_host", noSuchRequest = "no_such_request", noSuchPhone = "no_such_phone"
        // Apps over CalDAV (issue 59).
        case noSuchAppPassword = "no_such_app_password", alreadyRevoked = "already_revoked", tooManyAppPasswords = "too_many_app_passwords"
        // The household CA (protocol 8).
        case phonesWaitingForCA = "phones_waiting_for_ca", invalidCertificate = "invalid_certificate"
        case caRequestChanged = "ca_request_changed", caMachineRemoved = "ca_machine_removed", noCARequest = "no_ca_request"
        case phoneURL = "phone_url"
        // A home written by a newer release (a `.deb` downgrade, a backup put back under an older one).
        case newerHome = "newer_home"
    }

    public let code: Code
    public let params: [String: JSONValue]

    public init(_ code: Code, _ params: [String: JSONValue] = [:]) {
        self.code = code
        self.params = params
    }

    /// Any error as a refusal: a refusal itself, a household error's, else `failed` with
    /// the error's own words (a database or file error: no household rule refused).
    public init(_ error: any Error) {
        switch error {
        case let refusal as Refusal: self = refusal
        case let error as HouseholdError: self = error.refusal
        case let StoreError.newerSchema(found, supported):
            self.init(.newerHome, ["found": .integer(Int64(found)), "supported": .integer(Int64(supported))])
        default: self.init(.failed, ["detail": .string("\(error)")])
        }
    }

    /// The English sentence for the command line.
    public var description: String { cliMessage() }

    /// The sentence for a page or an app (no command-line advice).
    public func message(_ catalogue: MessageCatalogue = .english) -> String {
        catalogue.text("refusal.\(code.rawValue)", params)
    }

    /// The sentence for the command line: its own wording where it has one.
    public func cliMessage(_ catalogue: MessageCatalogue = .english) -> String {
        let key = "refusal.\(code.rawValue)"
        return catalogue.text(catalogue.has(key + ".cli") ? key + ".cli" : key, params)
    }

    /// The command line's sentence for a refusal that came over the local API: rendered
    /// from its code here (the agent's English message for a code this build lacks).
    public static func cliMessage(of body: ErrorBody, _ catalogue: MessageCatalogue = .english) -> String {
        guard let code = Code(rawValue: body.code) else { return body.message }
        return Refusal(code, body.params).cliMessage(catalogue)
    }

    /// The error object of the APIs: `{"code", "params", "message"}`.
    public var body: ErrorBody { ErrorBody(code: code.rawValue, params: params, message: message()) }
}

/// A refusal on the wire (the local API, the page's API): what clients decide by is `code`;
/// `message` is English, for people and for older clients.
public struct ErrorBody: Sendable, Codable, Equatable, Error, CustomStringConvertible {
    public var code: String
    public var params: [String: JSONValue]
    public var message: String

    public init(code: String, params: [String: JSONValue] = [:], message: String) {
        self.code = code
        self.params = params
        self.message = message
    }

    public var description: String { message }

    public var json: JSONValue { .object(["code": .string(code), "params": .object(params), "message": .string(message)]) }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByArrayLiteral,
    ExpressibleByBooleanLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(_ value: Int) { self = .integer(Int64(value)) }
    public init(_ value: String) { self = .string(value) }
    public init(_ values: [String]) { self = .array(values.map { .string($0) }) }
}
