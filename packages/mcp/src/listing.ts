/**
 * What a client is told of the tools: each tool's tools/list entry (strict input schema, top-level
 * output schema, hints) and the full result schemas, published once at {@link SCHEMAS_URI}.
 */
import type { Tool as ToolListing } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { Tool } from "./tool.js";
import { WIRE_ERROR_KINDS } from "./wire-error.js";

/** The JSON of a failure that produced no answer. */
export const ErrorEnvelopeSchema = z.object({
  error: z.object({
    kind: z.enum(WIRE_ERROR_KINDS),
    message: z.string(),
    code: z.string().optional(),
    argument: z.string().optional(),
    limit: z.string().optional(),
    retryable: z.boolean().optional(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});

/** The URI of the result schemas: each tool's result and the error envelope, published once. */
export const SCHEMAS_URI = "kumiki://schemas";

function jsonSchemaOf(schema: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: "draft-7", io }) as Record<
    string,
    unknown
  >;
  return rest;
}

/**
 * A tool's `outputSchema` as tools/list declares it: the result's top level — each field with its
 * JSON type, the fields a success always has — or the error envelope (`{error: {…}}`), which a
 * failed call returns as its structured content too. The whole result schemas, every level with
 * its descriptions, are published once at {@link SCHEMAS_URI}: inline they made a 33 KB listing
 * (18.8 KB with the descriptions left out); this keeps tools/list under 15 KB while every client
 * can rely on, and the SDK's client checks, the structured content of every answer.
 */
function outputSchemaOf(tool: Tool): NonNullable<ToolListing["outputSchema"]> {
  const full = jsonSchemaOf(tool.output, "output") as {
    properties?: Record<string, { type?: unknown }>;
    required?: string[];
  };
  const properties: Record<string, object> = { error: { type: "object" } };
  for (const [name, p] of Object.entries(full.properties ?? {}))
    properties[name] = p.type === undefined ? {} : { type: p.type };
  const required = full.required ?? [];
  return {
    type: "object",
    properties,
    ...(required.length === 0 ? {} : { anyOf: [{ required }, { required: ["error"] }] }),
  };
}

/**
 * The tools/list entry of a tool: its strict input schema, its top-level output schema
 * ({@link outputSchemaOf}) and its hints, each said once. Hints at their MCP default (readOnlyHint
 * false, idempotentHint false, destructiveHint true) are left out, and the title is the tool's own.
 */
export function listing(tool: Tool): ToolListing {
  const a = tool.annotations;
  const annotations: ToolListing["annotations"] = {
    ...(a.readOnlyHint === true ? { readOnlyHint: true } : {}),
    ...(a.readOnlyHint !== true && a.destructiveHint === false ? { destructiveHint: false } : {}),
    ...(a.idempotentHint === true ? { idempotentHint: true } : {}),
    ...(a.openWorldHint === false ? { openWorldHint: false } : {}),
  };
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchemaOf(tool.input, "input") as ToolListing["inputSchema"],
    outputSchema: outputSchemaOf(tool),
    annotations,
  };
}

/** The document at {@link SCHEMAS_URI}: the error envelope and every tool's result, as JSON Schema. */
export function schemasDocument(tools: readonly Tool[]): Record<string, unknown> {
  return {
    error: jsonSchemaOf(ErrorEnvelopeSchema, "output"),
    results: Object.fromEntries(tools.map((t) => [t.name, jsonSchemaOf(t.output, "output")])),
  };
}
