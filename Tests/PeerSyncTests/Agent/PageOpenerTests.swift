import Testing
@testable import PeerSync

struct PageOpenerTests {
    @Test func theBrowserGetsTheSessionsDisplayAsTheUserManagerKnowsItAndNothingElse() {
        let shown = """
            HOME=/home/ada
            LANG=pl_PL.UTF-8
            DISPLAY=:0
            WAYLAND_DISPLAY=wayland-0
            XAUTHORITY=/run/user/1000/.mutter-Xwaylandauth.X1
            XDG_CURRENT_DESKTOP=GNOME
            BROWSER=$'firefox\\nrm -rf ~'
            LD_PRELOAD=/tmp/evil.so
            DISPLAYX=:9
            """
        #expect(
            PageOpener.sessionAssignments(shown) == [
                "DISPLAY=:0", "WAYLAND_DISPLAY=wayland-0", "XAUTHORITY=/run/user/1000/.mutter-Xwaylandauth.X1",
                "XDG_CURRENT_DESKTOP=GNOME",
            ])
    }

    @Test func anAgentNotUnderSystemdAsksNoManager() {
        #expect(PageOpener.desktopEnvironment(["DISPLAY": ":0", "HOME": "/home/ada"]).isEmpty)
    }
}
