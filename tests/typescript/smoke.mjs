#!/usr/bin/env node
// Smoke test of dms-bridge with the official TypeScript MCP clients and the MCP Inspector CLI.
//
// Usage:
//     node tests/typescript/smoke.mjs http://127.0.0.1:PORT/mcp [path/to/smoke-calls.json]
//
// The URL is a running `dms-bridge demo`; the call list defaults to tests/smoke-calls.json
// (shared with tests/python/smoke.py). Node 22 (`npm ci --prefix tests/typescript` first).
//
// The call list runs twice, with token demo-token-group: through @modelcontextprotocol/sdk 1.x's
// Client and through @modelcontextprotocol/client 2.x's Client, each over Streamable HTTP. Each
// run lists the tools first (the clients build their output-schema validators there), then makes
// every call, then pages through every list tool with one generic paginator. When the Inspector
// is installed (`npm ci --prefix tests/inspector`, or INSPECTOR_JS=path/to/launcher.js), its CLI
// lists the tools (schema portability report) and makes calls headless.
//
// smoke-calls.json: an ordered list of
//     {"name", "tool", "arguments", "expect": "ok" | "<error code>",
//      "save"?: {"var": "/json/pointer"}, "assert"?: {"/json/pointer": value}, "present"?: ["/json/pointer"]}
// Pointers read structuredContent for "ok" and the error envelope ({"error": {...}}, the text
// block's JSON) for an error. Placeholders in argument and assert strings: "{var}" as the whole
// string is the saved value itself (any JSON type); inside a longer string it is replaced by its
// text. {run_id} is unique per run, {today+N} / {today-N} is the UTC date N days from now
// (YYYY-MM-DD).
//
// Prints one line per check and closes with `ts-smoke: N passed, M failed`; exits 1 on any failure.

import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as TransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from "@modelcontextprotocol/client";

const HERE = dirname(fileURLToPath(import.meta.url));
const TOKEN = "demo-token-group";
const EXPECTED_TOOLS = [
  "dealership_list", "dealership_get", "inventory_search", "inventory_get", "inventory_facets",
  "leads_create", "leads_get", "leads_list", "deals_request_trade_value",
  "service_check_availability", "service_book_appointment", "service_cancel_appointment",
  "service_get_appointment", "service_get_repair_order", "service_list_repair_orders", "events_list",
];
const CALL_TIMEOUT_MS = 60_000;
const installed = (pkg) => {
  try {
    return JSON.parse(readFileSync(join(HERE, "node_modules", pkg, "package.json"), "utf8")).version;
  } catch {
    return "?";
  }
};
const MAX_PAGES = 100;

// Every list tool, paged the same way: `limit` small enough that those with data have a next page.
const LISTS = [
  { tool: "dealership_list", args: {}, minPages: 1 },
  { tool: "inventory_search", args: { dealership_id: "demo-feed", filters: { condition: ["used"] }, limit: 2 }, minPages: 2 },
  { tool: "leads_list", args: { dealership_id: "demo-cdk", limit: 1 }, minPages: 2 },
  {
    tool: "service_check_availability",
    args: { dealership_id: "demo-cdk", service_codes: ["01LOF"], year: 2019, make: "Honda", model: "Civic", from: "{today+1}", to: "{today+3}" },
    minPages: 1,
  },
  { tool: "service_list_repair_orders", args: { dealership_id: "demo-tekion", limit: 2 }, minPages: 2 },
  { tool: "events_list", args: { dealership_id: "demo-cdk", limit: 2 }, minPages: 2 },
];

// ---------------------------------------------------------------- checks

let passed = 0;
let failed = 0;

class CheckFailed extends Error {}

function ensure(condition, message) {
  if (!condition) throw new CheckFailed(message);
}

function info(line) {
  console.log(`    ${line}`);
}

