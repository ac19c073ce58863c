// A feed event shown in the frame it arrives in (issue 54): an event says what changed on the
// agent — an item added, checked, restocked, renamed or removed, a task done, reopened or
// removed — so the part that shows it takes the change at once, from the event alone, and is
// reloaded behind it (page.js, `refresh`): the agent's answer stays what is shown in the end.
// An event that alone cannot say (a summary of many changes, an undo, a row this page does
// not show, a task's assignee by id) changes nothing here: its part is only reloaded. No
// household rule lives here: where an item goes is where the agent put it (the list in the
// order of addition, the restock pool most recently bought first). Pure: `node --test`.

const without = (items, id) => items.filter((x) => x.id !== id);
/** Whether the event is one change of one row, as the agent made it. */
const single = (event) => typeof event?.row === "string" && (event.count ?? 1) === 1;

/** The shopping part ({list, pool, on?}: `on`, the list shown, its id — null or absent, the
 * household's first) after `event`; undefined when the event alone cannot say. */
export function shoppingAfter(shopping, event) {
  if (!shopping || !Array.isArray(shopping.list) || !Array.isArray(shopping.pool) || !single(event)) return undefined;
  const { list, pool } = shopping;
  const row = event.row;
  const onList = list.find((x) => x.id === row);
  const inPool = pool.find((x) => x.id === row);
  switch (event.type) {
    case "shopping.added":
      if (typeof event.title !== "string") return undefined;
      if (onList) return shopping; // already shown (a reload was faster)
      if ((event.list ?? null) !== (shopping.on ?? null)) return shopping; // on another list
      return { ...shopping, list: [...list, { id: row, name: event.title, state: "active", listed: event.listed ?? event.time }], pool: without(pool, row) };
    case "shopping.checked": {
      const item = onList || inPool;
      if (!item) return undefined;
      return { ...shopping, list: without(list, row), pool: [{ ...item, state: "restock", listed: event.listed ?? event.time }, ...without(pool, row)] };
    }
    case "shopping.restocked": {
      const item = inPool || onList;
      if (!item) return undefined;
      return { ...shopping, list: [...without(list, row), { ...item, state: "active", listed: event.listed ?? event.time }], pool: without(pool, row) };
    }
    case "shopping.renamed":
      if (typeof event.title !== "string" || !(onList || inPool)) return undefined;
      return {
        ...shopping,
        list: list.map((x) => (x.id === row ? { ...x, name: event.title } : x)),
        pool: pool.map((x) => (x.id === row ? { ...x, name: event.title } : x)),
      };
    case "shopping.removed":
      if (!(onList || inPool)) return shopping; // not shown: nothing to take away
      return { ...shopping, list: without(list, row), pool: without(pool, row) };
    default:
      return undefined;
  }
}

/** The tasks part (a list) after `event`; undefined when the event alone cannot say. */
export function tasksAfter(tasks, event) {
  if (!Array.isArray(tasks) || !single(event)) return undefined;
  const task = tasks.find((x) => x.id === event.row);
  switch (event.type) {
    case "task.done":
    case "task.reopened":
      if (!task) return undefined;
      return tasks.map((x) => (x.id === event.row ? { ...x, done: event.type === "task.done" } : x));
    case "task.removed":
      return task ? without(tasks, event.row) : tasks;
    default:
      return undefined;
  }
}
