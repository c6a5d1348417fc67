package android.view.accessibility;

import android.graphics.Rect;
import android.os.Bundle;
import java.util.ArrayList;
import java.util.List;

/** JVM fake: a plain node the tests build into trees. */
public class AccessibilityNodeInfo {
    public static final int FOCUS_INPUT = 1;
    public static final int ACTION_SET_TEXT = 0x00200000;
    public static final String ACTION_ARGUMENT_SET_TEXT_CHARSEQUENCE = "ACTION_ARGUMENT_SET_TEXT_CHARSEQUENCE";

    public CharSequence text, className, packageName, contentDescription, hintText;
    public String viewId;
    public int drawingOrder;
    public boolean checkable, checked, clickable, enabled, focusable, focused, scrollable, longClickable, password, selected;
    public boolean visible = true, editable;
    public int left, top, right, bottom;
    public final List<AccessibilityNodeInfo> children = new ArrayList<AccessibilityNodeInfo>();

    public AccessibilityNodeInfo() {}

    public int getChildCount() { return children.size(); }
    public AccessibilityNodeInfo getChild(int i) { return children.get(i); }
    public CharSequence getText() { return text; }
    public String getViewIdResourceName() { return viewId; }
    public CharSequence getClassName() { return className; }
    public CharSequence getPackageName() { return packageName; }
    public CharSequence getContentDescription() { return contentDescription; }
    public CharSequence getHintText() {
        if (android.os.Build.VERSION.SDK_INT < 26) throw new NoSuchMethodError("getHintText needs API 26");
        return hintText;
    }
    public int getDrawingOrder() {
        if (android.os.Build.VERSION.SDK_INT < 24) throw new NoSuchMethodError("getDrawingOrder needs API 24");
        return drawingOrder;
    }
    public boolean isCheckable() { return checkable; }
    public boolean isChecked() { return checked; }
    public boolean isClickable() { return clickable; }
    public boolean isEnabled() { return enabled; }
    public boolean isFocusable() { return focusable; }
    public boolean isFocused() { return focused; }
    public boolean isScrollable() { return scrollable; }
    public boolean isLongClickable() { return longClickable; }
    public boolean isPassword() { return password; }
    public boolean isSelected() { return selected; }
    public boolean isVisibleToUser() { return visible; }
    public void getBoundsInScreen(Rect r) { r.left = left; r.top = top; r.right = right; r.bottom = bottom; }

    public AccessibilityNodeInfo findFocus(int focus) {
        if (focus == FOCUS_INPUT && focused && editable) return this;
        for (AccessibilityNodeInfo c : children) {
            AccessibilityNodeInfo f = c.findFocus(focus);
            if (f != null) return f;
        }
        return null;
    }

    public List<AccessibilityNodeInfo> findAccessibilityNodeInfosByViewId(String id) {
        List<AccessibilityNodeInfo> out = new ArrayList<AccessibilityNodeInfo>();
        collect(id, out);
        return out;
    }

    private void collect(String id, List<AccessibilityNodeInfo> out) {
        if (id.equals(viewId)) out.add(this);
        for (AccessibilityNodeInfo c : children) c.collect(id, out);
    }

    public boolean performAction(int action, Bundle args) {
        if (action != ACTION_SET_TEXT || !editable) return false;
        text = (CharSequence) args.values.get(ACTION_ARGUMENT_SET_TEXT_CHARSEQUENCE);
        return true;
    }
}
