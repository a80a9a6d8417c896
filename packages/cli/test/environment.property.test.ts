/**
 * Options read from the environment (`kumiki serve`'s KUMIKI_SERVE_*): for every mix of flags and
 * variables, a flag given wins, else a set variable, else nothing; a list variable splits on commas;
 * a typo'd variable or a boolean that is not one is refused by name.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { environmentName, type OptionSpecs, parseCommandArgs, withEnvironment } from "../src/args.js";
import { CliError } from "../src/errors.js";

const SPECS: OptionSpecs = {
  port: { type: "string", description: "" },
  "token-file": { type: "string", description: "" },
  "mcp-origin": { type: "string", multiple: true, description: "" },
  quiet: { type: "boolean", description: "" },
};
const PREFIX = "KUMIKI_SERVE_";

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof CliError) return `${e.exit} ${e.message}`;
    throw e;
  }
  return "accepted";
}

describe("options from the environment", () => {
  it("names each variable after its option", () => {
    expect(environmentName(PREFIX, "token-file")).toBe("KUMIKI_SERVE_TOKEN_FILE");
    expect(environmentName(PREFIX, "port")).toBe("KUMIKI_SERVE_PORT");
  });

  it("takes a flag over its variable, a variable over nothing, and says where each came from", () => {
    const value = fc
      .string({ minLength: 1, maxLength: 12 })
      .filter((v) => !v.startsWith("-") && !v.includes(","));
    fc.assert(
      fc.property(
        fc.option(value, { nil: undefined }),
        fc.option(value, { nil: undefined }),
        fc.option(fc.array(value, { minLength: 1, maxLength: 3 }), { nil: undefined }),
        fc.option(fc.array(value, { minLength: 1, maxLength: 3 }), { nil: undefined }),
        fc.option(fc.boolean(), { nil: undefined }),
        (flagPort, envPort, flagOrigins, envOrigins, envQuiet) => {
          const argv = [
            ...(flagPort === undefined ? [] : [`--port=${flagPort}`]),
            ...(flagOrigins ?? []).map((o) => `--mcp-origin=${o}`),
          ];
          const env = {
            ...(envPort === undefined ? {} : { KUMIKI_SERVE_PORT: envPort }),
            ...(envOrigins === undefined ? {} : { KUMIKI_SERVE_MCP_ORIGIN: envOrigins.join(",") }),
            ...(envQuiet === undefined ? {} : { KUMIKI_SERVE_QUIET: envQuiet ? "yes" : "off" }),
            KUMIKI_AUTHOR: "user:x",
          };
          const r = withEnvironment("serve", parseCommandArgs("serve", argv, SPECS), SPECS, PREFIX, env);
          const trimmed = envOrigins?.map((o) => o.trim()).filter((o) => o !== "");
          const origins = flagOrigins ?? (trimmed !== undefined && trimmed.length > 0 ? trimmed : undefined);
          expect(r.options.port).toBe(flagPort ?? (envPort === "" ? undefined : envPort));
          expect(r.options["mcp-origin"]).toEqual(origins);
          expect(r.options.quiet).toBe(envQuiet);
          expect(r.sources.get("port")).toBe(
            flagPort === undefined && envPort !== undefined && envPort !== ""
              ? "KUMIKI_SERVE_PORT"
              : undefined,
          );
        },
      ),
    );
  });

  it("counts an empty variable as unset", () => {
    const r = withEnvironment("serve", parseCommandArgs("serve", [], SPECS), SPECS, PREFIX, {
      KUMIKI_SERVE_PORT: "",
    });
    expect(r.options.port).toBeUndefined();
    expect(r.sources.size).toBe(0);
  });

  it("refuses a variable that names no option, and a boolean that is not one, by name", () => {
    const parsed = parseCommandArgs("serve", [], SPECS);
    expect(refusal(() => withEnvironment("serve", parsed, SPECS, PREFIX, { KUMIKI_SERVE_PROT: "1" }))).toBe(
      "2 kumiki serve: unknown environment variable KUMIKI_SERVE_PROT: the ones read are KUMIKI_SERVE_PORT, KUMIKI_SERVE_TOKEN_FILE, KUMIKI_SERVE_MCP_ORIGIN, KUMIKI_SERVE_QUIET",
    );
    expect(
      refusal(() => withEnvironment("serve", parsed, SPECS, PREFIX, { KUMIKI_SERVE_QUIET: "maybe" })),
    ).toBe('2 kumiki serve: KUMIKI_SERVE_QUIET takes 1, true, yes or on (or 0, false, no, off), got "maybe"');
  });
});
