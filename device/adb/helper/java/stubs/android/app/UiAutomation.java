package android.app;

import android.accessibilityservice.AccessibilityServiceInfo;
import android.graphics.Bitmap;
import android.view.InputEvent;
import android.view.accessibility.AccessibilityEvent;
import android.view.accessibility.AccessibilityNodeInfo;

/** Signature stub (public SDK; the constructor and connect are hidden and reached by reflection). */
public final class UiAutomation {
    private UiAutomation() { throw new RuntimeException("Stub!"); }
    public interface OnAccessibilityEventListener {
        void onAccessibilityEvent(AccessibilityEvent event);
    }
    public AccessibilityServiceInfo getServiceInfo() { throw new RuntimeException("Stub!"); }
    public void setServiceInfo(AccessibilityServiceInfo info) { throw new RuntimeException("Stub!"); }
    public void setOnAccessibilityEventListener(OnAccessibilityEventListener listener) { throw new RuntimeException("Stub!"); }
    public AccessibilityNodeInfo getRootInActiveWindow() { throw new RuntimeException("Stub!"); }
    public boolean clearCache() { throw new RuntimeException("Stub!"); }
    public Bitmap takeScreenshot() { throw new RuntimeException("Stub!"); }
    public boolean injectInputEvent(InputEvent event, boolean sync) { throw new RuntimeException("Stub!"); }
}
