// Times direct actions through `phonepilot mcp` over stdio with the real
// TypeScript client: N rounds of launch_app Settings then press_key home,
// each call timed from request to answer (settled, with its listing).
//
//   node bench.mjs N /path/to/phonepilot mcp --device sim --db X
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [n, command, ...args] = process.argv.slice(2);
const client = new Client({ name: "phonepilot-bench", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
await client.callTool({ name: "observe", arguments: {} });
const times = { launch_app: [], press_key: [] };
for (let i = 0; i < Number(n); i++) {
  for (const [name, a] of [["launch_app", { app: "Settings" }], ["press_key", { key: "home" }]]) {
    const t0 = performance.now();
    const res = await client.callTool({ name, arguments: a });
    times[name].push(performance.now() - t0);
    if (res.isError) throw new Error(JSON.stringify(res.content));
  }
}
const stat = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { mean: +(s.reduce((a, b) => a + b, 0) / s.length).toFixed(1), median: +s[s.length >> 1].toFixed(1), n: s.length };
};
console.log(JSON.stringify({ launch_app: stat(times.launch_app), press_key: stat(times.press_key) }));
await client.close();
