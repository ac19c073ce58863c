// The first run: the agent of a computer with no household serves this welcome (the
// session says `welcome`). Start a household (`welcome.start`: its name, the members, this
// computer's member first) or join one with the code "Add a computer" shows on another
// computer (`welcome.join`). Then the agent starts on the household and this page reloads.
import { call, request } from "./api.js";
import { $, $$, t, describe, translateDocument } from "./ui.js";

/** Shows the welcome instead of the tabs. */
export function showWelcome() {
  $$(".tab").forEach((tab) => { tab.hidden = true; });
  $$(".tabbar")[0].hidden = true;
  $("welcome").hidden = false;
  translateDocument($("welcome"));
  $("start-household").focus();
}

function progress(text, error = false) {
  const line = $("welcome-progress");
  line.hidden = !text;
  line.textContent = text || "";
  line.classList.toggle("error", error);
}

function busy(on) { $$("#welcome button").forEach((b) => { b.disabled = on; }); }

// The agent now runs on the household: wait for its page to answer with one, then reload.
async function whenHousehold() {
  const deadline = Date.now() + 30_000;
  let switched = false;
  while (Date.now() < deadline) {
    try {
      const session = await request("/api/session");
      if (!session.welcome) { location.reload(); return; }
      if (switched) { busy(false); progress(t("page.welcome.failed"), true); return; } // back to a welcome: it did not work
    } catch { switched = true; /* the agent is switching over: ask again */ }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  progress(t("page.welcome.slow"), true);
}

async function submit(method, params, working) {
  busy(true);
  progress(working);
  try {
    await call(method, params);
  } catch (error) {
    // Unreachable: the answer was lost while the agent switched to the household (or it
    // stopped): whether it worked is for the agent's next answer to say.
    if (error.code !== "unreachable") {
      busy(false);
      progress(describe(error), true);
      return;
    }
  }
  progress(t("page.welcome.opening"));
  await whenHousehold();
}

export function wireWelcome() {
  $("start-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const members = [$("start-me").value, ...$("start-others").value.split(",")].map((name) => name.trim()).filter(Boolean);
    const params = { household: $("start-household").value.trim(), members };
    if ($("start-computer").value.trim()) params.name = $("start-computer").value.trim();
    submit("welcome.start", params, t("page.welcome.starting"));
  });
  $("join-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const params = { code: $("join-code").value.trim(), member: $("join-me").value.trim() };
    if ($("join-computer").value.trim()) params.name = $("join-computer").value.trim();
    if ($("join-peer").value.trim()) params.peer = $("join-peer").value.trim();
    submit("welcome.join", params, t("page.welcome.joining"));
  });
}
