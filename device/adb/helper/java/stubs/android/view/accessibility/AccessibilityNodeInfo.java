package android.view.accessibility;

import android.graphics.Rect;
import android.os.Bundle;
import java.util.List;

/** Signature stub (public SDK). */
public class AccessibilityNodeInfo {
    public static final int FOCUS_INPUT = 1;
    public static final int ACTION_SET_TEXT = 0x00200000;
    public static final String ACTION_ARGUMENT_SET_TEXT_CHARSEQUENCE = "ACTION_ARGUMENT_SET_TEXT_CHARSEQUENCE";
    public int getChildCount() { throw new RuntimeException("Stub!"); }
    public AccessibilityNodeInfo getChild(int index) { throw new RuntimeException("Stub!"); }
    public CharSequence getText() { throw new RuntimeException("Stub!"); }
    public String getViewIdResourceName() { throw new RuntimeException("Stub!"); }
    public CharSequence getClassName() { throw new RuntimeException("Stub!"); }
    public CharSequence getPackageName() { throw new RuntimeException("Stub!"); }
    public CharSequence getContentDescription() { throw new RuntimeException("Stub!"); }
    public CharSequence getHintText() { throw new RuntimeException("Stub!"); }
    public int getDrawingOrder() { throw new RuntimeException("Stub!"); }
    public boolean isCheckable() { throw new RuntimeException("Stub!"); }
    public boolean isChecked() { throw new RuntimeException("Stub!"); }
    public boolean isClickable() { throw new RuntimeException("Stub!"); }
    public boolean isEnabled() { throw new RuntimeException("Stub!"); }
    public boolean isFocusable() { throw new RuntimeException("Stub!"); }
    public boolean isFocused() { throw new RuntimeException("Stub!"); }
    public boolean isScrollable() { throw new RuntimeException("Stub!"); }
    public boolean isLongClickable() { throw new RuntimeException("Stub!"); }
    public boolean isPassword() { throw new RuntimeException("Stub!"); }
    public boolean isSelected() { throw new RuntimeException("Stub!"); }
    public boolean isVisibleToUser() { throw new RuntimeException("Stub!"); }
    public void getBoundsInScreen(Rect outBounds) { throw new RuntimeException("Stub!"); }
    public AccessibilityNodeInfo findFocus(int focus) { throw new RuntimeException("Stub!"); }
    public List<AccessibilityNodeInfo> findAccessibilityNodeInfosByViewId(String viewId) { throw new RuntimeException("Stub!"); }
    public boolean performAction(int action, Bundle arguments) { throw new RuntimeException("Stub!"); }
}
