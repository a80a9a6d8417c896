/**
 * @kumiki-graph/mcp: the Model Context Protocol server over the Kumiki graph store (issue 8). Not
 * built yet: this package holds its place in the workspace.
 */
export const PACKAGE_NAME = "@kumiki-graph/mcp";
