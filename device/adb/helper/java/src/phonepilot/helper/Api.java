package phonepilot.helper;

import android.os.Build;
import android.view.accessibility.AccessibilityNodeInfo;

/**
 * Every framework member newer than the helper's minimum (API 21) is called
 * here, behind a Build.VERSION.SDK_INT guard: ART resolves a method when the
 * code runs, so an unguarded call fails only on an older phone.
 */
final class Api {
    private Api() {}

    static final int MIN_SDK = 21;

    static int sdk() {
        return Build.VERSION.SDK_INT;
    }

    /** AccessibilityNodeInfo.getDrawingOrder: API 24; "0" before. */
    static String drawingOrder(AccessibilityNodeInfo n) {
        if (sdk() >= 24) {
            return Integer.toString(n.getDrawingOrder());
        }
        return "0";
    }

    /** AccessibilityNodeInfo.getHintText: API 26; "" before. */
    static CharSequence hintText(AccessibilityNodeInfo n) {
        if (sdk() >= 26) {
            return n.getHintText();
        }
        return "";
    }

    /**
     * The dump of newer releases adds drawing-order and hint; the real dumps we
     * hold show them on Android 12 screens. Unverified on a phone: the host may
     * ask for either form explicitly.
     */
    static boolean treeExtrasByDefault() {
        return sdk() >= 31;
    }
}
