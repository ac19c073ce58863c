// "I'm going shopping" (issue 57): the button that starts and ends this reader's trip for the
// list shown, the line saying who is out shopping for it, and, for the shopper, the items added
// while they were out. When a trip is over (its end, its list done, its time limit) is the agent's
// rule: the page shows the trips `shop.trips` answers.
import { call } from "./api.js";
import { $, el, t, fail, toast, formatClock } from "./ui.js";
import { refresh } from "./page.js";
import { currentList, onList } from "./shoplists.js";

/** A hybrid clock reading (as `listed` and `started` are: the API writes integers beyond 2⁵³ as
 * exact decimal strings) in Unix milliseconds. */
const millis = (/** @type {number | string} */ reading) => Number(BigInt(reading) >> 16n);

/** Whether `listed` (an item's) is later than `since` (a trip's start): exact, as BigInts. */
export function listedSince(/** @type {number | string | undefined} */ listed, /** @type {number | string | null} */ since) {
  if (since === null || since === undefined || listed === undefined || listed === null) return false;
  try { return BigInt(listed) > BigInt(since); } catch { return false; }
}

/** The trips on the list shown. */
export function tripsHere(/** @type {Array<any>} */ trips) {
  return (trips || []).filter((trip) => (trip.list ?? null) === currentList());
}

/** When this reader's own trip on the list shown started (a hybrid clock reading), or null:
 * an item listed after it was added while they were out. */
export function outSince(/** @type {Array<any>} */ trips) {
  return tripsHere(trips).find((trip) => trip.mine)?.started ?? null;
}

export function renderTrip(/** @type {Array<any>} */ trips) {
  const here = tripsHere(trips);
  const mine = here.find((trip) => trip.mine);
  const where = (trip) => ({ where: trip.shop ? "shop" : "none", shop: trip.shop || "" });
  $("shop-trip").replaceChildren(...here.map((trip) => el("p", { class: "trip-line" },
    trip.mine
      ? t("page.shopping.trip.mine", { ...where(trip), since: formatClock(millis(trip.started)), until: formatClock(millis(trip.until)) })
      : t("page.shopping.trip.someone", { ...where(trip), name: trip.memberName || t("notify.someone"), since: formatClock(millis(trip.started)) }))));
  $("shop-trip").hidden = here.length === 0;
  const button = $("trip-toggle");
  button.textContent = t(mine ? "page.shopping.trip.back" : "page.shopping.trip.going");
  button.setAttribute("aria-pressed", String(Boolean(mine)));
  button.onclick = () => (mine ? end() : start());
}

async function start() {
  try {
    await call("shop.trip.start", onList());
    toast(t("page.shopping.trip.told"));
  } catch (error) { fail(error); }
  refresh("shopping"); // the list as it is now: what the phone keeps for the shop
}

async function end() {
  try { await call("shop.trip.end", onList()); } catch (error) { fail(error); }
  refresh("shopping");
}
