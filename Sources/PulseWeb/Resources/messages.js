// The sentences of the page, from the agent's message catalogue (GET /messages/en.json,
// the same file the agent and the CLI render from). Pure: no DOM, tested with `node --test`.
// The grammar is MessageCatalogue's (Sources/PulseHousehold/Messages.swift): {name},
// {name, plural, one {…} other {…}} with #, {name, select, v {…} other {…}},
// {name, key, prefix} and {name, quoted}.

export function pluralCategory(n, language = "en") {
  return new Intl.PluralRules(language).select(n);
}

function plain(value) {
  if (value === undefined || value === null) return "";
  if (Array.isArray(value)) return value.map(plain).join(", ");
  if (typeof value === "object") return plain(value.label ?? value.name);
  return String(value);
}

export class Catalogue {
  constructor(messages = {}, language = "en") { this.messages = messages; this.language = language; }

  has(key) { return Object.prototype.hasOwnProperty.call(this.messages, key); }

  /** The message `key` with `params`; the key itself when the catalogue lacks it. */
  text(key, params = {}) { return this.has(key) ? this.format(this.messages[key], params) : key; }

  /** A refusal of the agent (`{code, params}`) in the reader's words. */
  refusal(code, params = {}) { return this.text(`refusal.${code}`, params); }

  format(template, params = {}) {
    const at = { i: 0 };
    return this.#render(template, at, params, null, null);
  }

  #render(t, at, params, number, close) {
    let out = "";
    while (at.i < t.length) {
      const c = t[at.i];
      if (close !== null && c === close) return out;
      if (c === "#" && number !== null) { out += number; at.i++; continue; }
      if (c !== "{") { out += c; at.i++; continue; }
      at.i++;
      let head = "";
      while (at.i < t.length && t[at.i] !== "}" && t[at.i] !== ",") head += t[at.i++];
      const name = head.trim();
      if (at.i >= t.length) return out;
      if (t[at.i] === "}") { out += plain(params[name]); at.i++; continue; }
      at.i++;
      let type = "";
      while (at.i < t.length && t[at.i] !== "}" && t[at.i] !== ",") type += t[at.i++];
      type = type.trim();
      if (type === "key") {
        let prefix = "";
        if (t[at.i] === ",") at.i++;
        while (at.i < t.length && t[at.i] !== "}") prefix += t[at.i++];
        at.i++;
        const value = plain(params[name]);
        const key = `${prefix.trim()}.${value}`;
        out += this.has(key) ? this.text(key, params) : value;
        continue;
      }
      if (type === "quoted") {
        at.i++;
        const open = this.messages["quote.open"] ?? "\"", shut = this.messages["quote.close"] ?? "\"";
        const values = Array.isArray(params[name]) ? params[name] : [params[name]];
        out += values.map((v) => open + plain(v) + shut).join(", ");
        continue;
      }
      if (t[at.i] === ",") at.i++;
      const value = params[name];
      const exactSelector = type === "plural" ? `=${Number(value) || 0}` : plain(value);
      const categorySelector = type === "plural" ? pluralCategory(Number(value) || 0, this.language) : null;
      let exact = null, category = null, other = null;
      while (at.i < t.length) {
        while (t[at.i] === " " || t[at.i] === "\n") at.i++;
        if (at.i >= t.length || t[at.i] === "}") break;
        let selector = "";
        while (at.i < t.length && t[at.i] !== "{" && t[at.i] !== " ") selector += t[at.i++];
        while (t[at.i] === " ") at.i++;
        if (t[at.i] !== "{") break;
        at.i++;
        const branch = this.#render(t, at, params, type === "plural" ? plain(value) : number, "}");
        at.i++;
        if (selector === exactSelector && exact === null) exact = branch;
        if (selector === categorySelector && category === null) category = branch;
        if (selector === "other") other = branch;
      }
      at.i++;
      out += exact ?? category ?? other ?? "";
    }
    return out;
  }
}

/** The catalogue for `language`, from the agent. */
export async function loadCatalogue(language = "en", fetcher = fetch) {
  const response = await fetcher(`/messages/${language}.json`, { credentials: "same-origin" });
  if (!response.ok) throw new Error(`messages ${language}: ${response.status}`);
  return new Catalogue(await response.json(), language);
}
