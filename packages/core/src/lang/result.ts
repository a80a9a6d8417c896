/**
 * The one outcome type of every package: a value, or an expected failure as a value — never a
 * throw (exceptions are for bugs). Each layer names its failure: `ParseError` (lang),
 * `Rejection` (the store, as `StoreResult`), `WorkspaceError` (`WorkspaceResult`), and in the
 * other packages `SyncError` and the MCP server's `WireError`.
 */
export type Result<T, E> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: E };
