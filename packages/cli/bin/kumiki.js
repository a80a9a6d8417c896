#!/usr/bin/env node
// A committed launcher, so the bin link npm makes at install time points at a file that exists
// and is executable before `prepare` compiles src/ into dist/.
import { main } from "../dist/main.js";

process.exitCode = await main(process.argv.slice(2));
