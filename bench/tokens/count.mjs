// What the bridge costs a model to read, counted with the o200k tokenizer
// (GPT-4o and later; the gpt-tokenizer package ships it offline).
//
//   node bench/tokens/count.mjs URL TOKEN [MAX_RESULT_TOKENS]
//
// Prints one JSON line per figure, then a summary, and exits non-zero when a
// target of issue 29 is missed: model-facing tools/list <= 4,000 tokens, a
// 20-vehicle search <= 2,000 in its default form, and no answer over the
// bridge's answer budget (limits.max_result_tokens, estimated from above by
// the bridge) as o200k counts it, whatever the limit.
import { encode } from "gpt-tokenizer/encoding/o200k_base";

const [url, token, budgetArg] = process.argv.slice(2);
const budget = Number(budgetArg ?? 20000);
const tokens = (v) => encode(typeof v === "string" ? v : JSON.stringify(v)).length;
let id = 0;
let failed = 0;

async function rpc(method, params) {
  const res = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: ++id, method, params }),
  });
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

async function call(name, args) {
  const result = await rpc("tools/call", { name, arguments: args });
  const text = result.content[0].text;
  if (result.isError) throw new Error(`${name} ${JSON.stringify(args)}: ${text}`);
  return { text, answer: JSON.parse(text) };
}

function print(figure) {
  console.log(JSON.stringify(figure));
}

function target(what, value, max) {
  const ok = value <= max;
  if (!ok) failed++;
  print({ target: what, value, max, ok });
}

// 1. tools/list: what a host puts in front of the model on every conversation
// (name, description and input schema), and the output schemas some hosts pass.
const { tools } = await rpc("tools/list", {});
let listed = { description: 0, input: 0, output: 0 };
for (const tool of tools) {
  const row = {
    tool: tool.name,
    description: tokens(tool.name) + tokens(tool.description ?? ""),
    input_schema: tokens(tool.inputSchema),
    output_schema: tool.outputSchema ? tokens(tool.outputSchema) : 0,
  };
  listed.description += row.description;
  listed.input += row.input_schema;
  listed.output += row.output_schema;
  print(row);
}
print({ tools_list: tools.length, ...listed, model_facing: listed.description + listed.input });

// 2. Answers, in the form a model reads them (the text block).
const dealership = "demo-cdk";
const searches = [];
for (const format of ["concise", "detailed"]) {
  for (const limit of [1, 20, 67, 100]) {
    const { text, answer } = await call("inventory_search", {
      dealership_id: dealership,
      limit,
      response_format: format,
    });
    const row = { answer: "inventory_search", format, limit, items: answer.items.length, has_more: answer.has_more, tokens: tokens(text) };
    row.per_vehicle = Math.round(row.tokens / Math.max(1, row.items));
    searches.push(row);
    print(row);
  }
}
const others = [
  ["inventory_get", { dealership_id: dealership, vehicle_id: null }],
  ["inventory_facets", { dealership_id: dealership }],
  ["dealership_get", { dealership_id: dealership }],
  ["service_list_repair_orders", { dealership_id: dealership, limit: 100 }],
  ["service_list_repair_orders", { dealership_id: dealership, limit: 100, response_format: "detailed" }],
  ["events_list", { dealership_id: dealership, limit: 100 }],
];
const firstId = (await call("inventory_search", { dealership_id: dealership, limit: 1 })).answer.items[0].id;
const answers = [...searches];
for (const [name, args] of others) {
  if (name === "inventory_get") args.vehicle_id = firstId;
  const { text, answer } = await call(name, args);
  const row = { answer: name, format: args.response_format ?? "default", limit: args.limit ?? null, items: answer.items?.length ?? null, tokens: tokens(text) };
  answers.push(row);
  print(row);
}

// 3. Paging the whole inventory in full records at the largest limit: every
// page within the budget, every vehicle exactly once.
const seen = new Set();
let cursor;
let pages = 0;
let largest = 0;
do {
  const args = { dealership_id: dealership, limit: 100, response_format: "detailed" };
  if (cursor) args.cursor = cursor;
  const { text, answer } = await call("inventory_search", args);
  pages++;
  largest = Math.max(largest, tokens(text));
  for (const v of answer.items) {
    if (seen.has(v.id)) {
      failed++;
      print({ error: `vehicle ${v.id} on two pages` });
    }
    seen.add(v.id);
  }
  cursor = answer.next_cursor;
  if (pages > 50) break;
} while (cursor);
const total = (await call("inventory_search", { dealership_id: dealership, limit: 1 })).answer.total;
print({ paged: "inventory_search detailed limit 100", pages, vehicles: seen.size, total, largest_page_tokens: largest });
if (seen.size !== total) {
  failed++;
  print({ error: `paging saw ${seen.size} of ${total} vehicles` });
}

target("model-facing tools/list tokens", listed.description + listed.input, 4000);
target("20-vehicle search, default form", searches.find((s) => s.format === "concise" && s.limit === 20).tokens, 2000);
target("largest answer (o200k) against the answer budget", Math.max(largest, ...answers.map((a) => a.tokens)), budget);
console.log(failed === 0 ? "tokens: every target met" : `tokens: ${failed} target(s) missed`);
process.exit(failed === 0 ? 0 : 1);
