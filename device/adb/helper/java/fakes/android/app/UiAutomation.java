package android.app;

import android.accessibilityservice.AccessibilityServiceInfo;
import android.graphics.Bitmap;
import android.os.Looper;
import android.view.InputEvent;
import android.view.accessibility.AccessibilityEvent;
import android.view.accessibility.AccessibilityNodeInfo;
import phonepilot.fakes.World;

/** JVM fake: hidden constructor and connect as in AOSP, answers from World. */
public final class UiAutomation {
    private final AccessibilityServiceInfo info = new AccessibilityServiceInfo();
    private boolean connected;

    UiAutomation(Looper looper, IUiAutomationConnection connection) {
        if (looper == null || connection == null) {
            throw new IllegalArgumentException("Looper and connection cannot be null");
        }
    }

    public interface OnAccessibilityEventListener {
        void onAccessibilityEvent(AccessibilityEvent event);
    }

    void connect(int flags) {
        if (World.held) {
            throw new IllegalStateException("Error while connecting UiAutomation@1a2b3c: UiAutomationService android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@4d5e6f already registered!");
        }
        World.connectFlags = flags;
        connected = true;
    }

    void connect() {
        connect(0);
    }

    private void check() {
        if (!connected) {
            throw new IllegalStateException("UiAutomation not connected!");
        }
    }

    public AccessibilityServiceInfo getServiceInfo() {
        check();
        return info;
    }

    public void setServiceInfo(AccessibilityServiceInfo i) {
        check();
        World.serviceFlags = i.flags;
    }

    public void setOnAccessibilityEventListener(OnAccessibilityEventListener l) {
        World.listener = l;
    }

    public AccessibilityNodeInfo getRootInActiveWindow() {
        check();
        return World.nextRoot();
    }

    public boolean clearCache() {
        if (android.os.Build.VERSION.SDK_INT < 34) {
            throw new NoSuchMethodError("clearCache needs API 34");
        }
        World.cacheClears++;
        return true;
    }

    public Bitmap takeScreenshot() {
        check();
        return World.screenshot;
    }

    public boolean injectInputEvent(InputEvent event, boolean sync) {
        check();
        if (World.injectRefused) {
            throw new SecurityException("Injecting to another application requires INJECT_EVENTS permission");
        }
        synchronized (World.injected) {
            World.injected.add(event);
        }
        return true;
    }
}
