import type { AppEventKind, Bind, DurationLit, EventPattern, Ident, UiEventKind } from "../ast.js";
import type { Token } from "../lexer.js";
import { APP_EVENTS, UI_EVENTS } from "./builtins.js";
import { type Pos, tokenSpan } from "./state.js";
import { StatementParser } from "./statements.js";

const EVENT_FORMS =
  '`ui.click(Tile)`, `effect.ok($v, _)`, `timer(1s)`, `app.start`, `tile.mount(Tile)` or `route.enter("/path")`';

/** A reducer's `on=` event pattern (language.md §1.6.1). */
export class EventParser extends StatementParser {
  protected eventPattern(): EventPattern {
    const t = this.peek();
    const placeholder: EventPattern = { kind: "AppEvent", event: "start", span: tokenSpan(t) };
    if (t.kind === "ident" && t.text === "timer" && this.isPunct("(", 1)) return this.timerEvent(t);
    const isHead = t.kind === "ident" || (t.kind === "keyword" && (t.text === "app" || t.text === "tile"));
    if (!isHead || !this.isPunct(".", 1)) {
      this.expected(`an event pattern (${EVENT_FORMS}) after \`on=\``);
      return placeholder;
    }
    const head = this.next();
    this.next();
    const sub = this.peek();
    if (!(sub.kind === "ident" || sub.kind === "keyword")) {
      this.expected(`an event name after \`${head.text}.\``);
      return placeholder;
    }
    this.next();
    const name = sub.text;
    if (head.kind === "ident" && head.text === "ui") {
      return this.uiEvent(head, name, sub, placeholder);
    }
    if (head.kind === "keyword" && head.text === "app") {
      return this.appEvent(head, name, sub, placeholder);
    }
    if (head.kind === "keyword" && head.text === "tile") {
      return this.tileEvent(head, name, sub, placeholder);
    }
    if (head.kind === "ident" && head.text === "route") {
      return this.routeEvent(head, name, sub, placeholder);
    }
    if (name === "ok" || name === "err") {
      return this.effectEvent(head, name);
    }
    this.fail(
      `unknown event \`${head.text}.${name}\`${this.context}: an effect event is \`${head.text}.ok(…)\` or \`${head.text}.err(…)\``,
      sub,
    );
    return placeholder;
  }

  /** A `ui.<event>(Tile)`, `ui.<event>(Tile#id)` or `ui.<event>(self)` pattern. */
  private uiEvent(head: Token, name: string, sub: Token, placeholder: EventPattern): EventPattern {
    if (!UI_EVENTS.has(name)) {
      this.fail(
        `unknown ui event \`ui.${name}\`${this.context} (expected one of ${[...UI_EVENTS].join(", ")})`,
        sub,
      );
      return placeholder;
    }
    this.expectPunct("(", `after \`ui.${name}\``);
    const selStart = this.peek();
    let selector: Extract<EventPattern, { kind: "UiEvent" }>["selector"];
    if (this.isKeyword("self")) {
      this.next();
      selector = { kind: "SelfSelector", span: tokenSpan(selStart) };
    } else {
      const tile = this.ident(`a tile name in \`ui.${name}(…)\``);
      if (this.isPunct("#")) {
        this.next();
        const id = this.ident("an element id after `#`");
        selector = { kind: "Selector", tile, id, span: this.spanFrom(selStart) };
      } else {
        selector = { kind: "Selector", tile, span: tile.span };
      }
    }
    this.expectPunct(")", `to close \`ui.${name}(…)\``);
    return { kind: "UiEvent", event: name as UiEventKind, selector, span: this.spanFrom(head) };
  }

  /** An `app.<event>` pattern. */
  private appEvent(head: Token, name: string, sub: Token, placeholder: EventPattern): EventPattern {
    if (!APP_EVENTS.has(name)) {
      this.fail(
        `unknown app event \`app.${name}\`${this.context} (expected one of ${[...APP_EVENTS].join(", ")})`,
        sub,
      );
      return placeholder;
    }
    return { kind: "AppEvent", event: name as AppEventKind, span: this.spanFrom(head) };
  }

