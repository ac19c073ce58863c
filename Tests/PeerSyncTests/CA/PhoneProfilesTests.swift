import Crypto
import Foundation
import Testing
import X509
@testable import PulseCA

/// What a phone downloads to trust the household's root: the iOS profile parses as a property
/// list with one `com.apple.security.root` payload holding exactly the root (no key), stable
/// across downloads; the Android file is the root's DER.
@Suite struct PhoneProfilesTests {
    let key = P256.Signing.PrivateKey()
    let now = Date(timeIntervalSince1970: 1_795_600_000)

    func profile(_ text: String) throws -> [String: Any] {
        try #require(PropertyListSerialization.propertyList(from: Data(text.utf8), format: nil) as? [String: Any])
    }

    @Test func theIOSProfileInstallsExactlyTheRootAndNoKey() throws {
        let root = try HouseholdCA.root(key: key, household: "Smith & Sons <Home>", now: now)
        let text = try PhoneProfiles.mobileConfig(root: root, household: "Smith & Sons <Home>", householdID: "0A1B-Household")
        let outer = try profile(text)
        #expect(outer["PayloadType"] as? String == "Configuration" && outer["PayloadVersion"] as? Int == 1)
        #expect(outer["PayloadDisplayName"] as? String == "House Pulse — Smith & Sons <Home>")
        #expect(outer["PayloadIdentifier"] as? String == "local.house-pulse.0a1b-household")
        let payloads = try #require(outer["PayloadContent"] as? [[String: Any]])
        #expect(payloads.count == 1)
        let payload = payloads[0]
        #expect(payload["PayloadType"] as? String == "com.apple.security.root")
        let certificate = try #require(payload["PayloadContent"] as? Data)
        #expect(try [UInt8](certificate) == PhoneProfiles.der(root))
        #expect(try Certificate(derEncoded: [UInt8](certificate)) == root)
        #expect(!text.contains("PRIVATE KEY") && !text.contains("Identity"))
        for key in ["PayloadUUID"] {
            let value = try #require(payload[key] as? String)
            #expect(UUID(uuidString: value) != nil && value != outer[key] as? String)
        }
    }

    @Test func downloadingAgainGivesTheSameProfileIdentityAndANewRootANewOne() throws {
        let root = try HouseholdCA.root(key: key, household: "The Smiths", now: now)
        let again = try HouseholdCA.root(key: key, household: "The Smiths", now: now + 60) // another agent's copy
        let other = try HouseholdCA.root(key: P256.Signing.PrivateKey(), household: "The Smiths", now: now)
        func uuid(_ root: Certificate) throws -> String? {
            try profile(PhoneProfiles.mobileConfig(root: root, household: "The Smiths", householdID: "h1"))["PayloadUUID"] as? String
        }
        #expect(try uuid(root) == uuid(again))
        #expect(try uuid(root) != uuid(other))
    }

    @Test func theAndroidFileIsTheRootsDER() throws {
        let root = try HouseholdCA.root(key: key, household: "The Smiths", now: now)
        let der = try PhoneProfiles.der(root)
        #expect(try der.first == 0x30 && Certificate(derEncoded: der) == root)
    }
}
