/**
 * A conflict's or a refusal's retry steps (core's `RemedyStep`s) as this server's tools and
 * arguments: core's `retry` sentence names no tool, so the server says which of its own to call.
 */
import type { RemedyStep } from "@kumiki-graph/core";

/** One step as the tool call that does it. */
export function toolCall(step: RemedyStep): string {
  switch (step.do) {
    case "revert":
      return `kumiki_revert {op_id: "${step.op}"}`;
    case "unlock":
      // Locks are set and lifted by their holder through the kumiki CLI; this server has no lock tool.
      return `${step.agent ?? "a holder"} lifts the lock on ${step.pattern} (kumiki unlock, in the workspace; no MCP tool)`;
    case "refs":
      return `kumiki_refs {qname: "${step.def}"}`;
    case "view":
      return `kumiki_view {selector: "${step.def}"}`;
    case "rename":
      return `kumiki_rename {qname: "${step.def}", new_name}`;
    case "remove":
      return `kumiki_remove {qname: "${step.def}"}`;
    case "edit":
      return `kumiki_edit or kumiki_replace {qname: "${step.def}", …}`;
    case "link":
      return `kumiki_apply {ops: [{op: "link", qname: "${step.def}", ref, to}]}`;
    case "list":
      return "kumiki_list {}";
  }
}

/** `retry` followed by the tool calls of its steps, when it has any. */
export function withToolCalls(retry: string, steps: readonly RemedyStep[] | undefined): string {
  return steps === undefined || steps.length === 0 ? retry : `${retry} (${steps.map(toolCall).join("; ")})`;
}
