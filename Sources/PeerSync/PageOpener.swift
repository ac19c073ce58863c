import Logging
import PulseNotify
import PulseSystem

/// A click on one of our desktop notifications opens the page on the tab of what it told,
/// signed in: a fresh sign-in link (once, two minutes, as `pulse-peer open` makes) with the
/// tab, handed to `xdg-open` in the agent's session, detached (the browser outlives nothing
/// of ours and holds none of our descriptors).
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
            switch Subprocess.detach("xdg-open", [link]) {
            case .success: context.logger.info("a notification was clicked: the page opens", metadata: ["tab": "\(group.tab)"])
            case let .failure(error): context.logger.notice("cannot open the page", metadata: ["reason": "\(error)"])
            }
        }
    }
}
