/**
 * A conflict's or a refusal's retry steps (core's `RemedyStep`s) as `kumiki` commands: core's
 * `retry` sentence names no command, so the CLI says which of its own to run.
 */
import type { RemedyStep } from "@kumiki-graph/core/rejection";

/** One step as the command that does it. */
export function cliCommand(step: RemedyStep): string {
  switch (step.do) {
    case "revert":
      return `kumiki patch revert ${step.op}`;
    case "unlock":
      return `kumiki unlock ${step.agent ?? "<agent>"} '${step.pattern}'`;
    case "refs":
      return `kumiki refs ${step.def}`;
    case "view":
      return `kumiki view ${step.def}`;
    case "rename":
      return `kumiki rename ${step.def} <new-name>`;
    case "remove":
      return `kumiki remove ${step.def}`;
    case "edit":
      return `kumiki edit ${step.def} …, or kumiki replace ${step.def} …`;
    case "link":
      return `kumiki patch apply of [{"op":"link","qname":"${step.def}","ref":"<ref>","to":"<target>"}]`;
    case "list":
      return "kumiki list";
  }
}

/** `retry` followed by the commands of its steps, when it has any. */
export function withCommands(retry: string, steps: readonly RemedyStep[] | undefined): string {
  return steps === undefined || steps.length === 0 ? retry : `${retry} (${steps.map(cliCommand).join("; ")})`;
}
