package phonepilot.helper;

import android.graphics.Rect;
import android.view.accessibility.AccessibilityNodeInfo;

/**
 * Writes an accessibility node tree as the XML `uiautomator dump` writes:
 * the same header, element and attribute order, the same escaping (that of
 * Android's XML serializer), NAF marks, `index` counting skipped invisible
 * children, and bounds clipped to the display unless they do not overlap it.
 * Where the platform's serializer would reject a character and fail the whole
 * dump (NUL, a lone surrogate, U+FFFE/U+FFFF) the helper writes '.' instead.
 */
final class Dumper {
    private static final String[] NAF_EXCLUDED = {
        "android.widget.GridView", "android.widget.GridLayout", "android.widget.ListView", "android.widget.TableLayout",
    };

    private final StringBuilder out = new StringBuilder(64 * 1024);
    private final int width;
    private final int height;
    private final boolean extras;
    private final int limit;

    /**
     * @param width, height the display size bounds are clipped to
     * @param extras write drawing-order and hint after bounds (the dump of newer Android releases)
     * @param limit the most characters the XML may have
     */
    Dumper(int width, int height, boolean extras, int limit) {
        this.width = width;
        this.height = height;
        this.extras = extras;
        this.limit = limit;
    }

    /** The whole document for one window's root. */
    static String dump(AccessibilityNodeInfo root, int rotation, int width, int height, boolean extras, int limit) {
        Dumper d = new Dumper(width, height, extras, limit);
        d.out.append("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>");
        d.out.append("<hierarchy rotation=\"").append(rotation).append("\">");
        d.node(root, 0);
        d.out.append("</hierarchy>");
        return d.out.toString();
    }

    private void node(AccessibilityNodeInfo n, int index) {
        if (out.length() > limit) {
            throw new TreeTooLarge(limit);
        }
        out.append("<node");
        if (!nafExcluded(n) && isNaf(n)) {
            attr("NAF", "true");
        }
        attr("index", Integer.toString(index));
        attr("text", n.getText());
        attr("resource-id", n.getViewIdResourceName());
        attr("class", n.getClassName());
        attr("package", n.getPackageName());
        attr("content-desc", n.getContentDescription());
        attr("checkable", bool(n.isCheckable()));
        attr("checked", bool(n.isChecked()));
        attr("clickable", bool(n.isClickable()));
        attr("enabled", bool(n.isEnabled()));
        attr("focusable", bool(n.isFocusable()));
        attr("focused", bool(n.isFocused()));
        attr("scrollable", bool(n.isScrollable()));
        attr("long-clickable", bool(n.isLongClickable()));
        attr("password", bool(n.isPassword()));
        attr("selected", bool(n.isSelected()));
        attr("bounds", bounds(n));
        if (extras) {
            attr("drawing-order", Api.drawingOrder(n));
            attr("hint", Api.hintText(n));
        }
        int count = n.getChildCount();
        boolean open = false;
        for (int i = 0; i < count; i++) {
            AccessibilityNodeInfo child = n.getChild(i);
            if (child == null || !child.isVisibleToUser()) {
                continue;
            }
            if (!open) {
                out.append('>');
                open = true;
            }
            node(child, i);
        }
        out.append(open ? "</node>" : " />");
    }

    private String bounds(AccessibilityNodeInfo n) {
        Rect r = new Rect();
        n.getBoundsInScreen(r);
        int l = r.left;
        int t = r.top;
        int rr = r.right;
        int b = r.bottom;
        // Clip to the display only when they overlap (else the bounds stay as they are).
        if (l < width && 0 < rr && t < height && 0 < b) {
            l = Math.max(l, 0);
            t = Math.max(t, 0);
            rr = Math.min(rr, width);
            b = Math.min(b, height);
        }
        return "[" + l + "," + t + "][" + rr + "," + b + "]";
    }

    private static String bool(boolean b) {
        return b ? "true" : "false";
    }

    private static boolean nafExcluded(AccessibilityNodeInfo n) {
        String cls = text(n.getClassName());
        for (String c : NAF_EXCLUDED) {
            if (cls.endsWith(c)) {
                return true;
            }
        }
        return false;
    }

    /** Clickable and enabled with no text or description, and no labelled descendant. */
    private static boolean isNaf(AccessibilityNodeInfo n) {
        if (!(n.isClickable() && n.isEnabled() && text(n.getContentDescription()).isEmpty() && text(n.getText()).isEmpty())) {
            return false;
        }
        return !labelledDescendant(n);
    }

    private static boolean labelledDescendant(AccessibilityNodeInfo n) {
        int count = n.getChildCount();
        for (int i = 0; i < count; i++) {
            AccessibilityNodeInfo c = n.getChild(i);
            if (c == null) {
                continue;
            }
            if (!text(c.getContentDescription()).isEmpty() || !text(c.getText()).isEmpty()) {
                return true;
            }
            if (labelledDescendant(c)) {
                return true;
            }
        }
        return false;
    }

    private static String text(CharSequence cs) {
        return cs == null ? "" : cs.toString();
    }

    private void attr(String name, CharSequence value) {
        out.append(' ').append(name).append("=\"");
        escape(value == null ? "" : value);
        out.append('"');
    }

    /**
     * uiautomator's character filter (XML 1.1 restricted characters become
     * '.') followed by the serializer's attribute escaping: &amp; &lt; &gt;
     * &quot;, tab/newline/return as character references, a supplementary
     * character as one decimal reference, everything else as itself.
     */
    private void escape(CharSequence s) {
        int n = s.length();
        for (int i = 0; i < n; i++) {
            char c = s.charAt(i);
            if (restricted(c)) {
                out.append('.');
                continue;
            }
            switch (c) {
                case '&':
                    out.append("&amp;");
                    break;
                case '<':
                    out.append("&lt;");
                    break;
                case '>':
                    out.append("&gt;");
                    break;
                case '"':
                    out.append("&quot;");
                    break;
                case '\t':
                case '\n':
                case '\r':
                    out.append("&#").append((int) c).append(';');
                    break;
                default:
                    if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                        out.append("&#").append(Character.toCodePoint(c, s.charAt(i + 1))).append(';');
                        i++;
                    } else if (c == 0 || Character.isSurrogate(c) || c > 0xfffd) {
                        out.append('.');
                    } else {
                        out.append(c);
                    }
            }
        }
    }

    private static boolean restricted(char c) {
        return (c >= 0x1 && c <= 0x8) || c == 0xb || c == 0xc || (c >= 0xe && c <= 0x1f)
            || (c >= 0x7f && c <= 0x84) || (c >= 0x86 && c <= 0x9f) || (c >= 0xfdd0 && c <= 0xfddf);
    }
}
