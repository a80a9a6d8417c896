import { readFileSync } from "node:fs";
import { join } from "node:path";
import { kumikiShared } from "@kumiki-graph/test-support/corpus";

// Mistakes seeded into conformance-corpus programs, shared by the program-level tests
// (corpus.test.ts) and the store-level ones (store-check.test.ts, ../fix/).

export const CUSTOM_CAP = "features/27-custom-capability.kumiki";

export function manifest(): { capabilities: { name: string }[] } {
  return JSON.parse(readFileSync(join(kumikiShared, "examples", "features", "kumiki.caps.json"), "utf8"));
}

export function optionsFor(id: string): { capabilities?: { capabilities: { name: string }[] } } {
  return id === CUSTOM_CAP ? { capabilities: manifest() } : {};
}

/** One seeded mistake: `find` → `replace` in a corpus program, and what the checker must say. */
export interface Seed {
  readonly program: string;
  readonly what: string;
  readonly find: string;
  readonly replace: string;
  readonly code: string;
  readonly kind?: string;
  readonly location: string;
  /** The did-you-mean the diagnostic must carry. */
  readonly suggest?: string;
  readonly options?: { readonly a11y?: boolean };
}

export const TODO = "apps/02-todomvc/app.kumiki";

export const SEEDS: readonly Seed[] = [
  // ── a typo in each kind of reference ──
  {
    program: TODO,
    what: "slot read",
    find: "todos := todos.filter(not $2.done)",
    replace: "todos := todoss.filter(not $2.done)",
    code: "E0103",
    kind: "undef-ref",
    location: "reducer.clearDone.body:3",
    suggest: "todos",
  },
  {
    program: TODO,
    what: "slot write",
    find: "    do= filter := $el.filter",
    replace: "    do= filtr := $el.filter",
    code: "E0103",
    kind: "undef-slot",
    location: "reducer.setFilter.body:3",
    suggest: "filter",
  },
  {
    program: TODO,
    what: "shorthand field",
    find: "todos[id] := {id, text=draft",
    replace: "todos[id] := {idd, text=draft",
    code: "E0103",
    kind: "undef-ref",
    location: "reducer.addTodo.body:4",
    suggest: "id",
  },
  {
    program: TODO,
    what: "bind target",
    find: "input(bind=draft,",
    replace: "input(bind=draf,",
    code: "E0103",
    location: "tile.NewTodoForm.body:3",
    suggest: "draft",
  },
  {
    program: TODO,
    what: "fn call",
    find: "text(itemsLeft(todos).show",
    replace: "text(itemLeft(todos).show",
    code: "E0116",
    location: "tile.Footer.body:3",
    suggest: "itemsLeft",
  },
  {
    program: TODO,
    what: "emit",
    find: "do= todos := todos.remove($el.todoId)\n        emit saveTodos(todos)",
    replace: "do= todos := todos.remove($el.todoId)\n        emit saveTodo(todos)",
    code: "E0104",
    location: "reducer.remove.body:4",
    suggest: "saveTodos",
  },
  {
    program: TODO,
    what: "effect trigger",
    find: "on=loadTodos.err(_, _)",
    replace: "on=loadTodo.err(_, _)",
    code: "E0104",
    location: "reducer.todosFailed.body:1",
    suggest: "loadTodos",
  },
  {
    program: TODO,
    what: "ui selector",
    find: "on=ui.click(ClearBtn)",
    replace: "on=ui.click(ClearBttn)",
    code: "E0211",
    location: "reducer.clearDone.body:2",
    suggest: "ClearBtn",
  },
  {
    program: TODO,
    what: "handler argument",
    find: "onClick=clearDone",
    replace: "onClick=clearDon",
    code: "E0102",
    location: "tile.ClearBtn.body:1",
    suggest: "clearDone",
  },
  {
    program: TODO,
    what: "handler prop",
    find: "RemoveBtn {todoId: $1, onClick: remove}",
    replace: "RemoveBtn {todoId: $1, onClick: remov}",
    code: "E0102",
    location: "tile.TodoRow.body:9",
    suggest: "remove",
  },
  {
    program: TODO,
    what: "child tile",
    find: "        FilterBar,",
    replace: "        FilterBa,",
    code: "E0105",
    location: "tile.Footer.body:4",
    suggest: "FilterBar",
  },
  {
    program: TODO,
    what: "route target",
    find: '"/404" -> NotFound}',
    replace: '"/404" -> NotFund}',
    code: "E0105",
    location: "app.TodoApp.body:3",
    suggest: "NotFound",
  },
  {
    program: TODO,
    what: "type name",
    find: "fn itemsLeft(ts: Map(TodoId, Todo))",
    replace: "fn itemsLeft(ts: Map(TodoId, Tood))",
    code: "E0117",
    location: "fn.itemsLeft.body:1",
    suggest: "Todo",
  },
  {
    program: TODO,
    what: "pattern variant",
    find: "| Active  -> not t.done",
    replace: "| Activ  -> not t.done",
    code: "E0209",
    location: "fn.matchFilter.body:4",
    suggest: "Active",
  },
  {
    program: TODO,
    what: "slot initial variant",
    find: "slot filter : Filter                         = All",
    replace: "slot filter : Filter                         = Al",
    code: "E0216",
    location: "slot.filter.body:1",
    suggest: "All",
  },
  {
    program: "features/37-lifecycle-events.kumiki",
    what: "tile.mount target",
    find: "on=tile.mount(Panel)",
    replace: "on=tile.mount(Panl)",
    code: "E0211",
    location: "reducer.onPanelOn.body:1",
    suggest: "Panel",
  },
  {
    program: "features/41-link-prefetch.kumiki",
    what: "prefetch",
    find: "prefetch: loadTodo,",
    replace: "prefetch: loadTodoo,",
    code: "E0102",
    location: "tile.Home.body:5",
    suggest: "loadTodo",
  },
  {
    program: "features/38-confirm-leave-guard.kumiki",
    what: "confirm callback",
    find: "onNo:  stayHere})",
    replace: "onNo:  stayHer})",
    code: "E0102",
    location: "reducer.guardEdit.body:6",
    suggest: "stayHere",
  },
  {
    program: "features/32-panic-boundary.kumiki",
    what: "error-boundary",
    find: "error-boundary = Fallback",
    replace: "error-boundary = Fallbak",
    code: "E0105",
    location: "tile.Risky.body:2",
    suggest: "Fallback",
  },
  {
    program: "features/30-motion.kumiki",
    what: "motion name",
    find: '{motion: "Spin"}',
    replace: '{motion: "Spn"}',
    code: "E0107",
    location: "tile.Spinner.body:1",
    suggest: "Spin",
  },
  {
    program: "features/25-stop-timer.kumiki",
    what: "timer name",
    find: "stop-timer(countdown)",
    replace: "stop-timer(countdwn)",
    code: "E0106",
    location: "reducer.stop.body:1",
    suggest: "countdown",
  },
  {
    program: "features/63-reducer-batch-atomicity.kumiki",
    what: "test target",
    find: "    reducer-test bump\n        given  = {slots: {count: 1",
    replace: "    reducer-test bmp\n        given  = {slots: {count: 1",
    code: "E0102",
    location: "test.bump-commits-whole.body:2",
    suggest: "bump",
  },
  {
    program: "features/28-tests.kumiki",
    what: "test mock",
    find: "mocks: {persist: err",
    replace: "mocks: {persit: err",
    code: "E0104",
    location: "test.add-surfaces-persist-error.body:6",
    suggest: "persist",
  },
  // ── capabilities, routes, literals, accessibility ──
  {
    program: TODO,
    what: "missing capability",
    find: "caps   = [storage.read, storage.write]",
    replace: "caps   = [storage.read]",
    code: "E0301",
    location: "reducer.addTodo.body:6",
  },
  {
    program: TODO,
    what: "missing /404",
    find: ', "/404" -> NotFound}',
    replace: "}",
    code: "E0001",
    location: "app.TodoApp.body:1",
  },
  {
    program: "apps/01-counter/app.kumiki",
    what: "missing /404 and no NotFound tile",
    find: ', "/404" -> App',
    replace: "",
    code: "E0001",
    location: "app.Counter.body:1",
  },
  {
    program: TODO,
    what: "Int for a Bool",
    find: "slot ready  : Bool                           = false",
    replace: "slot ready  : Bool                           = 0",
    code: "E0201",
    location: "slot.ready.body:1",
  },
  {
    program: TODO,
    what: "Text for a Bool in an assignment",
    find: "ready := true",
    replace: 'ready := "yes"',
    code: "E0201",
    location: "reducer.todosLoaded.body:2",
  },
  {
    program: TODO,
    what: "record missing a field",
    find: "todos[id] := {id, text=draft, done=false, createdAt=now}",
    replace: "todos[id] := {id, text=draft, createdAt=now}",
    code: "E0214",
    location: "reducer.addTodo.body:4",
  },
  {
    program: "features/43-file-upload-preview.kumiki",
    what: "missing alt",
    find: "image(src=file-url(avatar.get))",
    replace: "image(src=file-url(avatar.get))",
    code: "E0702",
    location: "tile.Preview.body:3",
    options: { a11y: true },
  },
];
