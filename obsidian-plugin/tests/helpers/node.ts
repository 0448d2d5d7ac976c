// Test helpers: the core's Host from Node's own modules, and fake timers for the client.
import * as childProcess from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import type { Host } from "../../src/core/host";
import { nodeHost } from "../../src/core/node-host";

export function testHost(overrides: Partial<Host> = {}): Host {
	return { ...nodeHost({ fs, crypto, os, path, childProcess, http, process }), ...overrides };
}

export const REPO_ROOT = path.resolve(__dirname, "..", "..", "..");
export const PYTHON = path.join(REPO_ROOT, ".venv", "bin", "python");
