/**
 * The resources of a session: the limits, the result schemas and the conflict records as
 * documents (the conflicts subscribable: loss-notices.ts tells an update), each definition's text
 * through the template `kumiki://definition/{qname}`, and completion of that template's qname (the
 * names that show, by prefix). The server has no prompts: its instructions and tool descriptions
 * say how to work, and a repair is a tool call (kumiki_fix), not a prompt.
 */
import { clip, type Store } from "@kumiki-graph/core";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CompleteRequestSchema,
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { protocolError } from "./answers.js";
import { LIMITS_URI, type Limits, limitsDocument } from "./limits.js";
import { SCHEMAS_URI, schemasDocument } from "./listing.js";
import { CONFLICTS_URI } from "./loss-notices.js";
import type { Tool } from "./tool.js";

/** The template of a definition's text: `kumiki://definition/slot.todos`. */
export const DEFINITION_TEMPLATE = "kumiki://definition/{qname}";
const DEFINITION_PREFIX = "kumiki://definition/";

/** At most this many names in one completion (the MCP spec's bound is 100). */
const COMPLETIONS = 100;

/** Installs the resource, template and completion handlers of a session on `server`. */
export function serveResources(
  server: Server,
  options: {
    readonly store: Store;
    readonly limits: Limits;
    readonly tools: readonly Tool[];
    /** The URIs the client subscribed to (loss-notices.ts tells updates of the conflicts). */
    readonly subscribed: Set<string>;
  },
): void {
  const { store, limits, tools, subscribed } = options;
  server.setRequestHandler(ListResourcesRequestSchema, () => ({
    resources: [
      {
        uri: LIMITS_URI,
        name: "limits",
        title: "Limits of this server",
        description: "Every limit a call can hit, by the name a limit-exceeded error gives",
        mimeType: "application/json",
      },
      {
        uri: CONFLICTS_URI,
        name: "conflicts",
        title: "Conflict records",
        description:
          "Every conflict record of the graph as it is now (kumiki_conflicts); subscribe to be told when a write of this session loses a merge",
        mimeType: "application/json",
      },
      {
        uri: SCHEMAS_URI,
        name: "schemas",
        title: "Result and error schemas",
        description:
          "JSON Schema of each tool's structured result (results.<tool>) and of the error envelope (error)",
        mimeType: "application/json",
      },
    ],
  }));
  const documents: Record<string, () => unknown> = {
    [LIMITS_URI]: () => limitsDocument(limits),
    [SCHEMAS_URI]: () => schemasDocument(tools),
    [CONFLICTS_URI]: () => ({ conflicts: store.conflicts() }),
  };
  /** The document at `uri`; a URI this server has none at is -32602, naming the resources. */
  const known = (uri: string): (() => unknown) => {
    const document = Object.hasOwn(documents, uri) ? documents[uri] : undefined;
    if (document === undefined)
      throw protocolError(
        ErrorCode.InvalidParams,
        `no resource ${clip(uri)}; the resources are ${Object.keys(documents).join(", ")}`,
      );
    return document;
  };
  server.setRequestHandler(SubscribeRequestSchema, (request) => {
    known(request.params.uri);
    subscribed.add(request.params.uri);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, (request) => {
    known(request.params.uri);
    subscribed.delete(request.params.uri);
    return {};
  });
  server.setRequestHandler(ReadResourceRequestSchema, (request) => {
    const uri = request.params.uri;
    if (uri.startsWith(DEFINITION_PREFIX)) {
      const qname = decodeURIComponent(uri.slice(DEFINITION_PREFIX.length));
      const viewed = store.view(qname);
      // -32002: the spec's "resource not found".
      if (!viewed.ok)
        throw protocolError(-32002, `no definition ${clip(qname)}: ${viewed.error.message}`, { uri });
      return { contents: [{ uri, mimeType: "text/plain", text: viewed.value.text }] };
    }
    return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(known(uri)()) }] };
  });
  server.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({
    resourceTemplates: [
      {
        uriTemplate: DEFINITION_TEMPLATE,
        name: "definition",
        title: "A definition's text",
        description: "The text of one definition (layer.name or def_…), as kumiki_view shows it",
        mimeType: "text/plain",
      },
    ],
  }));
  server.setRequestHandler(CompleteRequestSchema, (request) => {
    const { ref, argument } = request.params;
    if (ref.type !== "ref/resource" || ref.uri !== DEFINITION_TEMPLATE || argument.name !== "qname")
      throw protocolError(
        ErrorCode.InvalidParams,
        `nothing to complete for ${clip(JSON.stringify(ref))} ${clip(argument.name)}: this server completes the qname of ${DEFINITION_TEMPLATE} (it has no prompts)`,
      );
    const listed = store.list();
    const names = listed.ok
      ? listed.value.map((e) => e.qname).filter((q) => q.startsWith(argument.value))
      : [];
    return {
      completion: {
        values: names.slice(0, COMPLETIONS),
        total: names.length,
        hasMore: names.length > COMPLETIONS,
      },
    };
  });
}
