package phonepilot.fakes;

import android.app.UiAutomation;
import android.graphics.Bitmap;
import android.view.InputEvent;
import android.view.accessibility.AccessibilityNodeInfo;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The fake phone the JVM tests set up: what the fake framework classes answer. */
public final class World {
    private World() {}

    /** The active window's root (null: no window). */
    public static volatile AccessibilityNodeInfo root;
    /** Roots to hand out first, one per call (null entries model a window still coming up). */
    public static final List<AccessibilityNodeInfo> rootQueue = new ArrayList<AccessibilityNodeInfo>();
    public static volatile int displayWidth = 1080;
    public static volatile int displayHeight = 2400;
    public static volatile int rotation = 0;
    /** Another tool holds the UiAutomation: connect fails as on a phone. */
    public static volatile boolean held;
    /** Input injection is refused (vendor "USB debugging (Security settings)" off). */
    public static volatile boolean injectRefused;
    public static volatile Bitmap screenshot;
    public static final List<InputEvent> injected = new ArrayList<InputEvent>();
    public static volatile UiAutomation.OnAccessibilityEventListener listener;
    public static volatile int connectFlags = -1;
    public static volatile int serviceFlags;
    public static volatile int cacheClears;
    /** Abstract socket names bound by the fake LocalServerSocket. */
    public static final Map<String, android.net.LocalServerSocket> sockets = new HashMap<String, android.net.LocalServerSocket>();
    /** The binder interfaces Starter reaches (Framework's classes), and what they answer. */
    public static volatile Object packageManager;
    public static volatile Object activityManager;
    public static volatile Object activityTaskManager;
    /** Which static handed out the activity manager. */
    public static volatile String amVia;
    public static volatile int currentUser;
    /** Launcher activities by package. */
    public static final Map<String, List<String>> launchers = new HashMap<String, List<String>>();
    public static final List<String> pmCalls = new ArrayList<String>();
    public static final List<String> started = new ArrayList<String>();
    public static volatile int startResult;
    public static volatile RuntimeException startThrows;

    public static synchronized void reset() {
        root = null;
        rootQueue.clear();
        displayWidth = 1080;
        displayHeight = 2400;
        rotation = 0;
        held = false;
        injectRefused = false;
        screenshot = null;
        injected.clear();
        listener = null;
        connectFlags = -1;
        serviceFlags = 0;
        cacheClears = 0;
        packageManager = new Framework.Pm33();
        activityManager = new Framework.AmBoth();
        activityTaskManager = new Framework.Atm30();
        amVia = null;
        currentUser = 0;
        launchers.clear();
        pmCalls.clear();
        started.clear();
        startResult = 0;
        startThrows = null;
        android.os.Build.VERSION.SDK_INT = 34;
    }

    public static synchronized AccessibilityNodeInfo nextRoot() {
        if (!rootQueue.isEmpty()) {
            return rootQueue.remove(0);
        }
        return root;
    }
}
