package android.view.accessibility;

import java.util.ArrayList;
import java.util.List;

/** JVM fake: the getters a listener reads, set by the test. */
public final class AccessibilityEvent {
    public static final int TYPE_WINDOW_CONTENT_CHANGED = 0x800;
    public static final int TYPE_NOTIFICATION_STATE_CHANGED = 0x40;

    private final int type;
    private final CharSequence className;
    private final CharSequence packageName;
    private final List<CharSequence> text = new ArrayList<CharSequence>();

    /** A content change of an unnamed view. */
    public AccessibilityEvent() {
        this(TYPE_WINDOW_CONTENT_CHANGED, "android.widget.FrameLayout", "com.example", new CharSequence[0]);
    }

    public AccessibilityEvent(int type, CharSequence className, CharSequence packageName, CharSequence... text) {
        this.type = type;
        this.className = className;
        this.packageName = packageName;
        for (CharSequence t : text) {
            this.text.add(t);
        }
    }

    public int getEventType() {
        return type;
    }

    public CharSequence getClassName() {
        return className;
    }

    public CharSequence getPackageName() {
        return packageName;
    }

    public List<CharSequence> getText() {
        return text;
    }
}
