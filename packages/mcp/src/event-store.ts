/**
 * The events of one HTTP session's streams, kept so that a client whose stream broke can resume it
 * (`Last-Event-ID`, the Streamable HTTP transport's resumability): the SDK's `EventStore`, in
 * memory, bounded. The SDK ships only an example of one; this keeps the last {@link EVENTS_KEPT}
 * events of a session and is dropped with it.
 */
import type { EventId, EventStore, StreamId } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** Events kept per session: a client that falls further behind starts a new stream. */
export const EVENTS_KEPT = 1_000;

/** A session's recent events, oldest first. */
export class SessionEventStore implements EventStore {
  private readonly events = new Map<
    EventId,
    { readonly stream: StreamId; readonly message: JSONRPCMessage }
  >();
  private next = 0;

  constructor(private readonly kept = EVENTS_KEPT) {}

  storeEvent(stream: StreamId, message: JSONRPCMessage): Promise<EventId> {
    const id = `${stream}:${this.next++}`;
    this.events.set(id, { stream, message });
    // Maps iterate in insertion order: the first key is the oldest event.
    if (this.events.size > this.kept) this.events.delete(this.events.keys().next().value!);
    return Promise.resolve(id);
  }

  getStreamIdForEventId(id: EventId): Promise<StreamId | undefined> {
    return Promise.resolve(this.events.get(id)?.stream);
  }

  /** Sends `send` the events of `last`'s stream after `last`, and answers the stream's id (the id's own when `last` is no longer kept). */
  async replayEventsAfter(
    last: EventId,
    { send }: { send: (id: EventId, message: JSONRPCMessage) => Promise<void> },
  ): Promise<StreamId> {
    const from = this.events.get(last);
    // An event no longer kept: nothing can be replayed, and the stream its id names goes on.
    if (from === undefined) return last.slice(0, Math.max(0, last.lastIndexOf(":")));
    let after = false;
    for (const [id, e] of this.events) {
      if (id === last) after = true;
      else if (after && e.stream === from.stream) await send(id, e.message);
    }
    return from.stream;
  }
}