async function check(name, fn) {
  try {
    await fn();
    passed += 1;
    console.log(`  ok   ${name}`);
    return true;
  } catch (e) {
    failed += 1;
    console.log(`  FAIL ${name}: ${describeError(e)}`);
    if (!(e instanceof CheckFailed) && e?.stack && process.env.TS_SMOKE_STACKS) console.log(e.stack);
    return false;
  }
}

function describeError(e) {
  if (e instanceof CheckFailed) return e.message;
  const code = e?.code !== undefined ? ` (code ${e.code})` : "";
  return `threw ${e?.name ?? "Error"}${code}: ${oneLine(e?.message ?? String(e), 400)}`;
}

function oneLine(text, max = 200) {
  const s = String(text).replace(/\s+/g, " ");
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

// ---------------------------------------------------------------- placeholders, pointers

function dateIn(days) {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}

function lookup(name, vars) {
  const today = /^today([+-]\d+)?$/.exec(name);
  if (today) return dateIn(Number(today[1] ?? 0));
  if (Object.hasOwn(vars, name)) return vars[name];
  throw new CheckFailed(`placeholder {${name}} has no value (an earlier call did not save it)`);
}

const PLACEHOLDER = /\{([A-Za-z0-9_]+(?:[+-]\d+)?)\}/g;

function fill(value, vars) {
  if (typeof value === "string") {
    const whole = /^\{([A-Za-z0-9_]+(?:[+-]\d+)?)\}$/.exec(value);
    if (whole) return lookup(whole[1], vars);
    return value.replace(PLACEHOLDER, (_, name) => {
      const v = lookup(name, vars);
      return typeof v === "string" ? v : JSON.stringify(v);
    });
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, vars));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)]));
  }
  return value;
}

const MISSING = Symbol("missing");

function pointer(doc, ptr) {
  if (ptr === "") return doc;
  if (!ptr.startsWith("/")) throw new CheckFailed(`bad JSON pointer ${JSON.stringify(ptr)}`);
  let node = doc;
  for (const raw of ptr.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object" || !Object.hasOwn(node, key)) return MISSING;
    node = node[key];
  }
  return node;
}

function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
}

// ---------------------------------------------------------------- results

// The error envelope of an isError result: exactly one text block holding {"error": {...}}.
function errorEnvelope(result) {
  const content = Array.isArray(result.content) ? result.content : [];
  ensure(content.length === 1 && content[0]?.type === "text",
    `expected one text block, got ${JSON.stringify(content.map((b) => b?.type))}`);
  let envelope;
  try {
    envelope = JSON.parse(content[0].text);
  } catch {
    throw new CheckFailed(`the text block is not JSON: ${oneLine(content[0].text)}`);
  }
  const error = envelope?.error;
  ensure(error && typeof error === "object", `the text block has no "error" object: ${oneLine(content[0].text)}`);
  ensure(typeof error.code === "string", "error.code is not a string");
  ensure(typeof error.message === "string", "error.message is not a string");
  ensure(typeof error.retryable === "boolean", "error.retryable is not a boolean");
  return envelope;
}

// A short account of an error result for a failure message, whatever its shape.
function errorSummary(result) {
  try {
    const { error } = errorEnvelope(result);
    return `${error.code}: ${error.message}`;
  } catch {
    const sc = result.structuredContent?.error;
    return sc ? `${sc.code}: ${sc.message} (structuredContent only)` : oneLine(JSON.stringify(result.content));
  }
}

function withTimeout(promise, label) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new CheckFailed(`${label}: no answer within ${CALL_TIMEOUT_MS / 1000}s`)), CALL_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------- one client

// console.warn is how Ajv reports `unknown format "…" ignored` while it compiles a schema.
const warnings = [];
const originalWarn = console.warn;
console.warn = (...args) => {
  warnings.push(args.map((a) => (typeof a === "string" ? a : String(a))).join(" "));
};
const unknownFormatWarnings = (from) => warnings.slice(from).filter((w) => w.includes("unknown format"));

