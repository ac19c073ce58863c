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
  }

  /** The agent's answer for `part` (a list, an object): replaces the last one. */
  set(part, value) {
    this.said.set(part, value);
    // Guesses whose call has settled are now in the agent's answer (or were refused).
    this.guesses = this.guesses.filter((g) => g.part !== part || !g.settled);
    this.#changed(part);
  }

  /**
   * The agent's answer for `part` as `change(answer)` makes it: what a feed event says changed
   * (live.js), shown before the part's reload. `change` returns undefined when it cannot say,
   * and nothing changes. Open guesses stay: only a whole answer (`set`) settles them.
   */
  patch(part, change) {
    const before = this.said.get(part);
    const after = change(before);
    if (after === undefined || after === before) return false;
    this.said.set(part, after);
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
    const guess = { id: this.nextGuess++, part, apply, settled: false };
    this.guesses.push(guess);
    this.#changed(part);
    try {
      const result = await call();
      guess.settled = true;
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
