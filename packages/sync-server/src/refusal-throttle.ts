/**
 * Back-off for clients the server keeps refusing (no token, an unknown one): a stock automerge-repo
 * client retries a refused connection about every second for ever, each retry costing a token
 * lookup and a log line. After {@link RefusalThrottle.free} refusals in a row, the same client is
 * answered 429 with `Retry-After` and nothing else, for a period that doubles with each further
 * refusal (1 s, 2 s, … up to a minute). A client is its address and the token it presents, so a
 * client with a good token behind the same address (a proxy) is never held back by another's bad
 * one. The table is bounded: past {@link RefusalThrottle.capacity} clients the oldest is forgotten.
 */

interface Refusals {
  refusals: number;
  until: number;
}

/** See the module comment. */
export class RefusalThrottle {
  private readonly clients = new Map<string, Refusals>();

  constructor(
    /** Refusals answered in full before the back-off starts. */
    readonly free = 5,
    /** Clients remembered at most. */
    readonly capacity = 10_000,
    /** The longest back-off, ms. */
    readonly maxMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** While `client` is held back: the seconds until it may try again; else undefined. */
  heldBack(client: string): number | undefined {
    const r = this.clients.get(client);
    if (r === undefined) return undefined;
    const left = r.until - this.now();
    return left > 0 ? Math.ceil(left / 1000) : undefined;
  }

  /** Counts a refusal of `client`; returns the back-off it now has, in seconds (0: none yet). */
  refused(client: string): number {
    let r = this.clients.get(client);
    if (r === undefined) {
      if (this.clients.size >= this.capacity) {
        const oldest = this.clients.keys().next().value;
        if (oldest !== undefined) this.clients.delete(oldest);
      }
      r = { refusals: 0, until: 0 };
    } else this.clients.delete(client);
    // Kept in order of last refusal: the first key is the one longest quiet.
    this.clients.set(client, r);
    r.refusals++;
    const over = r.refusals - this.free;
    if (over <= 0) return 0;
    const ms = Math.min(1000 * 2 ** Math.min(over - 1, 16), this.maxMs);
    r.until = this.now() + ms;
    return Math.ceil(ms / 1000);
  }

  /** `client` was let in: its refusals are forgotten. */
  accepted(client: string): void {
    this.clients.delete(client);
  }
}
