import type { AppDef, Capability, Expr, Ident, RecordLit, RouteEntry } from "../ast.js";
import type { Token } from "../lexer.js";
import { DEFINITION_KEYWORDS } from "./builtins.js";
import { tokenSpan } from "./state.js";
import { TileParser } from "./tiles.js";

const APP_CLAUSES = ["caps", "routes", "init", "theme", "http", "meta", "indexed-db", "analytics"] as const;
type AppClause = (typeof APP_CLAUSES)[number];
const APP_CLAUSE_SET: ReadonlySet<string> = new Set(APP_CLAUSES);

/** The `app` definition (language.md §1.12) and route maps (routing.md). */
export class AppParser extends TileParser {
  /** Whether a top-level definition starts at the cursor. */
  protected definitionAhead(): boolean {
    const t = this.peek();
    if (t.kind === "keyword") return DEFINITION_KEYWORDS.has(t.text);
    return t.kind === "ident" && (t.text === "theme" || t.text === "motion") && this.peek(1).kind === "ident";
  }

  protected appBody(start: Token, name: Ident): AppDef {
    const seen = new Set<string>();
    let caps: Capability[] | undefined;
    let routes: RouteEntry[] | undefined;
    let init: Expr[] | undefined;
    let theme: Ident | undefined;
    const records: Partial<Record<"http" | "meta" | "indexedDb" | "analytics", RecordLit>> = {};
    while (!this.atEof() && !this.definitionAhead() && this.peek().kind === "ident") {
      const key = this.peek();
      if (!APP_CLAUSE_SET.has(key.text)) {
        this.fail(
          `unknown clause \`${key.text}\`${this.context} (an app has ${APP_CLAUSES.map((c) => `\`${c} =\``).join(", ")})`,
          key,
        );
        break;
      }
      if (seen.has(key.text)) {
        this.fail(`\`${key.text} =\` is written twice${this.context}`, key);
        break;
      }
      seen.add(key.text);
      this.next();
      this.expectPunct("=", `after \`${key.text}\``);
      const clause = key.text as AppClause;
      switch (clause) {
        case "caps":
          caps = this.capabilityList();
          break;
        case "routes":
          routes = this.routeMap("routes");
          break;
        case "init": {
          this.expectPunct("[", "to open the `init` list of effect calls");
          init = [];
          while (!this.isPunct("]") && !this.atEof()) {
            init.push(this.expr());
            if (!this.isPunct(",")) break;
            this.next();
          }
          this.expectPunct("]", "to close the `init` list");
          break;
        }
        case "theme":
          theme = this.ident("a theme name (or a slot holding one) after `theme =`");
          break;
        default: {
          const rec = this.configRecord(clause);
          records[clause === "indexed-db" ? "indexedDb" : clause] = rec;
        }
      }
    }
    return {
      kind: "AppDef",
      layer: "app",
      name,
      ...(caps !== undefined ? { caps } : {}),
      ...(routes !== undefined ? { routes } : {}),
      ...(init !== undefined ? { init } : {}),
      ...(theme !== undefined ? { theme } : {}),
      ...(records.http !== undefined ? { http: records.http } : {}),
      ...(records.meta !== undefined ? { meta: records.meta } : {}),
      ...(records.indexedDb !== undefined ? { indexedDb: records.indexedDb } : {}),
      ...(records.analytics !== undefined ? { analytics: records.analytics } : {}),
      span: this.spanFrom(start),
    };
  }

  private configRecord(clause: string): RecordLit {
    const t = this.peek();
    if (!this.isPunct("{")) {
      this.expected(`a record \`{…}\` after \`${clause} =\``);
      return { kind: "Record", fields: [], span: tokenSpan(t) };
    }
    const e = this.expr();
    if (e.kind === "Record") return e;
    if (e.kind === "Map" && e.entries.length === 0) return { kind: "Record", fields: [], span: e.span };
    this.fail(`\`${clause}\`${this.context} must be a record with named fields \`{name: value, …}\``, t);
    return { kind: "Record", fields: [], span: e.span };
  }

  private capabilityList(): Capability[] {
    this.expectPunct("[", "to open the capability list (such as `[storage.read, http.get]`)");
    const caps: Capability[] = [];
    while (!this.isPunct("]") && !this.atEof()) {
      caps.push(this.capability());
      if (!this.isPunct(",")) break;
      this.next();
    }
    this.expectPunct("]", "to close the capability list");
    return caps;
  }

  /** `storage.read`, `telemetry.track`. */
  protected capability(): Capability {
    const start = this.peek();
    if (start.kind !== "ident") {
      this.expected("a capability name such as `storage.read`");
      return { kind: "Capability", name: "", span: tokenSpan(start) };
    }
    this.next();
    let name = start.text;
    while (this.isPunct(".")) {
      this.next();
      const seg = this.peek();
      if (seg.kind !== "ident" && seg.kind !== "keyword") {
        this.expected(`a name after \`${name}.\` in a capability`);
        break;
      }
      this.next();
      name += `.${seg.text}`;
    }
    return { kind: "Capability", name, span: this.spanFrom(start) };
  }

  /** `{"/" -> App, "/old" ->> "/new", …}` (order kept: it breaks ties between routes). */
  protected routeMap(clause: string): RouteEntry[] {
    this.expectPunct("{", `to open the route map of \`${clause} =\``);
    const routes: RouteEntry[] = [];
    while (!this.isPunct("}") && !this.atEof()) {
      const p = this.peek();
      if (p.kind !== "string") {
        this.expected('a route path string such as `"/todos/:id"`');
        break;
      }
      this.next();
      const path = { kind: "String" as const, value: p.text, span: tokenSpan(p) };
      if (this.isPunct("->>")) {
        this.next();
        const to = this.peek();
        if (to.kind !== "string") {
          this.expected(`the redirect target path after \`"${p.text}" ->>\``);
          break;
        }
        this.next();
        routes.push({
          kind: "Redirect",
          path,
          to: { kind: "String", value: to.text, span: tokenSpan(to) },
          span: this.spanFrom(p),
        });
      } else {
        this.expectPunct("->", `after the route path "${p.text}" (or \`->>\` for a redirect)`);
        const target = this.ident(`a tile name for the route "${p.text}"`);
        routes.push({ kind: "Route", path, target, span: this.spanFrom(p) });
      }
      if (!this.isPunct(",")) break;
      this.next();
    }
    this.expectPunct("}", "to close the route map");
    return routes;
  }
}
