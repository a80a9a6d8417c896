import type { Command } from "../command.js";
import { init } from "./init.js";
import { status } from "./status.js";

/**
 * Every verb, in the order `kumiki --help` lists them. One file a verb (or a verb family);
 * add a verb by importing it here.
 */
export const COMMANDS: readonly Command[] = [init, status];
