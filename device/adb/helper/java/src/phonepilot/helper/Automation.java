package phonepilot.helper;

import android.accessibilityservice.AccessibilityServiceInfo;
import android.app.UiAutomation;
import android.graphics.Bitmap;
import android.graphics.Point;
import android.os.Bundle;
import android.os.Looper;
import android.os.SystemClock;
import android.view.Display;
import android.view.InputEvent;
import android.view.KeyEvent;
import android.view.MotionEvent;
import android.view.accessibility.AccessibilityEvent;
import android.view.accessibility.AccessibilityNodeInfo;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The one UiAutomation the helper holds, as the shell user, and what it does
 * with it: read the active window's tree, take a screenshot, set a field's
 * text, inject touches and keys, count accessibility events and keep the
 * toasts they announce.
 */
final class Automation {
    /** connect(int) flag: keep TalkBack and other accessibility services running. */
    static final int FLAG_DONT_SUPPRESS_ACCESSIBILITY_SERVICES = 1;
    static final int SOURCE_TOUCHSCREEN = 0x00001002;
    static final int SOURCE_KEYBOARD = 0x00000101;

    /** Another tool holds the phone's one UiAutomation. */
    static final class HeldException extends Exception {
        HeldException(String message) {
            super(message);
        }
    }

    /** A request that cannot be carried out, with the protocol's error code. */
    static final class Refused extends Exception {
        final byte code;

        Refused(byte code, String message) {
            super(message);
            this.code = code;
        }
    }

    private final UiAutomation ua;
    private final AtomicLong changes = new AtomicLong();
    private volatile long lastChange = SystemClock.uptimeMillis();
    private final Toasts toasts = new Toasts();

    Automation(UiAutomation ua) {
        this.ua = ua;
    }

    /** Builds and connects a UiAutomation as AOSP's own uiautomator command does. */
    static Automation connect(Looper looper) throws Exception {
        Object connection = Class.forName("android.app.UiAutomationConnection").getDeclaredConstructor().newInstance();
        UiAutomation ua = construct(looper, connection);
        try {
            if (Api.sdk() >= 24) {
                Method m = UiAutomation.class.getDeclaredMethod("connect", int.class);
                m.setAccessible(true);
                m.invoke(ua, FLAG_DONT_SUPPRESS_ACCESSIBILITY_SERVICES);
            } else {
                Method m = UiAutomation.class.getDeclaredMethod("connect");
                m.setAccessible(true);
                m.invoke(ua);
            }
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            String msg = String.valueOf(cause.getMessage());
            if (msg.contains("already registered") || msg.contains("already connected")) {
                throw new HeldException("another tool holds the phone's UiAutomation (uiautomator, Appium, Maestro, uiautomator2...): " + msg);
            }
            throw new Exception("UiAutomation.connect failed: " + cause, cause);
        }
        Automation a = new Automation(ua);
        a.configure();
        return a;
    }

    /** Picks UiAutomation's hidden constructor by parameter types: (Looper, connection), or one with a display id too. */
    private static UiAutomation construct(Looper looper, Object connection) throws Exception {
        Constructor<?>[] all = UiAutomation.class.getDeclaredConstructors();
        for (int pass = 0; pass < 2; pass++) {
            for (Constructor<?> c : all) {
                Class<?>[] p = c.getParameterTypes();
                Object[] args = new Object[p.length];
                boolean ok = p.length == 2 || (pass == 1 && p.length == 3);
                boolean sawLooper = false;
                boolean sawConnection = false;
                for (int i = 0; ok && i < p.length; i++) {
                    if (p[i] == Looper.class) {
                        args[i] = looper;
                        sawLooper = true;
                    } else if (p[i].isInstance(connection)) {
                        args[i] = connection;
                        sawConnection = true;
                    } else if (p[i] == int.class) {
                        args[i] = Integer.valueOf(0); // the default display
                    } else {
                        ok = false;
                    }
                }
                if (ok && sawLooper && sawConnection) {
                    c.setAccessible(true);
                    return (UiAutomation) c.newInstance(args);
                }
            }
        }
        throw new Exception("no UiAutomation constructor takes (Looper, IUiAutomationConnection) on this Android build");
    }

