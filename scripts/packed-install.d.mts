// Types of packed-install.mjs (the pack and container tests import it).
export declare const PACKAGES: readonly string[];
export declare function packAll(repoRoot: string, tarballs: string): Promise<void>;
export declare function prefixManifests(
  repoRoot: string,
  tarballs: string,
  only?: readonly string[],
): Promise<{ manifest: object; lock: object }>;
export declare function installPacked(
  repoRoot: string,
  prefix: string,
  tarballs: string,
  options?: { readonly offline?: boolean; readonly only?: readonly string[] },
): Promise<void>;
