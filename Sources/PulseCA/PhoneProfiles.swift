import Crypto
import FoundationEssentials
import PulseModel
import SwiftASN1
import X509

/// What a phone downloads to trust the household's root (issue 42, step one of pairing):
/// an unsigned iOS configuration profile with one `com.apple.security.root` payload (Safari
/// → Settings → Profile Downloaded → Install, then Certificate Trust Settings → full trust),
/// and the root as DER for Android (Settings → Security → Install a certificate → CA
/// certificate). Both carry the certificate only, never a key.
public enum PhoneProfiles {
    /// The root as DER (`.cer`/`.crt`, `application/x-x509-ca-cert`).
    public static func der(_ root: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(root)
        return serializer.serializedBytes
    }

    /// The iOS profile (`application/x-apple-aspen-config`). Its identifiers and UUIDs are
    /// derived from the household and the root's key: downloading it again gives the same
    /// profile (iOS replaces, not duplicates), and a new root gives a new one.
    public static func mobileConfig(root: Certificate, household: String, householdID: String) throws -> String {
        let fingerprint = try HouseholdCA.fingerprint(root)
        let identifier = "local.house-pulse.\(Self.identifierPart(householdID))"
        let certificate = Data(try der(root)).base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        let name = household.markupEscaped
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
              <key>PayloadContent</key>
              <array>
                <dict>
                  <key>PayloadCertificateFileName</key><string>house-pulse-ca.cer</string>
                  <key>PayloadContent</key>
                  <data>
            \(certificate)
                  </data>
                  <key>PayloadDescription</key><string>Lets this phone open House Pulse on the home network without warnings.</string>
                  <key>PayloadDisplayName</key><string>House Pulse — \(name)</string>
                  <key>PayloadIdentifier</key><string>\(identifier).ca</string>
                  <key>PayloadType</key><string>com.apple.security.root</string>
                  <key>PayloadUUID</key><string>\(uuid("certificate", householdID, fingerprint))</string>
                  <key>PayloadVersion</key><integer>1</integer>
                </dict>
              </array>
              <key>PayloadDescription</key><string>The household's certificate for House Pulse (only .local names and home addresses).</string>
              <key>PayloadDisplayName</key><string>House Pulse — \(name)</string>
              <key>PayloadIdentifier</key><string>\(identifier)</string>
              <key>PayloadRemovalDisallowed</key><false/>
              <key>PayloadType</key><string>Configuration</string>
              <key>PayloadUUID</key><string>\(uuid("profile", householdID, fingerprint))</string>
              <key>PayloadVersion</key><integer>1</integer>
            </dict>
            </plist>

            """
    }

    /// A stable UUID-shaped identifier (not a secret: a name for iOS to recognise the
    /// profile by), from SHA-256 of its parts, with the version 8 / RFC 4122 variant bits.
    static func uuid(_ parts: String...) -> String {
        var bytes = Array(SHA256.hash(data: Array(parts.joined(separator: "\u{0}").utf8)).prefix(16))
        bytes[6] = (bytes[6] & 0x0F) | 0x80
        bytes[8] = (bytes[8] & 0x3F) | 0x80
        let digits = Array("0123456789ABCDEF")
        let hex = bytes.map { String([digits[Int($0 >> 4)], digits[Int($0 & 15)]]) }.joined()
        let cut = [8, 4, 4, 4, 12]
        var parts: [String] = []
        var index = hex.startIndex
        for length in cut {
            let end = hex.index(index, offsetBy: length)
            parts.append(String(hex[index..<end]))
            index = end
        }
        return parts.joined(separator: "-")
    }

    /// A reverse-DNS part from the household id: letters, digits and hyphens only.
    static func identifierPart(_ text: String) -> String {
        String(text.lowercased().filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
    }

}