  /** A `tile.mount(Tile)` or `tile.unmount(Tile)` pattern. */
  private tileEvent(head: Token, name: string, sub: Token, placeholder: EventPattern): EventPattern {
    if (name !== "mount" && name !== "unmount") {
      this.fail(`unknown tile event \`tile.${name}\`${this.context} (expected mount or unmount)`, sub);
      return placeholder;
    }
    this.expectPunct("(", `after \`tile.${name}\``);
    const tile = this.ident(`a tile name in \`tile.${name}(…)\``);
    this.expectPunct(")", `to close \`tile.${name}(…)\``);
    return { kind: "TileEvent", event: name, tile, span: this.spanFrom(head) };
  }

  /** A `route.enter("/path")`, `route.leave(…)` or `route.error(…)` pattern. */
  private routeEvent(head: Token, name: string, sub: Token, placeholder: EventPattern): EventPattern {
    if (name !== "enter" && name !== "leave" && name !== "error") {
      this.fail(`unknown route event \`route.${name}\`${this.context} (expected enter, leave or error)`, sub);
      return placeholder;
    }
    this.expectPunct("(", `after \`route.${name}\``);
    const p = this.peek();
    if (p.kind !== "string") {
      this.expected(`a route pattern string in \`route.${name}(…)\``);
      return placeholder;
    }
    this.next();
    this.expectPunct(")", `to close \`route.${name}(…)\``);
    return {
      kind: "RouteEvent",
      event: name,
      pattern: { kind: "String", value: p.text, span: tokenSpan(p) },
      span: this.spanFrom(head),
    };
  }

  /** An effect's outcome: `effect.ok($v, _)` or `effect.err($e)`. */
  private effectEvent(head: Token, name: "ok" | "err"): EventPattern {
    const effect: Ident = { kind: "Ident", name: head.text, span: tokenSpan(head) };
    this.expectPunct("(", `after \`${head.text}.${name}\``);
    const binds: Bind[] = [];
    while (!this.isPunct(")") && !this.atEof()) {
      const b = this.peek();
      if (b.kind === "dollar" || b.kind === "ident") {
        this.next();
        binds.push({ kind: "Bind", name: b.text, span: tokenSpan(b) });
      } else {
        this.expected(`a bind (\`$name\` or \`_\`) in \`${head.text}.${name}(…)\``);
        break;
      }
      if (!this.isPunct(",")) break;
      this.next();
    }
    this.expectPunct(")", `to close \`${head.text}.${name}(…)\``);
    return { kind: "EffectEvent", effect, outcome: name, binds, span: this.spanFrom(head) };
  }

  private timerEvent(t: Token): EventPattern {
    this.next();
    this.next();
    const interval = this.duration("an interval such as `1s` or `100ms` in `timer(…)`");
    if (this.isPunct(",")) {
      this.next();
      if (!this.isIdent("name") || !this.isPunct("=", 1)) {
        this.expected("`name=` after the interval of `timer(…)`");
      } else {
        this.next();
        this.next();
      }
      const timer = this.ident("a timer name after `name=`");
      this.expectPunct(")", "to close `timer(…)`");
      return { kind: "TimerEvent", interval, timer, span: this.spanFrom(t) };
    }
    this.expectPunct(")", "to close `timer(…)`");
    return { kind: "TimerEvent", interval, span: this.spanFrom(t) };
  }

  /** `300ms` (also written `300 ms`). */
  protected duration(what: string): DurationLit {
    const t = this.peek();
    if (t.kind === "duration") {
      this.next();
      return {
        kind: "Duration",
        raw: t.text,
        amount: t.value,
        unit: t.unit as DurationLit["unit"],
        span: tokenSpan(t),
      };
    }
    const u = this.peek(1);
    if (
      t.kind === "number" &&
      u.kind === "ident" &&
      (u.text === "ms" || u.text === "s" || u.text === "m") &&
      !t.text.includes(".")
    ) {
      this.next();
      this.next();
      return {
        kind: "Duration",
        raw: `${t.text}${u.text}`,
        amount: t.value,
        unit: u.text,
        span: this.spanFrom(t),
      };
    }
    this.expected(what);
    return placeholderDuration(t);
  }
}

export function placeholderDuration(at: Pos): DurationLit {
  return {
    kind: "Duration",
    raw: "0ms",
    amount: 0,
    unit: "ms",
    span: { offset: at.offset, end: at.offset, line: at.line, column: at.column },
  };
}
