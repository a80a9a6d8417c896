/**
 * @kumiki-graph/sync-server: peer sync of Kumiki graph workspaces (automerge-repo over WebSocket,
 * issue 7). Not built yet: this package holds its place in the workspace.
 */
export const PACKAGE_NAME = "@kumiki-graph/sync-server";
