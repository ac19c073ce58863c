import Foundation
import Testing

/// Phones from the command line: off until turned on, bad input refused in words, and a second
/// computer serving phones under the first computer's CA.
@Suite(.serialized) struct PhoneServiceCLITests: TwoMachineFixture {
    let scratch: Scratch
    init() throws { scratch = try Scratch() }

    /// `pulse-peer phones` (issue 42): off until turned on, through the running agent; bad
    /// input is refused in words and changes nothing; with no agent, it says to start one.
    @Test func phonesAreOffUntilTurnedOnAndBadInputIsRefusedInWords() throws {
        let home = try scratch.household("phones")[0]
        let noAgent = try PulsePeer.run(["phones", "--home", home.path])
        #expect(noAgent.status != 0 && noAgent.stderr.contains("start it: pulse-peer run"), "\(noAgent.stderr)")
        let agent = try AgentProcess(home: home.path)
        defer { _ = agent.stop() }
        #expect(try home.run(["phones"]).stdout.contains("Phones: off"))
        let export = try home.export()
        for (args, message) in [
            (["phones", "add", "Anna's phone"], "phones are off on this computer"),
            (["phones", "on", "--port", "80"], "a port for phones is a number from 1024 to 65535"),
            (["phones", "approve", "0123456789abcdef"], "no phone is waiting to be added as 0123456789abcdef"),
            (["phones", "remove", "nope"], "no phone of the household is nope"),
        ] {
            let result = try PulsePeer.run(args + ["--home", home.path])
            #expect(result.status != 0, "\(args) should fail")
            #expect(result.stderr.contains(message), "\(args): \(result.stderr)")
        }
        #expect(try home.export() == export)
        let on = try home.run(["phones", "on", "--port", "0", "--json"]).stdout
        #expect(on.contains(#""on" : true"#) && on.contains("fingerprint"), "\(on)")
        for (args, message) in [
            (["phones", "add", " "], "may not be empty"),
            (["phones", "add", "x", "--member", "Zed"], "Zed"),
            (["phones", "add", "x", "--host", "bank.example.com"], "is not one of this computer's home-network names or addresses"),
        ] {
            let result = try PulsePeer.run(args + ["--home", home.path])
            #expect(result.status != 0, "\(args) should fail")
            #expect(result.stderr.contains(message), "\(args): \(result.stderr)")
        }
        let off = try home.run(["phones", "off"]).stdout
        #expect(off.contains("Phones: off"))
    }

    /// One household CA (decision 0014): the first computer to turn phones on keeps the root;
    /// the second waits for it to sign (said in words, the choice kept), then serves phones with
    /// a certificate a phone that installed the first computer's CA trusts — and never holds
    /// the root's key.
    @Test func theSecondComputerServesPhonesUnderTheFirstComputersCA() throws {
        let (a, b, agentA, agentB) = try pair()
        defer {
            _ = agentA.stop()
            _ = agentB.stop()
        }
        let onA = try json(try a.run(["phones", "on", "--port", "0", "--json"]).stdout) as? [String: Any] ?? [:]
        let fingerprint = try #require(onA["fingerprint"] as? String)
        try synced(a, b)
        // B's first answer may already be the served state (A signed quickly) or the wait, in words.
        let state = try servingPhones(b)
        #expect(state["on"] as? Bool == true && state["fingerprint"] as? String == fingerprint, "\(state)")
        let phonesDirectory = URL(fileURLWithPath: b.path).appendingPathComponent("phones")
        #expect(!FileManager.default.fileExists(atPath: phonesDirectory.appendingPathComponent("root-key.pem").path))
        // A TLS client trusting only A's root accepts B's certificate for B's name.
        let rootA = URL(fileURLWithPath: a.path).appendingPathComponent("phones/root.pem").path
        let host = try #require((state["hosts"] as? [String])?.first) // the `.local` name (the links' default)
        #expect(host.hasSuffix(".local"), "\(state)")
        let port = try #require(state["port"] as? Int)
        let check = try Shell.run([
            "sh", "-c",
            "openssl s_client -connect 127.0.0.1:\(port) -servername \(host) -verify_hostname \(host) -CAfile \(rootA) "
                + "-verify_return_error -brief </dev/null 2>&1",
        ])
        #expect(check.status == 0 && check.stdout.contains("Verification: OK"), "\(check.stdout)")
    }
}