function makeClient(kind, url) {
  const requestInit = { headers: { Authorization: `Bearer ${TOKEN}` } };
  const clientInfo = { name: "dms-bridge-ts-smoke", version: "1.0.0" };
  if (kind === "v1") {
    return { client: new ClientV1(clientInfo), transport: new TransportV1(new URL(url), { requestInit }) };
  }
  // 'auto' probes server/discover first: the bridge serves MCP 2026-07-28, so this run uses the
  // stateless era, where the 1.x run uses `initialize` (2025-11-25).
  return {
    client: new ClientV2(clientInfo, { versionNegotiation: { mode: "auto" } }),
    transport: new TransportV2(new URL(url), { requestInit }),
  };
}

async function runClient(kind, label, url, calls) {
  console.log(`\n== ${label}`);
  const runId = `${Date.now().toString(36)}-${kind}`;
  const vars = { run_id: runId };
  const { client, transport } = makeClient(kind, url);

  const connected = await check(`${label}: connect`, async () => {
    await withTimeout(client.connect(transport), "connect");
    const version = client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? "?";
    const era = client.getProtocolEra ? `, era ${client.getProtocolEra()}` : "";
    info(`server ${client.getServerVersion()?.name} ${client.getServerVersion()?.version}, protocol ${version}${era}`);
  });
  if (!connected) {
    await check(`${label}: the call list (not run: no connection)`, async () => ensure(false, "not connected"));
    return;
  }

  try {
    let listed = [];
    const before = warnings.length;
    await check(`${label}: tools/list has the 16 tools`, async () => {
      const result = await withTimeout(client.listTools(), "tools/list");
      listed = result.tools.map((t) => t.name);
      const missing = EXPECTED_TOOLS.filter((n) => !listed.includes(n));
      const extra = listed.filter((n) => !EXPECTED_TOOLS.includes(n));
      info(`${listed.length} tools${missing.length ? `; missing ${missing.join(", ")}` : ""}${extra.length ? `; extra ${extra.join(", ")}` : ""}`);
      ensure(missing.length === 0 && extra.length === 0 && listed.length === EXPECTED_TOOLS.length, "the tool list differs");
    });
    const listWarnings = unknownFormatWarnings(before);
    await check(`${label}: no 'unknown format' warnings while building validators in tools/list`, async () => {
      for (const w of [...new Set(listWarnings)].slice(0, 5)) info(`warn: ${oneLine(w, 160)}`);
      ensure(listWarnings.length === 0, `${listWarnings.length} console.warn calls mention 'unknown format'`);
    });

    const afterList = warnings.length;
    for (const call of calls) {
      await runCall(client, label, call, vars);
    }
    const callWarnings = unknownFormatWarnings(afterList);
    await check(`${label}: no 'unknown format' warnings during the calls`, async () => {
      ensure(callWarnings.length === 0, `${callWarnings.length} console.warn calls mention 'unknown format'`);
    });

    for (const list of LISTS) {
      await checkPaging(client, label, list, vars);
    }
  } finally {
    await client.close().catch(() => {});
  }
}