    private void configure() {
        AccessibilityServiceInfo info = ua.getServiceInfo();
        if (info != null) {
            info.flags |= AccessibilityServiceInfo.FLAG_INCLUDE_NOT_IMPORTANT_VIEWS
                | AccessibilityServiceInfo.FLAG_REPORT_VIEW_IDS
                | AccessibilityServiceInfo.FLAG_RETRIEVE_INTERACTIVE_WINDOWS;
            ua.setServiceInfo(info);
        }
        ua.setOnAccessibilityEventListener(new UiAutomation.OnAccessibilityEventListener() {
            @Override
            public void onAccessibilityEvent(AccessibilityEvent event) {
                lastChange = SystemClock.uptimeMillis();
                changes.incrementAndGet();
                toasts.heard(event, lastChange);
            }
        });
    }

    /** How many accessibility events the helper has seen. */
    long changes() {
        return changes.get();
    }

    /** The TOASTS reply: the toasts heard after sequence n (Toasts.after). */
    byte[] toastsAfter(long n) {
        return toasts.after(n, SystemClock.uptimeMillis());
    }

    /** Milliseconds since the last accessibility event (since the connection before any). */
    long sinceLastChange() {
        return Math.max(0, SystemClock.uptimeMillis() - lastChange);
    }

    /** The active window's root, read fresh (node cache cleared), retried a few times while null. */
    AccessibilityNodeInfo root() throws Refused, InterruptedException {
        for (int i = 0; i < 5; i++) {
            clearCache();
            AccessibilityNodeInfo root = ua.getRootInActiveWindow();
            if (root != null) {
                return root;
            }
            Thread.sleep(50);
        }
        throw new Refused(Protocol.E_NO_WINDOW, "no active window (null root after 5 tries)");
    }

    private void clearCache() {
        if (Api.sdk() >= 34) {
            ua.clearCache();
            return;
        }
        try {
            Class<?> c = Class.forName("android.view.accessibility.AccessibilityInteractionClient");
            Object client = c.getDeclaredMethod("getInstance").invoke(null);
            Method m = c.getDeclaredMethod("clearCache");
            m.setAccessible(true);
            m.invoke(client);
        } catch (Exception e) {
            // Not on this build: the long-lived connection may read stale nodes.
        }
    }

    /** Display 0's rotation and size (getSize, as uiautomator dump uses), or null. */
    static int[] display() {
        try {
            Class<?> c = Class.forName("android.hardware.display.DisplayManagerGlobal");
            Object global = c.getDeclaredMethod("getInstance").invoke(null);
            Display d = (Display) c.getDeclaredMethod("getRealDisplay", int.class).invoke(global, 0);
            Point p = new Point();
            d.getSize(p);
            return new int[] {d.getRotation(), p.x, p.y};
        } catch (Exception e) {
            return null;
        }
    }

    String tree(boolean extras, int limit) throws Refused, InterruptedException {
        AccessibilityNodeInfo root = root();
        int[] disp = display();
        if (disp == null) {
            disp = new int[] {0, Integer.MAX_VALUE, Integer.MAX_VALUE};
        }
        try {
            return Dumper.dump(root, disp[0], disp[1], disp[2], extras, limit);
        } catch (TreeTooLarge e) {
            throw new Refused(Protocol.E_TOO_LARGE, e.getMessage());
        }
    }

    String frontApp() throws Refused, InterruptedException {
        CharSequence pkg = root().getPackageName();
        return pkg == null ? "" : pkg.toString();
    }

