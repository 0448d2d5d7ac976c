// Test helpers: the core's Host from Node's own modules, and fake timers for the client.
import * as childProcess from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import * as os from "node:os";
import * as path from "node:path";
import type { Host } from "../../src/core/host";
import { nodeHost } from "../../src/core/node-host";

/** Node's host; `proc` replaces parts of Node's process (its environment, kill). */
export function testHost(overrides: Partial<Host> = {}, proc: Partial<Pick<NodeJS.Process, "platform" | "arch" | "env" | "kill">> = {}): Host {
	const processLike = { platform: process.platform, arch: process.arch, env: process.env, kill: process.kill.bind(process), ...proc };
	return { ...nodeHost({ fs, crypto, os, path, childProcess, http, https, process: processLike }), ...overrides };
}

export const REPO_ROOT = path.resolve(__dirname, "..", "..", "..");
export const PYTHON = path.join(REPO_ROOT, ".venv", "bin", "python");