async function runCall(client, label, call, vars) {
  const expectOk = call.expect === "ok";
  await check(`${label}: ${call.name} -> ${call.expect}`, async () => {
    const args = fill(call.arguments ?? {}, vars);
    ensure(args && typeof args === "object" && !Array.isArray(args), `arguments are not an object: ${JSON.stringify(args)}`);
    const result = await withTimeout(client.callTool({ name: call.tool, arguments: args }), call.tool);

    let doc;
    let structuredOnError = false;
    if (expectOk) {
      ensure(!result.isError, `isError: ${errorSummary(result)}`);
      ensure(result.structuredContent && typeof result.structuredContent === "object", "no structuredContent");
      doc = result.structuredContent;
    } else {
      ensure(result.isError === true, `expected ${call.expect}, got a result without isError`);
      const hasStructured = result.structuredContent !== undefined;
      const envelope = errorEnvelope(result);
      const { error } = envelope;
      const hint = error.recovery?.hint ? ` hint="${oneLine(error.recovery.hint, 100)}"` : "";
      const next = error.recovery?.next_tool_call ? ` next_tool_call=${error.recovery.next_tool_call.name ?? error.recovery.next_tool_call.tool}` : "";
      const problems = Array.isArray(error.details?.problems) ? ` problems=${error.details.problems.map((p) => p.pointer).join(",")}` : "";
      info(`${error.code} retryable=${error.retryable}${problems}${hint}${next}`);
      ensure(error.code === call.expect, `error.code is ${error.code}, expected ${call.expect}`);
      doc = envelope;
      structuredOnError = hasStructured;
    }
    // Saved first, so that a failed assertion below does not fail the later calls too.
    const unsaved = [];
    for (const [name, ptr] of Object.entries(call.save ?? {})) {
      const got = pointer(doc, ptr);
      if (got === MISSING || got === null) unsaved.push(`${ptr} (to save as {${name}})`);
      else vars[name] = got;
    }
    for (const ptr of call.present ?? []) {
      ensure(pointer(doc, ptr) !== MISSING, `${ptr} is missing`);
    }
    for (const [ptr, want] of Object.entries(call.assert ?? {})) {
      const got = pointer(doc, ptr);
      const expected = fill(want, vars);
      ensure(got !== MISSING, `${ptr} is missing (expected ${JSON.stringify(expected)})`);
      ensure(deepEqual(got, expected), `${ptr} is ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
    }
    ensure(unsaved.length === 0, `missing: ${unsaved.join(", ")}`);
    ensure(!structuredOnError, "the error result carries structuredContent (errors are the text block only)");
  });
}

function itemKey(item) {
  if (item && typeof item === "object") {
    for (const k of ["id", "lead_id", "ro_number"]) if (typeof item[k] === "string") return item[k];
  }
  return JSON.stringify(item);
}

// One paginator for every list tool: {items, has_more, next_cursor?, total?}; follow next_cursor
// while has_more.
async function checkPaging(client, label, list, vars) {
  const args = fill(list.args, vars);
  await check(`${label}: paginate ${list.tool} ${JSON.stringify(args)}`, async () => {
    const keys = [];
    let total;
    let cursor;
    let pages = 0;
    for (;;) {
      ensure(pages < MAX_PAGES, `more than ${MAX_PAGES} pages`);
      const pageArgs = cursor === undefined ? args : { ...args, cursor };
      const result = await withTimeout(client.callTool({ name: list.tool, arguments: pageArgs }), list.tool);
      pages += 1;
      ensure(!result.isError, `page ${pages}: isError: ${errorSummary(result)}`);
      const page = result.structuredContent;
      ensure(page && typeof page === "object", `page ${pages}: no structuredContent`);
      ensure(Array.isArray(page.items), `page ${pages}: no items array (keys: ${Object.keys(page).join(", ")})`);
      ensure(typeof page.has_more === "boolean", `page ${pages}: has_more is ${JSON.stringify(page.has_more)}, not a boolean`);
      if (page.total !== undefined) {
        ensure(Number.isInteger(page.total), `page ${pages}: total is not an integer`);
        ensure(total === undefined || total === page.total, `page ${pages}: total changed from ${total} to ${page.total}`);
        total = page.total;
      }
      keys.push(...page.items.map(itemKey));
      if (!page.has_more) break;
      ensure(typeof page.next_cursor === "string" && page.next_cursor !== "", `page ${pages}: has_more without a next_cursor`);
      cursor = page.next_cursor;
    }
    const dupes = keys.filter((k, i) => keys.indexOf(k) !== i);
    info(`${pages} pages, ${keys.length} items${total !== undefined ? `, total ${total}` : ""}`);
    ensure(pages >= list.minPages, `${pages} page(s), expected at least ${list.minPages}`);
    ensure(dupes.length === 0, `items repeat across pages: ${[...new Set(dupes)].slice(0, 5).join(", ")}`);
    if (total !== undefined) ensure(keys.length === total, `${keys.length} items over all pages, total says ${total}`);
  });
}

// ---------------------------------------------------------------- the Inspector CLI

function inspectorScript() {
  if (process.env.INSPECTOR_JS) return process.env.INSPECTOR_JS;
  const candidates = [
    join(HERE, "..", "inspector", "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js"),
    join(HERE, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js"),
  ];
  return candidates.find((p) => existsSync(p));
}

async function runInspector(url) {
  console.log("\n== MCP Inspector CLI");
  const script = inspectorScript();
  if (!script) {
    console.log("    not installed (npm ci --prefix tests/inspector): skipped");
    return;
  }
  // The Inspector keeps a catalog and settings under HOME: a throwaway one.
  const home = mkdtempSync(join(tmpdir(), "ts-smoke-inspector-"));
  const env = {
    ...process.env,
    HOME: home,
    PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
    NO_COLOR: "1",
  };
  const inspector = (...args) => {
    const r = spawnSync(process.execPath,
      [script, "--cli", url, "--transport", "http", "--header", `Authorization: Bearer ${TOKEN}`, ...args],
      { env, encoding: "utf8", timeout: CALL_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
    if (r.error) throw r.error;
    return { status: r.status, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
  };
  const stderrTail = (r) => oneLine(r.stderr.split("\n").filter((l) => l.trim()).slice(-3).join(" | "), 300);

  try {
    const version = spawnSync(process.execPath, [script, "--cli", "--version"], { env, encoding: "utf8" });
    info(`inspector ${(version.stdout || version.stderr).trim().split("\n")[0]} on node ${process.version}`);

    await check("inspector: tools/list lists the 16 tools, portability summary 0 errors, 0 warnings", async () => {
      const r = inspector("--method", "tools/list");
      ensure(r.status === 0, `exit ${r.status}: ${stderrTail(r)}`);
      const names = JSON.parse(r.stdout).tools.map((t) => t.name);
      ensure(names.length === 16 && EXPECTED_TOOLS.every((n) => names.includes(n)), `tools: ${names.join(", ")}`);
      // Printed only when some tool has a finding.
      const m = /Schema portability: (\d+) errors?, (\d+) warnings? across (\d+) tools?/.exec(r.stderr);
      const [errors, warns, tools] = m ? m.slice(1).map(Number) : [0, 0, 0];
      info(m ? m[0] : "no schema portability summary (no findings)");
      ensure(errors === 0 && warns === 0, `${errors} errors, ${warns} warnings across ${tools} tools`);
    });

    await check("inspector: tools/list --strict exits 0 and reports nothing", async () => {
      const r = inspector("--method", "tools/list", "--strict");
      const findings = r.stderr.split("\n").filter((l) => /^(Error|Warning): tool "/.test(l));
      const byIssue = new Map();
      r.stderr.split("\n").filter((l) => l.startsWith("  Issue: ")).forEach((l) => {
        const k = oneLine(l.slice(9), 70);
        byIssue.set(k, (byIssue.get(k) ?? 0) + 1);
      });
      for (const [issue, n] of byIssue) info(`${n} x ${issue}`);
      ensure(r.status === 0, `exit ${r.status} (6: portability errors): ${stderrTail(r)}`);
      ensure(findings.length === 0, `${findings.length} findings (${findings.filter((l) => l.startsWith("Error")).length} errors)`);
    });

    await check("inspector: tools/call dealership_get demo-cdk exits 0", async () => {
      const r = inspector("--method", "tools/call", "--tool-name", "dealership_get", "--tool-args-json", '{"dealership_id":"demo-cdk"}');
      ensure(r.status === 0, `exit ${r.status}: ${stderrTail(r)}`);
      ensure(r.stdout.includes("demo-cdk"), "the output does not mention demo-cdk");
    });

    await check("inspector: tools/call leads_get of an unknown lead exits 5 with leads.lead_not_found", async () => {
      const r = inspector("--method", "tools/call", "--tool-name", "leads_get",
        "--tool-args-json", '{"dealership_id":"demo-cdk","lead_id":"lead_unknown_smoke"}');
      info(`exit ${r.status}`);
      ensure(r.status === 5, `exit ${r.status}, expected 5 (isError): ${stderrTail(r)}`);
      ensure(`${r.stdout}${r.stderr}`.includes("leads.lead_not_found"), "the output does not contain leads.lead_not_found");
    });
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- main

// A client of the initialize era without a session (the 1.x SDK, as VS Code): it opens its GET
// stream after initializing, subscribes, and hears of the event its own lead makes.
const EVENTS_URI = "dms://dealerships/demo-cdk/events";
const UPDATE_WITHIN_MS = 20_000;

async function checkSubscription(url) {
  const label = `sdk ${installed("@modelcontextprotocol/sdk")} resources/subscribe`;
  console.log(`\n== ${label}`);
  const { client, transport } = makeClient("v1", url);
  const updates = [];
  let heard = () => {};
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
    updates.push(n.params.uri);
    heard();
  });
  try {
    await check(`${label}: initialize offers resources.subscribe without a session`, async () => {
      await withTimeout(client.connect(transport), "connect");
      ensure(client.getServerCapabilities()?.resources?.subscribe === true, "resources.subscribe is not offered");
      ensure(transport.sessionId === undefined, `a session id came: ${transport.sessionId}`);
    });
    await check(`${label}: subscribe to ${EVENTS_URI}, then a lead is told on the GET stream`, async () => {
      await withTimeout(client.subscribeResource({ uri: EVENTS_URI }), "resources/subscribe");
      const told = new Promise((done, fail) => {
        heard = () => updates.includes(EVENTS_URI) && done();
        setTimeout(() => fail(new Error(`no update within ${UPDATE_WITHIN_MS} ms`)), UPDATE_WITHIN_MS);
      });
      const runId = `${Date.now().toString(36)}-sub`;
      const lead = await withTimeout(client.callTool({
        name: "leads_create",
        arguments: {
          dealership_id: "demo-cdk", source_agent: "dms-bridge-smoke",
          customer: { first_name: "Dana", last_name: "Whitfield", email: `dana.${runId}@example.com` },
          consent: { granted_at: "2026-11-01T10:00:00Z", allowed_channels: ["email"], scope: ["lead_submission"],
                     consent_text: "I agree that Riverside Auto Group may email me about this request." },
          vehicle_of_interest: { year: 2020, make: "Toyota", model: "Camry" },
        },
      }), "leads_create");
      ensure(!lead.isError, `leads_create failed: ${errorSummary(lead)}`);
      await told;
      info(`updates: ${updates.join(", ")}`);
    });
  } finally {
    await client.unsubscribeResource({ uri: EVENTS_URI }).catch(() => {});
    await client.close().catch(() => {});
  }
}

async function main() {
  const [url, callsPath = resolve(HERE, "..", "smoke-calls.json")] = process.argv.slice(2);
  if (!url) {
    console.error("usage: node smoke.mjs <url> [path-to-smoke-calls.json]");
    return 2;
  }
  const calls = JSON.parse(readFileSync(callsPath, "utf8"));
  console.log(`ts-smoke: ${calls.length} calls from ${callsPath} against ${url} (node ${process.version})`);

  await runClient("v1", `sdk ${installed("@modelcontextprotocol/sdk")}`, url, calls);
  await runClient("v2", `client ${installed("@modelcontextprotocol/client")}`, url, calls);
  await checkSubscription(url);
  await runInspector(url);

  console.warn = originalWarn;
  console.log(`ts-smoke: ${passed} passed, ${failed} failed`);
  return failed === 0 ? 0 : 1;
}

// Exit explicitly: a client's transport may keep a socket open.
process.exit(await main().catch((e) => {
  console.log(`ts-smoke: crashed: ${e?.stack ?? e}`);
  console.log(`ts-smoke: ${passed} passed, ${failed + 1} failed`);
  return 1;
}));