    /** The screen as width, height and RGBA rows without padding. */
    byte[] screenshot() throws Refused {
        Bitmap b = ua.takeScreenshot();
        if (b == null) {
            throw new Refused(Protocol.E_FAILED, "takeScreenshot returned nothing");
        }
        if (Api.sdk() >= 26 && b.getConfig() == Bitmap.Config.HARDWARE) {
            Bitmap soft = b.copy(Bitmap.Config.ARGB_8888, false);
            b.recycle();
            b = soft;
        }
        int w = b.getWidth();
        int h = b.getHeight();
        long size = 8L + 4L * w * h;
        if (size > Protocol.MAX_REPLY) {
            throw new Refused(Protocol.E_TOO_LARGE, "a " + w + "x" + h + " frame is over the reply limit");
        }
        ByteBuffer buf = ByteBuffer.allocate((int) size);
        buf.putInt(w).putInt(h);
        b.copyPixelsToBuffer(buf);
        b.recycle();
        return buf.array();
    }

    /** Sets the text of the focused field (selector empty) or of the field with that resource-id. */
    void setText(String selector, String text) throws Refused, InterruptedException {
        AccessibilityNodeInfo root = root();
        AccessibilityNodeInfo field;
        if (selector.isEmpty()) {
            field = root.findFocus(AccessibilityNodeInfo.FOCUS_INPUT);
            if (field == null) {
                throw new Refused(Protocol.E_NO_FOCUS, "no field has input focus");
            }
        } else {
            List<AccessibilityNodeInfo> found = root.findAccessibilityNodeInfosByViewId(selector);
            if (found == null || found.isEmpty()) {
                throw new Refused(Protocol.E_NOT_FOUND, "no node has resource-id " + selector);
            }
            field = found.get(0);
        }
        Bundle args = new Bundle();
        args.putCharSequence(AccessibilityNodeInfo.ACTION_ARGUMENT_SET_TEXT_CHARSEQUENCE, text);
        if (!field.performAction(AccessibilityNodeInfo.ACTION_SET_TEXT, args)) {
            throw new Refused(Protocol.E_FAILED, "the field refused ACTION_SET_TEXT (not editable?)");
        }
    }

    void tap(int x, int y) throws Refused {
        long down = SystemClock.uptimeMillis();
        touch(down, down, MotionEvent.ACTION_DOWN, x, y);
        touch(down, SystemClock.uptimeMillis(), MotionEvent.ACTION_UP, x, y);
    }

    void longPress(int x, int y, int ms) throws Refused, InterruptedException {
        swipe(x, y, x, y, ms);
    }

    /** Down, moves every ~16 ms along the line, up, over ms milliseconds. */
    void swipe(int x1, int y1, int x2, int y2, int ms) throws Refused, InterruptedException {
        if (ms < 0 || ms > 60000) {
            throw new Refused(Protocol.E_BAD_REQUEST, "duration " + ms + " ms is outside 0..60000");
        }
        long down = SystemClock.uptimeMillis();
        touch(down, down, MotionEvent.ACTION_DOWN, x1, y1);
        int steps = Math.max(1, ms / 16);
        for (int i = 1; i <= steps; i++) {
            if (ms > 0) {
                Thread.sleep(ms / steps);
            }
            float f = (float) i / steps;
            touch(down, SystemClock.uptimeMillis(), MotionEvent.ACTION_MOVE, x1 + (x2 - x1) * f, y1 + (y2 - y1) * f);
        }
        touch(down, SystemClock.uptimeMillis(), MotionEvent.ACTION_UP, x2, y2);
    }

    void key(int code) throws Refused {
        long now = SystemClock.uptimeMillis();
        KeyEvent down = new KeyEvent(now, now, KeyEvent.ACTION_DOWN, code, 0);
        KeyEvent up = new KeyEvent(now, SystemClock.uptimeMillis(), KeyEvent.ACTION_UP, code, 0);
        down.setSource(SOURCE_KEYBOARD);
        up.setSource(SOURCE_KEYBOARD);
        inject(down);
        inject(up);
    }

    private void touch(long down, long at, int action, float x, float y) throws Refused {
        MotionEvent e = MotionEvent.obtain(down, at, action, x, y, 0);
        e.setSource(SOURCE_TOUCHSCREEN);
        inject(e);
        e.recycle();
    }

    private void inject(InputEvent e) throws Refused {
        if (!ua.injectInputEvent(e, true)) {
            throw new Refused(Protocol.E_FAILED, "the phone refused the injected input (some vendors need \"USB debugging (Security settings)\")");
        }
    }
}
