// Third-party WDA clients against phonepilot's simulated iPhone
// (`phonepilot sim --wda`): Appium 3 with appium-xcuitest-driver, driven by
// webdriverio, and mobile-mcp's WebDriverAgent class. Run by
// device/sim/simwda/clients_test.go:
//
//   node clients.mjs APPIUM_PORT WDA_URL CONTROL_URL
//
// Each call is printed as one JSON line {client, call, ok, result|error};
// the Go test reads them and checks the simulator's state. Known client
// deviations from WDA that the simulator tolerates (each as WDA's own
// sources have it):
//   - mobile-mcp sends pressButton names upper-case ("HOME"); WDA lower-cases
//     them (FBCustomCommands.m handlePressButtonCommand: lowercaseString).
//   - mobile-mcp reads `/source/?format=json` with a trailing slash; WDA's
//     router matches the route without it (FBWebServer.m strips it).
import { remote } from 'webdriverio';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { WebDriverAgent } = require('@mobilenext/mobile-mcp/lib/webdriver-agent.js');

const [appiumPort, wdaURL, controlURL] = process.argv.slice(2);
const out = (client, call, ok, v) => console.log(JSON.stringify({ client, call, ok, ...(ok ? { result: v } : { error: String(v?.message ?? v) }) }));

async function step(client, call, fn) {
  try {
    const v = await fn();
    out(client, call, true, v === undefined ? null : v);
    return v;
  } catch (e) {
    out(client, call, false, e);
    return undefined;
  }
}

const control = (path) => fetch(controlURL + path, { method: 'POST' }).then((r) => r.json());

// --- Appium + xcuitest driver (through webdriverio) ---
const drv = await step('appium', 'new session', () => remote({
  hostname: '127.0.0.1', port: Number(appiumPort), path: '/', logLevel: 'error', connectionRetryCount: 0,
  capabilities: {
    platformName: 'iOS', 'appium:automationName': 'XCUITest', 'appium:webDriverAgentUrl': wdaURL,
    'appium:udid': '00008110-000000000000001E', 'appium:platformVersion': '17.5', 'appium:deviceName': 'iPhone',
    'appium:skipLogCapture': true, 'appium:newCommandTimeout': 120,
  },
}));
if (!drv) process.exit(1);

await step('appium', 'launch Settings', () => drv.execute('mobile: launchApp', { bundleId: 'com.apple.Preferences' }));
await step('appium', 'source has Settings cells', async () => {
  const src = await drv.getPageSource();
  return { length: src.length, cells: (src.match(/XCUIElementTypeCell/g) || []).length };
});
await step('appium', 'find Network row, rect in points', async () => {
  const el = await drv.$('-ios predicate string:label BEGINSWITH "Network"');
  return await el.getElementRect(await el.elementId);
});
await step('appium', 'tap Network row', async () => {
  const el = await drv.$('-ios predicate string:label BEGINSWITH "Network"');
  await el.click();
});
await step('appium', 'tap the Wi-Fi switch', async () => {
  const sw = await drv.$('-ios class chain:**/XCUIElementTypeSwitch').catch(() => null);
  const el = sw && (await sw.isExisting()) ? sw : await drv.$('//XCUIElementTypeSwitch');
  const before = await el.getAttribute('value');
  await el.click();
  return { before };
});
await step('appium', 'home', () => drv.execute('mobile: pressButton', { name: 'home' }));
await step('appium', 'active app after home', () => drv.execute('mobile: activeAppInfo'));
await step('appium', 'launch Contacts', () => drv.execute('mobile: launchApp', { bundleId: 'com.apple.MobileAddressBook' }));
await step('appium', 'drag to scroll', async () => {
  const { width, height } = await drv.getWindowRect();
  await drv.execute('mobile: dragFromToForDuration', { fromX: width / 2, fromY: height * 0.75, toX: width / 2, toY: height * 0.3, duration: 0.1 });
  return { width, height };
});
await step('appium', 'terminate Contacts', () => drv.execute('mobile: terminateApp', { bundleId: 'com.apple.MobileAddressBook' }));
await step('appium', 'Contacts state after terminate', () => drv.execute('mobile: queryAppState', { bundleId: 'com.apple.MobileAddressBook' }));
await step('appium', 'launch Taobao', () => drv.execute('mobile: launchApp', { bundleId: 'com.taobao.taobao4iphone' }));
await step('appium', 'close the ad', async () => {
  const el = await drv.$('~poplayer_close');
  if (await el.isExisting()) await el.click();
});
await step('appium', 'focus the search field', async () => {
  await (await drv.$('~home_searchbar')).click();
  const field = await drv.$('//XCUIElementTypeSearchField');
  return await field.getAttribute('type');
});
await step('appium', 'type Chinese (mobile: keys)', () => drv.execute('mobile: keys', { keys: ['苹果手机'] }));
await step('appium', 'field value', async () => (await drv.$('//XCUIElementTypeSearchField')).getAttribute('value'));
await step('appium', 'screenshot', async () => {
  const b64 = await drv.takeScreenshot();
  const png = Buffer.from(b64, 'base64');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
});
await step('appium', 'no alert: getAlertText', () => drv.getAlertText());
await step('appium', 'permission dialog shown', () => control('/permission-dialog'));
await step('appium', 'alert text', () => drv.getAlertText());
await step('appium', 'alert buttons', () => drv.execute('mobile: alert', { action: 'getButtons' }));
await step('appium', 'accept alert', () => drv.acceptAlert());
await step('appium', 'delete session', () => drv.deleteSession());

// --- mobile-mcp's WebDriverAgent class, straight at WDA ---
const u = new URL(wdaURL);
const mm = new WebDriverAgent(u.hostname, Number(u.port));
await step('mobile-mcp', 'isRunning', () => mm.isRunning());
await step('mobile-mcp', 'getScreenSize', () => mm.getScreenSize());
await step('mobile-mcp', 'pressButton HOME', () => mm.pressButton('HOME'));
await step('mobile-mcp', 'getElementsOnScreen', async () => {
  const els = await mm.getElementsOnScreen();
  return { count: els.length, sample: els.find((e) => e.type === 'Icon' || e.type === 'Button') ?? null };
});
await step('mobile-mcp', 'tap Settings icon', async () => {
  const els = await mm.getElementsOnScreen();
  const icon = els.find((e) => /Settings/.test(e.label ?? ''));
  if (!icon) throw new Error('no Settings icon on the home screen');
  await mm.tap(icon.rect.x + icon.rect.width / 2, icon.rect.y + icon.rect.height / 2);
  return icon.rect;
});
await step('mobile-mcp', 'getScreenshot', async () => {
  const png = await mm.getScreenshot();
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
});

// --- raw WDA where a client should get an error ---
await step('raw', 'call with a stale session', async () => {
  const r = await fetch(`${wdaURL}/session/00000000-0000-0000-0000-000000000000/wda/tap`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ x: 1, y: 1 }) });
  return { status: r.status, value: (await r.json()).value };
});
