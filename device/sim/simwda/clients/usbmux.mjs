// appium-ios-device's usbmux client (the one appium-xcuitest-driver uses
// to reach a real iPhone; pinned through appium-xcuitest-driver in
// package-lock.json) against phonepilot's simulated usbmuxd
// (`phonepilot sim --usbmuxd`). Run by
// cmd/phonepilot/ios_usb_test.go (TestThirdPartyUsbmuxClient) with
// USBMUXD_SOCKET_ADDRESS set:
//
//   node usbmux.mjs UDID
//
// Each call is printed as one JSON line {client, call, ok, result|error}.
import { createRequire } from 'node:module';

// appium-ios-device is appium-xcuitest-driver's dependency: resolve it from
// the driver's own directory, as the driver does.
const fromDriver = createRequire(new URL('./node_modules/appium-xcuitest-driver/package.json', import.meta.url));
const { utilities, Usbmux } = fromDriver('appium-ios-device');
const { getDefaultSocket } = fromDriver('appium-ios-device/build/lib/usbmux/index.js');

const [udid] = process.argv.slice(2);
const out = (call, ok, v) => console.log(JSON.stringify({ client: 'appium-ios-device', call, ok, ...(ok ? { result: v } : { error: String(v?.message ?? v) }) }));

async function step(call, fn) {
  try {
    const v = await fn();
    out(call, true, v === undefined ? null : v);
    return v;
  } catch (e) {
    out(call, false, e);
    return undefined;
  }
}

// One usbmuxd connection per call, as the library's own helpers do.
async function withMux(fn) {
  const mux = new Usbmux(await getDefaultSocket());
  try {
    return await fn(mux);
  } finally {
    mux.close();
  }
}

// An HTTP/1.1 request over a tunnel to the device's port: the tunnel is a
// raw socket, so the request is written by hand.
async function httpOver(deviceID, port, method, path, body) {
  const mux = new Usbmux(await getDefaultSocket());
  const sock = await mux.connect(deviceID, port);
  const payload = body === undefined ? '' : JSON.stringify(body);
  return await new Promise((resolve, reject) => {
    const chunks = [];
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', reject);
    sock.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const [head, ...rest] = raw.split('\r\n\r\n');
      resolve({ status: Number(head.split(' ')[1]), body: JSON.parse(rest.join('\r\n\r\n')) });
    });
    sock.write(`${method} ${path} HTTP/1.1\r\nHost: localhost:${port}\r\nConnection: close\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`);
    sock.resume(); // connect() unpiped usbmux's decoder and left the socket paused
  });
}

setTimeout(() => { console.error('usbmux.mjs: timed out'); process.exit(3); }, 60000).unref();
await step('getConnectedDevices', () => utilities.getConnectedDevices());
const dev = await step('findDevice', () => withMux((m) => m.findDevice(udid)));
const id = dev?.Properties?.DeviceID;
await step('GET /status through a tunnel to 8100', () => httpOver(id, 8100, 'GET', '/status'));
const session = await step('POST /session through a tunnel', () => httpOver(id, 8100, 'POST', '/session', { capabilities: { alwaysMatch: {} } }));
const sid = session?.body?.sessionId;
await step('launch Settings through a tunnel', () => httpOver(id, 8100, 'POST', `/session/${sid}/wda/apps/launch`, { bundleId: 'com.apple.Preferences' }));
await step('active app through a tunnel', () => httpOver(id, 8100, 'GET', `/session/${sid}/wda/activeAppInfo`));
await step('connect to port 9100 (nothing there)', () => withMux((m) => m.connect(id, 9100)));
await step('connect to device 99 (not attached)', () => withMux((m) => m.connect(99, 8100)));
await step('findDevice unknown UDID', () => withMux((m) => m.findDevice('00008101-FFFFFFFFFFFFFFFF')));
