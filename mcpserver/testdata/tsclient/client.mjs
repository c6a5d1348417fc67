// The real TypeScript MCP client (@modelcontextprotocol/sdk from npm)
// driving `phonepilot mcp` on the simulator, as a client that plans
// itself would: list the tools, observe, tap the search box, type a query
// and submit, read the results in that action's answer, then hand over
// "open Settings and scroll down" with run_task and count its progress
// notifications. It prints a transcript, and last a JSON summary line the
// Go test checks. Exit status 1 on any failed expectation.
//
//   node client.mjs stdio /path/to/phonepilot mcp --device sim --db X
//   node client.mjs http http://127.0.0.1:PORT/mcp [TOKEN]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...rest] = process.argv.slice(2);
let transport;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: target, args: rest, stderr: "inherit" });
} else if (mode === "http") {
  const headers = rest[0] ? { Authorization: `Bearer ${rest[0]}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
} else {
  console.error("usage: client.mjs stdio CMD ARGS… | http URL [TOKEN]");
  process.exit(2);
}

const summary = { mode, ok: false };
const fail = (msg) => {
  summary.error = msg;
  console.log("SUMMARY " + JSON.stringify(summary));
  process.exit(1);
};

const client = new Client({ name: "phonepilot-ts-test", version: "1.0.0" });
client.onerror = (e) => console.error("client error:", e?.message ?? e);
await client.connect(transport);
summary.protocolVersion = transport.protocolVersion ?? "negotiated";

const textOf = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
const show = (label, s) => console.log(`--- ${label}\n${s}\n`);
const indexOf = (answer, re) => {
  const m = answer.match(new RegExp(String.raw`^\[(\d+)\] .*` + re, "m"));
  if (!m) fail(`no line matching ${re} in:\n${answer}`);
  return Number(m[1]);
};
const callTool = async (name, args = {}, opts) => {
  const started = performance.now();
  const res = await client.callTool({ name, arguments: args }, undefined, opts);
  const ms = Math.round(performance.now() - started);
  const text = textOf(res);
  show(`${name} ${JSON.stringify(args)} (${ms} ms)${res.isError ? " ERROR" : ""}`, text);
  if (res.isError) fail(`${name} failed: ${text}`);
  (summary.ms ??= {})[name] = ms;
  return text;
};

const { tools } = await client.listTools();
summary.tools = tools.map((t) => t.name).sort();
show("tools/list", summary.tools.join(", "));

await callTool("observe");
let out = await callTool("launch_app", { app: "Taobao" });
if (out.includes("id=poplayer_close")) out = await callTool("tap", { element: indexOf(out, "id=poplayer_close") });
out = await callTool("tap", { element: indexOf(out, "id=home_searchbar") });
out = await callTool("type_text", { text: "Mac mini", element: indexOf(out, "EditText"), submit: true });
if (!out.includes("the screen changed") || !/appeared: .*Mac mini/.test(out) || !out.includes("id=item_title")) {
  fail("the search results are not in type_text's answer");
}
summary.resultsInAnswer = true;

let progress = 0;
out = await callTool("run_task", { goal: "open Settings and scroll down", max_steps: 10 }, {
  onprogress: (p) => {
    progress++;
    console.log(`progress ${p.progress}/${p.total}: ${p.message}`);
  },
  resetTimeoutOnProgress: true,
});
summary.progress = progress;
if (!/^task \S+ completed/.test(out)) fail("run_task did not complete");
if (progress < 2) fail(`${progress} progress notifications; want one per step`);
summary.taskCompleted = true;

summary.ok = true;
console.log("SUMMARY " + JSON.stringify(summary));
await client.close();
