// The page's state: what the agent said, and apart from it what we guessed (a change sent
// and not yet confirmed). What is shown is the agent's answer with the open guesses applied
// in order; a guess goes when the agent's next answer for its part arrives after the call
// settled, or at once when the call failed. Pure: no DOM, tested with `node --test`.

export class Store {
  constructor() {
    this.said = new Map();
    this.guesses = [];
    this.nextGuess = 1;
    this.listeners = new Set();
    // A clock of questions and settled calls: an answer holds the calls settled before it was
    // asked for, and only those (an answer asked for earlier can arrive later, on another connection).
    this.clock = 0;
    this.askedAt = new Map();
    /** What the loads begun now wait for before they keep their answers (`after`). */
    this.waitFor = undefined;
  }

  /**
   * The agent's answer for `part` (a list, an object): replaces the last one, unless it was asked
   * for before the answer shown (`asked`, from `load`; now when not given). Returns whether it did.
   */
  set(part, value, asked = ++this.clock) {
    if (asked < (this.askedAt.get(part) ?? 0)) return false;
    this.askedAt.set(part, asked);
    this.said.set(part, value);
    // Guesses whose call settled before the question are in its answer (or were refused).
    this.guesses = this.guesses.filter((g) => g.part !== part || g.settledAt === undefined || g.settledAt > asked);
    this.#changed(part);
    return true;
  }

  /** Asks the agent for `part` with `fetch` and keeps the answer as `set` says (once the
   * answer it waits for has come: `after`). */
  async load(part, fetch) {
    const asked = ++this.clock;
    const waitFor = this.waitFor;
    const answer = await fetch();
    await waitFor;
    return this.set(part, answer, asked);
  }

  /**
   * Runs `ask()`, whose loads keep their answers only once `first` has settled: every question
   * is asked at once, and the answers that depend on `first`'s (the household's members and
   * settings) are still shown after it. Returns what `ask` returns.
   */
  after(first, ask) {
    const before = this.waitFor;
    this.waitFor = first.then(() => {}, () => {});
    try { return ask(); } finally { this.waitFor = before; }
  }

  /**
   * The agent's answer for `part` as `change(answer)` makes it: what a feed event says changed
   * (live.js), shown before the part's reload. `change` returns undefined when it cannot say,
   * and nothing changes. Open guesses stay: only a whole answer (`set`) settles them. An answer
   * asked for before the change is dropped when it arrives (it may not hold the change, and
   * would undo it until the reload that follows every event: a phone cut off meanwhile kept
   * that older copy).
   */
  patch(part, change) {
    const before = this.said.get(part);
    const after = change(before);
    if (after === undefined || after === before) return false;
    this.said.set(part, after);
    this.askedAt.set(part, ++this.clock);
    this.#changed(part);
    return true;
  }

  /** What the agent said last for `part`, without guesses. */
  agent(part) { return this.said.get(part); }

  /** What to show for `part`: the agent's answer with the open guesses applied. */
  view(part) {
    return this.guesses.filter((g) => g.part === part).reduce((value, g) => g.apply(value), this.said.get(part));
  }

  /** Whether `part` shows a guess. */
  guessing(part) { return this.guesses.some((g) => g.part === part); }

  /**
   * Shows `apply(value)` for `part` until `call` settles and the agent answers again;
   * undone at once when `call` fails. Resolves to the call's result (or rethrows).
   */
  async guess(part, apply, call) {
    const guess = { id: this.nextGuess++, part, apply, settledAt: undefined };
    this.guesses.push(guess);
    this.#changed(part);
    try {
      const result = await call();
      guess.settledAt = ++this.clock;
      return result;
    } catch (error) {
      this.guesses = this.guesses.filter((g) => g !== guess);
      this.#changed(part);
      throw error;
    }
  }

  /** `listener(part)` after every change. */
  subscribe(listener) { this.listeners.add(listener); return () => this.listeners.delete(listener); }

  #changed(part) { for (const listener of this.listeners) listener(part); }
}

/** Whether a feed event concerns a part with these topics: a topic ending in "." matches
 * the start of the event's type (`shopping.`), any other one its type or its entity. */
export function concerns(topics, event) {
  return topics.some((topic) => topic.endsWith(".")
    ? (event.type || "").startsWith(topic)
    : topic === event.type || topic === event.entity);
}
