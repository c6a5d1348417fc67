// Times direct actions through `phonepilot mcp` over stdio with the real
// TypeScript client, each call from request to answer (settled, with its
// listing). Each of N rounds: launch_app Taobao, close its popup, tap the
// search box, type a query and submit, scroll down, press back, press
// home, and press home again on the home screen (which must answer at
// once). It prints one JSON line: per action, the mean and median ms, and
// how many answers said the action was NOT confirmed (counted, not thrown,
// so that an older build can be timed by the same script).
//
//   node bench.mjs N /path/to/phonepilot mcp --device sim --sim-profile realistic --db X
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [n, command, ...args] = process.argv.slice(2);
const client = new Client({ name: "phonepilot-bench", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
const textOf = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
const times = {};
const notConfirmed = {};
const call = async (label, name, a) => {
  const t0 = performance.now();
  const res = await client.callTool({ name, arguments: a });
  (times[label] ??= []).push(performance.now() - t0);
  const text = textOf(res);
  if (res.isError) throw new Error(`${name} ${JSON.stringify(a)}: ${text}`);
  if (/NOT confirmed/.test(text)) notConfirmed[label] = (notConfirmed[label] ?? 0) + 1;
  return text;
};
const indexOf = (text, re) => {
  const m = text.match(new RegExp(String.raw`^\[(\d+)\] .*` + re, "m"));
  return m ? Number(m[1]) : -1;
};
await call("observe", "observe", {});
for (let i = 0; i < Number(n); i++) {
  let out = await call("launch_app", "launch_app", { app: "Taobao" });
  if (indexOf(out, "id=poplayer_close") >= 0) out = await call("tap", "tap", { element: indexOf(out, "id=poplayer_close") });
  out = await call("tap", "tap", { element: indexOf(out, "id=home_searchbar") });
  out = await call("type_text", "type_text", { text: "Mac mini", element: indexOf(out, "EditText"), submit: true });
  await call("scroll", "scroll", { direction: "down" });
  await call("press_key back", "press_key", { key: "back" });
  await call("press_key home", "press_key", { key: "home" });
  await call("press_key home on home", "press_key", { key: "home" });
}
const stat = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { mean: Math.round(s.reduce((a, b) => a + b, 0) / s.length), median: Math.round(s[s.length >> 1]), n: s.length };
};
const summary = {};
let all = [];
for (const [k, xs] of Object.entries(times)) {
  summary[k] = stat(xs);
  if (k !== "observe") all = all.concat(xs);
}
summary.direct = stat(all);
console.log("TIMES " + JSON.stringify(summary));
console.log("NOTCONFIRMED " + JSON.stringify(notConfirmed));
await client.close();
