package phonepilot.helper;

import android.graphics.Bitmap;
import android.net.LocalServerSocket;
import android.view.InputEvent;
import android.view.KeyEvent;
import android.view.MotionEvent;
import android.view.accessibility.AccessibilityEvent;
import android.view.accessibility.AccessibilityNodeInfo;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import javax.xml.parsers.DocumentBuilderFactory;

import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;

import phonepilot.fakes.World;

/**
 * The helper's own tests, run on the JVM against the classes enjarify made
 * back from the shipped dex, with fakes of the android classes (fakes/).
 * Prints one line per failure and a count; exits 1 on any failure.
 *
 *   java -cp helper.jar:fakes:test phonepilot.helper.HelperTest UIDUMP_DIR
 */
public final class HelperTest {
    private static int passed;
    private static final List<String> failures = new ArrayList<String>();

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: HelperTest UIDUMP_DIR");
            System.exit(2);
        }
        roundTrips(new File(args[0]));
        escaping();
        clipping();
        naf();
        indexCountsSkippedChildren();
        dialects();
        treeLimit();
        serverProtocol();
        toasts();
        launch();
        held();
        usage();
        idleExit();
        System.out.println("helper JVM tests: " + passed + " passed, " + failures.size() + " failed");
        for (String f : failures) {
            System.out.println("FAIL " + f);
        }
        System.exit(failures.isEmpty() ? 0 : 1);
    }

    private static void check(String name, boolean ok, String detail) {
        if (ok) {
            passed++;
        } else {
            failures.add(name + ": " + detail);
        }
    }

    private static void equal(String name, Object want, Object got) {
        check(name, want == null ? got == null : want.equals(got), "want " + want + ", got " + got);
    }

    // ---- the real dumps, built into fake node trees, come back byte for byte ----

    private static void roundTrips(File dir) throws Exception {
        File[] files = dir.listFiles();
        if (files == null) {
            throw new IOException("no such directory " + dir);
        }
        Arrays.sort(files);
        int done = 0;
        for (File f : files) {
            if (!f.getName().endsWith(".xml")) {
                continue;
            }
            byte[] want = Files.readAllBytes(f.toPath());
            String text = new String(want, "UTF-8");
            if (text.contains("visible-to-user=")) {
                // uiautomator2's (androidx) dumper: indented, all windows, other attributes. Not `uiautomator dump`.
                System.out.println("skip " + f.getName() + ": androidx uiautomator2 format, not uiautomator dump's");
                continue;
            }
            if (text.contains(">\n")) {
                // Re-indented after the dump (uiautomator dump writes no whitespace between tags).
                System.out.println("skip " + f.getName() + ": re-indented, not as uiautomator dump wrote it");
                continue;
            }
            World.reset();
            Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(f);
            Element hierarchy = doc.getDocumentElement();
            Element rootEl = firstElement(hierarchy);
            boolean extras = rootEl.hasAttribute("drawing-order");
            int[] extent = new int[2];
            AccessibilityNodeInfo root = build(rootEl, extent);
            String got = Dumper.dump(root, Integer.parseInt(hierarchy.getAttribute("rotation")), extent[0], extent[1], extras, Integer.MAX_VALUE);
            byte[] gotBytes = got.getBytes("UTF-8");
            boolean same = Arrays.equals(want, gotBytes);
            check("round trip " + f.getName(), same, same ? "" : firstDifference(want, gotBytes));
            done++;
        }
        check("round trips ran", done >= 20, "only " + done + " dumps in " + dir);
        System.out.println("round trips: " + done + " real dumps byte for byte");
    }

    private static String firstDifference(byte[] a, byte[] b) {
        int i = 0;
        while (i < a.length && i < b.length && a[i] == b[i]) {
            i++;
        }
        int from = Math.max(0, i - 80);
        return "differs at byte " + i + "\n  want ..." + slice(a, from, i + 80) + "\n  got  ..." + slice(b, from, i + 80);
    }

    private static String slice(byte[] b, int from, int to) {
        try {
            return new String(b, from, Math.max(0, Math.min(to, b.length) - from), "UTF-8");
        } catch (IOException e) {
            return "?";
        }
    }

    private static Element firstElement(Node n) {
        for (Node c = n.getFirstChild(); c != null; c = c.getNextSibling()) {
            if (c instanceof Element) {
                return (Element) c;
            }
        }
        return null;
    }

    /** A fake node from a <node>; gaps in the children's index become invisible children. */
    private static AccessibilityNodeInfo build(Element e, int[] extent) {
        AccessibilityNodeInfo n = new AccessibilityNodeInfo();
        n.text = e.getAttribute("text");
        n.viewId = e.getAttribute("resource-id");
        n.className = e.getAttribute("class");
        n.packageName = e.getAttribute("package");
        n.contentDescription = e.getAttribute("content-desc");
        n.hintText = e.getAttribute("hint");
        n.drawingOrder = e.hasAttribute("drawing-order") ? Integer.parseInt(e.getAttribute("drawing-order")) : 0;
        n.checkable = bool(e, "checkable");
        n.checked = bool(e, "checked");
        n.clickable = bool(e, "clickable");
        n.enabled = bool(e, "enabled");
        n.focusable = bool(e, "focusable");
        n.focused = bool(e, "focused");
        n.scrollable = bool(e, "scrollable");
        n.longClickable = bool(e, "long-clickable");
        n.password = bool(e, "password");
        n.selected = bool(e, "selected");
        String[] b = e.getAttribute("bounds").replace("][", ",").replace("[", "").replace("]", "").split(",");
        n.left = Integer.parseInt(b[0]);
        n.top = Integer.parseInt(b[1]);
        n.right = Integer.parseInt(b[2]);
        n.bottom = Integer.parseInt(b[3]);
        extent[0] = Math.max(extent[0], n.right);
        extent[1] = Math.max(extent[1], n.bottom);
        for (Node c = e.getFirstChild(); c != null; c = c.getNextSibling()) {
            if (!(c instanceof Element)) {
                continue;
            }
            Element ce = (Element) c;
            int index = Integer.parseInt(ce.getAttribute("index"));
            while (n.children.size() < index) {
                AccessibilityNodeInfo hidden = new AccessibilityNodeInfo();
                hidden.visible = false;
                n.children.add(hidden);
            }
            if (n.children.size() != index) {
                throw new IllegalStateException("child index " + index + " out of order under " + n.className);
            }
            n.children.add(build(ce, extent));
        }
        // A clickable, enabled, unlabelled node the phone did not mark NAF had a labelled
        // descendant the dump leaves out (invisible): give the fake tree one too.
        if (!e.hasAttribute("NAF") && n.clickable && n.enabled && empty(n.text) && empty(n.contentDescription)
                && !labelledVisible(n)) {
            AccessibilityNodeInfo label = new AccessibilityNodeInfo();
            label.visible = false;
            label.contentDescription = "hidden label";
            n.children.add(label);
        }
        return n;
    }

    private static boolean empty(CharSequence s) {
        return s == null || s.length() == 0;
    }

    private static boolean labelledVisible(AccessibilityNodeInfo n) {
        for (AccessibilityNodeInfo c : n.children) {
            if (!empty(c.text) || !empty(c.contentDescription) || labelledVisible(c)) {
                return true;
            }
        }
        return false;
    }

    private static boolean bool(Element e, String name) {
        return "true".equals(e.getAttribute(name));
    }

    // ---- the dumper's rules, one by one ----

    private static AccessibilityNodeInfo node(String cls, int l, int t, int r, int b) {
        AccessibilityNodeInfo n = new AccessibilityNodeInfo();
        n.className = cls;
        n.packageName = "p";
        n.enabled = true;
        n.left = l;
        n.top = t;
        n.right = r;
        n.bottom = b;
        return n;
    }

    private static String attr(String xml, String name) {
        int i = xml.indexOf(" " + name + "=\"");
        if (i < 0) {
            return null;
        }
        int from = i + name.length() + 3;
        return xml.substring(from, xml.indexOf('"', from));
    }

    private static void escaping() {
        AccessibilityNodeInfo n = node("c", 0, 0, 10, 10);
        n.text = "a&b<c>d\"e'f\tg\nh\ri\u0001j\u007fk\u0085l\uFDD0m\u0000n\uD83D\uDE00o\uD83Dp\uFFFEq你好";
        String xml = Dumper.dump(n, 0, 100, 100, false, Integer.MAX_VALUE);
        equal("escaping", "a&amp;b&lt;c&gt;d&quot;e'f&#9;g&#10;h&#13;i.j.k\u0085l.m.n&#128512;o.p.q你好", attr(xml, "text"));
        String doc = Dumper.dump(n, 1, 100, 100, false, Integer.MAX_VALUE);
        check("document shape", doc.startsWith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"1\"><node index=\"0\" text="), doc);
        check("leaf closes with space-slash", xml.endsWith("bounds=\"[0,0][10,10]\" /></hierarchy>"), xml);
        n.text = null;
        equal("null text is empty", "", attr(Dumper.dump(n, 0, 100, 100, false, Integer.MAX_VALUE), "text"));
    }

    private static void clipping() {
        equal("clip partly off-screen", "[0,50][100,100]", attr(Dumper.dump(node("c", -20, 50, 150, 130), 0, 100, 100, false, Integer.MAX_VALUE), "bounds"));
        equal("no overlap keeps bounds", "[120,0][200,50]", attr(Dumper.dump(node("c", 120, 0, 200, 50), 0, 100, 100, false, Integer.MAX_VALUE), "bounds"));
        equal("zero area keeps bounds", "[30,30][30,30]", attr(Dumper.dump(node("c", 30, 30, 30, 30), 0, 100, 100, false, Integer.MAX_VALUE), "bounds"));
    }

    private static void naf() {
        AccessibilityNodeInfo button = node("android.widget.FrameLayout", 0, 0, 10, 10);
        button.clickable = true;
        String xml = Dumper.dump(button, 0, 100, 100, false, Integer.MAX_VALUE);
        check("NAF first on an unlabelled clickable", xml.contains("<node NAF=\"true\" index=\"0\""), xml);
        AccessibilityNodeInfo mid = node("x", 0, 0, 5, 5);
        AccessibilityNodeInfo label = node("x", 0, 0, 5, 5);
        label.visible = false;
        label.contentDescription = "Play";
        mid.children.add(label);
        button.children.add(mid);
        xml = Dumper.dump(button, 0, 100, 100, false, Integer.MAX_VALUE);
        check("a labelled descendant (even invisible) clears NAF", !xml.contains("NAF"), xml);
        AccessibilityNodeInfo list = node("android.widget.ListView", 0, 0, 10, 10);
        list.clickable = true;
        check("ListView never NAF", !Dumper.dump(list, 0, 100, 100, false, Integer.MAX_VALUE).contains("NAF"), "");
        button.enabled = false;
        button.children.clear();
        check("disabled never NAF", !Dumper.dump(button, 0, 100, 100, false, Integer.MAX_VALUE).contains("NAF"), "");
    }

    private static void indexCountsSkippedChildren() {
        AccessibilityNodeInfo root = node("r", 0, 0, 10, 10);
        AccessibilityNodeInfo hidden = node("hidden", 0, 0, 1, 1);
        hidden.visible = false;
        root.children.add(hidden);
        root.children.add(node("shown", 0, 0, 1, 1));
        String xml = Dumper.dump(root, 0, 100, 100, false, Integer.MAX_VALUE);
        check("invisible child skipped", !xml.contains("hidden"), xml);
        check("index counts it", xml.contains("<node index=\"1\" text=\"\" resource-id=\"\" class=\"shown\""), xml);
    }

    private static void dialects() {
        AccessibilityNodeInfo n = node("c", 0, 0, 10, 10);
        n.drawingOrder = 3;
        n.hintText = "Search";
        String xml = Dumper.dump(n, 0, 100, 100, true, Integer.MAX_VALUE);
        check("extras after bounds", xml.contains("bounds=\"[0,0][10,10]\" drawing-order=\"3\" hint=\"Search\" />"), xml);
        android.os.Build.VERSION.SDK_INT = 23;
        xml = Dumper.dump(n, 0, 100, 100, true, Integer.MAX_VALUE);
        check("API 23: guarded, no call to getDrawingOrder/getHintText", xml.contains("drawing-order=\"0\" hint=\"\""), xml);
        equal("default form on API 23", false, Api.treeExtrasByDefault());
        android.os.Build.VERSION.SDK_INT = 31;
        equal("default form on API 31", true, Api.treeExtrasByDefault());
        android.os.Build.VERSION.SDK_INT = 34;
    }

    private static void treeLimit() {
        AccessibilityNodeInfo root = node("r", 0, 0, 10, 10);
        for (int i = 0; i < 100; i++) {
            root.children.add(node("child", 0, 0, 1, 1));
        }
        boolean refused = false;
        try {
            Dumper.dump(root, 0, 100, 100, false, 2000);
        } catch (TreeTooLarge e) {
            refused = true;
        }
        check("tree past the limit refused", refused, "no TooLarge");
    }

    // ---- the helper as a process: Main.run serving the protocol ----

    /** A Host whose exit closes the helper's socket (ending serve) and is recorded. */
    static final class TestHost implements Host {
        volatile int exitStatus = -1;

        @Override
        public void exit(int status) {
            exitStatus = status;
            synchronized (World.sockets) {
                for (LocalServerSocket s : new ArrayList<LocalServerSocket>(World.sockets.values())) {
                    try {
                        s.close();
                    } catch (IOException e) {
                        // closing anyway
                    }
                }
            }
        }

        @Override
        public long now() {
            return System.nanoTime() / 1000000L;
        }
    }

    static final class Running {
        final TestHost host = new TestHost();
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        volatile int status = -1;
        Thread thread;

        String output() {
            try {
                return out.toString("UTF-8");
            } catch (IOException e) {
                return "";
            }
        }
    }

    private static Running start(final String... args) throws Exception {
        final Running r = new Running();
        final PrintStream ps = new PrintStream(r.out, true, "UTF-8");
        r.thread = new Thread(new Runnable() {
            @Override
            public void run() {
                r.status = Main.run(args, ps, r.host, 4242);
            }
        });
        r.thread.setDaemon(true);
        r.thread.start();
        for (int i = 0; i < 200 && !r.output().contains("\n"); i++) {
            Thread.sleep(10);
        }
        return r;
    }

    static final class Client {
        final Socket s;
        final DataInputStream in;
        final DataOutputStream out;

        Client(String name) throws IOException {
            int port;
            synchronized (World.sockets) {
                port = World.sockets.get(name).port();
            }
            s = new Socket(InetAddress.getLoopbackAddress(), port);
            s.setSoTimeout(5000);
            in = new DataInputStream(s.getInputStream());
            out = new DataOutputStream(s.getOutputStream());
        }

        Frame call(int type, byte[] payload) throws IOException {
            out.writeInt(payload.length + 1);
            out.writeByte(type);
            out.write(payload);
            out.flush();
            return read();
        }

        Frame read() throws IOException {
            return Protocol.read(in, Integer.MAX_VALUE);
        }
    }

    private static byte[] ints(int... v) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4 * v.length);
        for (int x : v) {
            b.putInt(x);
        }
        return b.array();
    }

    private static String str(byte[] b, int from) throws IOException {
        return new String(b, from, b.length - from, "UTF-8");
    }

    private static long long8(byte[] b) {
        return java.nio.ByteBuffer.wrap(b, 0, 8).getLong();
    }

    private static String errorOf(Frame f) throws IOException {
        if (f == null || f.type != Protocol.ERROR) {
            return null;
        }
        return f.payload[0] + " " + str(f.payload, 1);
    }

    private static void serverProtocol() throws Exception {
        World.reset();
        AccessibilityNodeInfo root = node("android.widget.FrameLayout", 0, 0, 1080, 2400);
        root.packageName = "com.example.notes";
        AccessibilityNodeInfo field = node("android.widget.EditText", 0, 100, 1080, 200);
        field.packageName = "com.example.notes";
        field.viewId = "com.example.notes:id/title";
        field.editable = true;
        field.focused = true;
        root.children.add(field);
        World.root = root;
        World.screenshot = new Bitmap(2, 1, Bitmap.Config.HARDWARE, new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
        Running r = start("--socket", "pp-test", "--idle-exit", "30");
        check("READY line", r.output().startsWith("READY pp-test 4242"), r.output());
        equal("connect(FLAG_DONT_SUPPRESS_ACCESSIBILITY_SERVICES)", 1, World.connectFlags);
        equal("service flags", 0x2 | 0x10 | 0x40, World.serviceFlags);

        Client c = new Client("pp-test");
        Frame hello = c.read();
        equal("hello first", "H phonepilot-helper proto=3 sdk=34 pid=4242", (char) hello.type + " " + str(hello.payload, 0));

        Frame t = c.call('T', ints(Protocol.TREE_EXPLICIT));
        equal("tree reply type", (int) 'T', (int) t.type);
        equal("tree counter", 0L, long8(t.payload));
        String xml = str(t.payload, 8);
        check("tree is the dump", xml.startsWith("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node index=\"0\"")
            && xml.contains("resource-id=\"com.example.notes:id/title\"") && !xml.contains("drawing-order"), xml);
        check("cache cleared per read (API 34 clearCache)", World.cacheClears == 1, "clears " + World.cacheClears);
        Frame td = c.call('T', new byte[0]);
        check("tree default on API 34 has extras", str(td.payload, 8).contains("drawing-order=\"0\" hint=\"\""), str(td.payload, 8));

        World.listener.onAccessibilityEvent(new AccessibilityEvent());
        World.listener.onAccessibilityEvent(new AccessibilityEvent());
        Thread.sleep(30);
        byte[] ch = c.call('C', new byte[0]).payload;
        equal("change counter", 2L, long8(ch));
        long since = java.nio.ByteBuffer.wrap(ch, 8, 8).getLong();
        check("time since the last change", ch.length == 16 && since >= 25 && since < 5000, "since " + since + " ms, " + ch.length + " bytes");
        equal("tree carries the counter it was read at", 2L, long8(c.call('T', new byte[0]).payload));

        Frame shot = c.call('S', new byte[0]);
        equal("screenshot header+pixels (HARDWARE copied first)", "0 0 0 2 0 0 0 1 1 2 3 4 5 6 7 8", join(shot.payload));

        byte[] text = "你好 👋 café".getBytes("UTF-8");
        Frame st = c.call('X', concat(ints(0), text));
        equal("set text reply", (int) 'X', (int) st.type);
        equal("set text on the focused field, any Unicode", "你好 👋 café", String.valueOf(field.text));
        byte[] sel = "com.example.notes:id/title".getBytes("UTF-8");
        c.call('X', concat(concat(ints(sel.length), sel), "by id".getBytes("UTF-8")));
        equal("set text by resource-id", "by id", String.valueOf(field.text));
        byte[] missing = "nope".getBytes("UTF-8");
        check("unknown resource-id", String.valueOf(errorOf(c.call('X', concat(ints(missing.length), missing)))).startsWith("6 no node has resource-id nope"), "");
        field.focused = false;
        check("no focus", String.valueOf(errorOf(c.call('X', concat(ints(0), text)))).startsWith("3 "), "");
        field.focused = true;

        World.injected.clear();
        c.call('P', ints(100, 200));
        equal("tap injects down and up", "[motion 0 100.0,200.0, motion 1 100.0,200.0]", World.injected.toString());
        check("touch source", World.injected.get(0).source == 0x1002, "source " + World.injected.get(0).source);
        World.injected.clear();
        c.call('W', ints(0, 0, 100, 200, 32));
        List<InputEvent> sw = new ArrayList<InputEvent>(World.injected);
        check("swipe: down, moves, up at the end",
            sw.size() == 4 && ((MotionEvent) sw.get(0)).action == 0 && ((MotionEvent) sw.get(2)).action == 2
                && ((MotionEvent) sw.get(2)).x == 100f && ((MotionEvent) sw.get(3)).action == 1 && ((MotionEvent) sw.get(3)).y == 200f,
            sw.toString());
        World.injected.clear();
        long before = System.nanoTime();
        c.call('L', ints(5, 6, 100));
        long heldMs = (System.nanoTime() - before) / 1000000L;
        MotionEvent last = (MotionEvent) World.injected.get(World.injected.size() - 1);
        check("long press holds in place", heldMs >= 90 && last.action == 1 && last.x == 5f && last.y == 6f, heldMs + "ms " + World.injected);
        World.injected.clear();
        c.call('K', ints(4));
        equal("key down and up", "[key 0 4, key 1 4]", World.injected.toString());
        equal("bad swipe duration", "1 duration -5 ms is outside 0..60000", errorOf(c.call('W', ints(0, 0, 1, 1, -5))));
        World.injectRefused = true;
        check("refused injection says so", String.valueOf(errorOf(c.call('P', ints(1, 1)))).contains("INJECT_EVENTS"), "");
        World.injectRefused = false;

        equal("app in front", "com.example.notes", str(c.call('A', new byte[0]).payload, 0));
        equal("unknown request", "1 unknown request type 90", errorOf(c.call('Z', new byte[0])));
        check("short payload", String.valueOf(errorOf(c.call('P', ints(1)))).startsWith("1 payload too short"), "");
        equal("hello again on request", "phonepilot-helper proto=3 sdk=34 pid=4242", str(c.call('H', new byte[0]).payload, 0));

        World.root = null;
        equal("null root retried, then an error", "4 no active window (null root after 5 tries)", errorOf(c.call('T', new byte[0])));
        World.rootQueue.add(null);
        World.rootQueue.add(null);
        World.root = root;
        equal("root that comes up on a retry", (int) 'T', (int) c.call('T', new byte[0]).type);

        // Size limits: an announced request past the limit is refused and the stream closed.
        c.out.writeInt(Protocol.MAX_REQUEST + 1);
        c.out.flush();
        check("oversized request refused", String.valueOf(errorOf(c.read())).startsWith("2 frame of 1048577 bytes"), "");
        check("then closed", c.read() == null, "stream still open");
        Client z = new Client("pp-test");
        z.read();
        z.out.writeInt(0);
        z.out.flush();
        check("empty frame refused", String.valueOf(errorOf(z.read())).startsWith("2 frame of 0 bytes"), "");

        // A second client after the first left; then quit.
        Client c2 = new Client("pp-test");
        c2.read();
        Frame q = c2.call('Q', new byte[0]);
        equal("quit acknowledged", (int) 'Q', (int) q.type);
        r.thread.join(5000);
        equal("quit exits 0", 0, r.host.exitStatus);

        // On API 33 the cache is cleared through the interaction client.
        World.reset();
        World.root = root;
        android.os.Build.VERSION.SDK_INT = 33;
        Running r33 = start("--socket", "pp-33");
        Client c33 = new Client("pp-33");
        c33.read();
        Frame t33 = c33.call('T', new byte[0]);
        check("API 33 tree has extras by default", str(t33.payload, 8).contains("drawing-order"), "");
        equal("API 33 clears the cache via AccessibilityInteractionClient", 1, World.cacheClears);
        c33.call('Q', new byte[0]);
        r33.thread.join(5000);
        World.reset();
    }

    private static String join(byte[] b) {
        StringBuilder s = new StringBuilder();
        for (byte x : b) {
            if (s.length() > 0) {
                s.append(' ');
            }
            s.append(x);
        }
        return s.toString();
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] out = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    // ---- TOASTS (protocol 3): the toasts the accessibility events announced ----

    private static long[] longs(byte[] b) {
        java.nio.ByteBuffer buf = java.nio.ByteBuffer.wrap(b);
        return new long[] {buf.getLong(), buf.getInt()};
    }

    /** The events of a TOASTS reply as "seq pkg text" lines after the header "now=N". */
    private static String toastReply(Frame f) throws Exception {
        if (f.type == Protocol.ERROR) {
            return "E " + errorOf(f);
        }
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(f.payload);
        StringBuilder out = new StringBuilder("now=" + b.getLong());
        int n = b.getInt();
        for (int i = 0; i < n; i++) {
            long seq = b.getLong();
            long age = b.getLong();
            byte[] p = new byte[b.getInt()];
            b.get(p);
            byte[] t = new byte[b.getInt()];
            b.get(t);
            out.append(" | ").append(seq).append(' ').append(new String(p, "UTF-8")).append(' ').append(new String(t, "UTF-8"));
            if (age < 0 || age > 60000) {
                out.append(" age=").append(age);
            }
        }
        check("toasts reply has nothing after its events", !b.hasRemaining(), b.remaining() + " bytes left");
        return out.toString();
    }

    private static byte[] seq(long n) {
        return java.nio.ByteBuffer.allocate(8).putLong(n).array();
    }

    private static void toasts() throws Exception {
        World.reset();
        World.root = node("r", 0, 0, 1, 1);
        Running r = start("--socket", "pp-toasts");
        Client c = new Client("pp-toasts");
        c.read();
        equal("no toast heard yet", "now=0", toastReply(c.call('N', seq(0))));
        int nsc = AccessibilityEvent.TYPE_NOTIFICATION_STATE_CHANGED;
        // Android 11+ (ToastPresenter): class android.widget.Toast, the app's package, the view's text.
        World.listener.onAccessibilityEvent(new AccessibilityEvent(nsc, "android.widget.Toast", "com.taobao.taobao", "Added to cart"));
        // Not toasts: a notification's event, a content change, a class that only starts like Toast's.
        World.listener.onAccessibilityEvent(new AccessibilityEvent(nsc, "android.app.Notification", "com.example.mail", "New mail"));
        World.listener.onAccessibilityEvent(new AccessibilityEvent(AccessibilityEvent.TYPE_WINDOW_CONTENT_CHANGED, "android.widget.Toast", "com.taobao.taobao", "x"));
        World.listener.onAccessibilityEvent(new AccessibilityEvent(nsc, "android.widget.ToastLike", "com.taobao.taobao", "y"));
        World.listener.onAccessibilityEvent(new AccessibilityEvent());
        // Before Android 11 (Toast.TN): the inner class's name; the text in parts.
        World.listener.onAccessibilityEvent(new AccessibilityEvent(nsc, "android.widget.Toast$TN", "com.example.notes", "Saved", "2 notes"));
        equal("toasts heard, others ignored", "now=2 | 1 com.taobao.taobao Added to cart | 2 com.example.notes Saved 2 notes", toastReply(c.call('N', seq(0))));
        equal("toasts after a sequence", "now=2 | 2 com.example.notes Saved 2 notes", toastReply(c.call('N', seq(1))));
        equal("none after the current one", "now=2", toastReply(c.call('N', seq(2))));
        equal("none after a sequence not reached (another helper's)", "now=2", toastReply(c.call('N', seq(99))));
        equal("change counter still counts every event", 6L, long8(c.call('C', new byte[0]).payload));
        equal("short payload", "1 payload too short: need 4 more bytes at offset 4 of 4", errorOf(c.call('N', ints(0))));

        // Bounds: the last KEEP kept; long texts clipped (not inside a surrogate pair).
        StringBuilder lng = new StringBuilder();
        for (int i = 0; i < Toasts.MAX_TEXT - 1; i++) {
            lng.append('a');
        }
        lng.append("\ud83d\udc4b tail");
        for (int i = 0; i < 20; i++) {
            World.listener.onAccessibilityEvent(new AccessibilityEvent(nsc, "android.widget.Toast", "com.example.notes", i == 19 ? lng.toString() : "t" + i));
        }
        Frame all = c.call('N', seq(0));
        String got = toastReply(all);
        check("only the last 16 kept, oldest first", got.startsWith("now=22 | 7 com.example.notes t4 | 8 com.example.notes t5") && got.split(" \\| ").length == 17, got.substring(0, Math.min(200, got.length())));
        String last = got.substring(got.lastIndexOf(" | ") + 3);
        equal("a long text clipped before a split surrogate pair", "22 com.example.notes " + lng.substring(0, Toasts.MAX_TEXT - 1), last);
        equal("toasts after the oldest kept", "now=22 | 22 com.example.notes " + lng.substring(0, Toasts.MAX_TEXT - 1), toastReply(c.call('N', seq(21))));
        c.call('Q', new byte[0]);
        r.thread.join(5000);
        World.reset();
    }

    // ---- LAUNCH (protocol 2): resolve the launcher activity, start it through the activity manager ----

    private static final String NOTES = "com.example.notes";
    private static final String LAUNCHER_INTENT = "Intent{android.intent.action.MAIN [android.intent.category.LAUNCHER] cmp=com.example.notes/com.example.notes.Main flags=0x10200000}";

    /** One launch on a helper running on release sdk with these fakes; returns the reply ("O ..." or "E code message"). */
    private static String launchOn(int sdk, Object pm, Object am, Object atm, String pkg) throws Exception {
        World.reset();
        World.root = node("r", 0, 0, 1, 1);
        android.os.Build.VERSION.SDK_INT = sdk;
        World.packageManager = pm;
        World.activityManager = am;
        World.activityTaskManager = atm;
        World.currentUser = 10;
        World.launchers.put(NOTES, Arrays.asList("com.example.notes.Main", "com.example.notes.Second"));
        Running r = start("--socket", "pp-launch-" + sdk);
        Client c = new Client("pp-launch-" + sdk);
        c.read();
        Frame f = c.call('O', pkg.getBytes("UTF-8"));
        String got = f.type == Protocol.ERROR ? "E " + errorOf(f) : (char) f.type + " " + str(f.payload, 0);
        c.call('Q', new byte[0]);
        r.thread.join(5000);
        return got;
    }

    private static void launch() throws Exception {
        String want = "O " + NOTES + "/com.example.notes.Main 0";
        // API 34: package manager with long flags, IActivityManager from ActivityManager.getService(), the WithFeature start (what `am start` calls).
        equal("API 34 launch reply", want, launchOn(34, new phonepilot.fakes.Framework.Pm33(), new phonepilot.fakes.Framework.AmBoth(), null, NOTES));
        equal("API 34 resolves with long flags on the current user", "[query(long) slice user=10 Intent{android.intent.action.MAIN [android.intent.category.LAUNCHER] pkg=com.example.notes flags=0x0}]", World.pmCalls.toString());
        equal("API 34 activity manager", "ActivityManager.getService", World.amVia);
        equal("API 34 starts with the feature id, as the shell, on the current user",
            "[IActivityManager.startActivityAsUserWithFeature com.android.shell " + LAUNCHER_INTENT + " user=-2]", World.started.toString());
        // API 30: the first release with startActivityAsUserWithFeature.
        launchOn(30, new phonepilot.fakes.Framework.Pm24(), new phonepilot.fakes.Framework.AmBoth(), null, NOTES);
        check("API 30 uses WithFeature", World.started.toString().startsWith("[IActivityManager.startActivityAsUserWithFeature "), World.started.toString());
        // API 29: both exist on a build that backported it, but 29 has only the plain one: the plain one is picked.
        equal("API 29 launch reply", want, launchOn(29, new phonepilot.fakes.Framework.Pm24(), new phonepilot.fakes.Framework.AmBoth(), null, NOTES));
        check("API 29 uses startActivityAsUser and int flags",
            World.started.toString().startsWith("[IActivityManager.startActivityAsUser com.android.shell ") && World.pmCalls.get(0).startsWith("query(int) slice"),
            World.started + " " + World.pmCalls);
        // API 23: a List from the package manager, ActivityManagerNative.getDefault() (getService is API 26).
        equal("API 23 launch reply", want, launchOn(23, new phonepilot.fakes.Framework.Pm21(), new phonepilot.fakes.Framework.AmPlain(), null, NOTES));
        equal("API 23 activity manager", "ActivityManagerNative.getDefault", World.amVia);
        check("API 23 plain start", World.started.toString().startsWith("[IActivityManager.startActivityAsUser com.android.shell "), World.started.toString());
        // A package manager of the other flag width than its release says still answers.
        equal("long-flag package manager on API 32", want, launchOn(32, new phonepilot.fakes.Framework.Pm33(), new phonepilot.fakes.Framework.AmBoth(), null, NOTES));
        // API 31 whose IActivityManager lacks both: the activity task manager's startActivityAsUser (with a feature id).
        equal("API 31 through the task manager", want, launchOn(31, new phonepilot.fakes.Framework.Pm24(), new phonepilot.fakes.Framework.AmNone(), new phonepilot.fakes.Framework.Atm30(), NOTES));
        check("API 31 task manager start", World.started.toString().startsWith("[IActivityTaskManager.startActivityAsUser com.android.shell "), World.started.toString());
        // API 28 without a start method (no task manager before 29): unsupported, nothing started.
        String none = launchOn(28, new phonepilot.fakes.Framework.Pm24(), new phonepilot.fakes.Framework.AmNone(), new phonepilot.fakes.Framework.Atm30(), NOTES);
        check("no start method: unsupported", none.startsWith("E 8 no startActivityAsUser method"), none);
        equal("no start method: nothing started", 0, World.started.size());
        // No package manager at all.
        String nopm = launchOn(34, null, new phonepilot.fakes.Framework.AmBoth(), null, NOTES);
        check("no package manager: unsupported", nopm.startsWith("E 8 "), nopm);
        // An unknown package: not found, nothing started.
        String unknown = launchOn(34, new phonepilot.fakes.Framework.Pm33(), new phonepilot.fakes.Framework.AmBoth(), null, "com.example.none");
        equal("unknown package", "E 6 no launcher activity in com.example.none (not installed, or nothing to launch)", unknown);
        equal("unknown package: nothing started", 0, World.started.size());
        check("empty package", launchOn(34, new phonepilot.fakes.Framework.Pm33(), new phonepilot.fakes.Framework.AmBoth(), null, "").startsWith("E 1 "), "");
        // The activity manager's refusals come back with their names.
        World.reset();
        final int[] results = {-94, 100, -1};
        final String[] names = {"START_PERMISSION_DENIED (-94)", "START_SWITCHES_CANCELED (100)", "result -1"};
        for (int i = 0; i < results.length; i++) {
            android.os.Build.VERSION.SDK_INT = 34;
            World.root = node("r", 0, 0, 1, 1);
            World.launchers.put(NOTES, Arrays.asList("com.example.notes.Main"));
            World.startResult = results[i];
            Running r = start("--socket", "pp-refuse-" + i);
            Client c = new Client("pp-refuse-" + i);
            c.read();
            String e = String.valueOf(errorOf(c.call('O', NOTES.getBytes("UTF-8"))));
            check("refused " + results[i], e.startsWith("7 the activity manager did not start com.example.notes/com.example.notes.Main: " + names[i]), e);
            c.call('Q', new byte[0]);
            r.thread.join(5000);
        }
        World.startResult = 2; // START_TASK_TO_FRONT: the app was running
        Running r = start("--socket", "pp-front");
        Client c = new Client("pp-front");
        c.read();
        equal("task brought to front is a launch", "com.example.notes/com.example.notes.Main 2", str(c.call('O', NOTES.getBytes("UTF-8")).payload, 0));
        World.startResult = 0;
        World.startThrows = new SecurityException("Permission Denial: starting Intent not exported from uid 10123");
        String sec = String.valueOf(errorOf(c.call('O', NOTES.getBytes("UTF-8"))));
        check("a SecurityException is a refusal", sec.startsWith("7 the activity manager refused to start com.example.notes/com.example.notes.Main: java.lang.SecurityException: Permission Denial"), sec);
        World.startThrows = new IllegalStateException("boom");
        check("another exception is a failure", String.valueOf(errorOf(c.call('O', NOTES.getBytes("UTF-8")))).startsWith("5 "), "");
        World.startThrows = null;
        equal("the helper still serves after refusals", (int) 'O', (int) c.call('O', NOTES.getBytes("UTF-8")).type);
        c.call('Q', new byte[0]);
        r.thread.join(5000);
        World.reset();
    }

    private static void held() throws Exception {
        World.reset();
        World.held = true;
        Running r = start("--socket", "pp-held");
        r.thread.join(5000);
        equal("held exit status", Main.EXIT_HELD, r.status);
        check("held message", r.output().startsWith("ERROR held another tool holds the phone's UiAutomation")
            && r.output().contains("already registered"), r.output());
        check("held: no socket", !World.sockets.containsKey("pp-held"), "");
    }

    private static void usage() throws Exception {
        World.reset();
        Running r = start("--idle-exit", "2");
        r.thread.join(5000);
        equal("no socket name", Main.EXIT_USAGE, r.status);
        r = start("--socket", "x", "--idle-exit", "-1");
        r.thread.join(5000);
        equal("bad idle", Main.EXIT_USAGE, r.status);
        World.reset();
        World.root = node("r", 0, 0, 1, 1);
        Running a = start("--socket", "pp-dup", "--idle-exit", "30");
        Running b = start("--socket", "pp-dup");
        b.thread.join(5000);
        check("socket name taken", b.status == Main.EXIT_SOCKET && b.output().startsWith("ERROR socket @pp-dup"), b.output());
        a.host.exit(0);
        a.thread.join(5000);
    }

    private static void idleExit() throws Exception {
        World.reset();
        World.root = node("r", 0, 0, 1, 1);
        Running r = start("--socket", "pp-idle", "--idle-exit", "0.3");
        Client c = new Client("pp-idle");
        c.read();
        Thread.sleep(600);
        equal("no exit while a client is connected", -1, r.host.exitStatus);
        c.s.close();
        r.thread.join(3000);
        equal("exit once the client has been gone the idle time", 0, r.host.exitStatus);
        World.reset();
    }
}
