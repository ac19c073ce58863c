import FoundationEssentials
import Logging
import PulseNotify
import PulseSystem

/// A click on one of our desktop notifications opens the page on the tab of what it told,
/// signed in: a fresh sign-in link (once, two minutes, as `pulse-peer open` makes) with the
/// tab, handed to `xdg-open` detached (the browser outlives nothing of ours and holds none of
/// our descriptors). An agent of a systemd user unit started at login, before the desktop told
/// the user manager where its display is: the display is asked of the manager at each click.
enum PageOpener {
    /// Clicks closer together than this open the page once (a double click, a replayed burst).
    static let spacing = Duration.seconds(1)

    static func openOnClicks(_ clicks: AsyncStream<NotificationGroup>, context: PeerAgent.Context) async {
        var last: ContinuousClock.Instant?
        for await group in clicks {
            if let last, ContinuousClock.now - last < spacing { continue }
            last = .now
            guard let url = context.frontEnds.url else {
                context.logger.notice(
                    "a notification was clicked, but no page serves",
                    metadata: ["reason": "\(context.frontEnds.problem ?? "off (--web off)")"])
                continue
            }
            // The link is a secret until used: never logged.
            let link = "\(url)/login?token=\(context.logins.issue())&tab=\(group.tab)"
            // Both block for a moment (systemctl, setsid): off the tasks' threads.
            let opened = await (try? onDispatchThread { Subprocess.detach("env", desktopEnvironment() + ["xdg-open", link]) })
            switch opened {
            case .success?: context.logger.info("a notification was clicked: the page opens", metadata: ["tab": "\(group.tab)"])
            case let .failure(error)?: context.logger.notice("cannot open the page", metadata: ["reason": "\(error)"])
            case nil: break
            }
        }
    }

    /// What a browser needs of the graphical session, as the user's systemd manager knows it now
    /// (`systemctl --user show-environment`), when this agent runs under it; else nothing (the
    /// agent's own environment is the session's).
    static let sessionKeys: Set<String> = [
        "DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "XDG_CURRENT_DESKTOP", "XDG_SESSION_TYPE", "DESKTOP_SESSION", "BROWSER",
    ]

    static func desktopEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        guard environment["INVOCATION_ID"] != nil || environment["MANAGERPID"] != nil,
            let (ended, output) = Subprocess.run("systemctl", ["--user", "show-environment"]), ended == .exited(0)
        else { return [] }
        return sessionAssignments(output)
    }

    /// The `KEY=value` lines of ``sessionKeys`` (a value systemd had to quote is left out).
    static func sessionAssignments(_ output: String) -> [String] {
        output.split(separator: "\n").compactMap { line in
            guard let equals = line.firstIndex(of: "="), sessionKeys.contains(String(line[..<equals])),
                !line[line.index(after: equals)...].hasPrefix("$'")
            else { return nil }
            return String(line)
        }
    }
}
