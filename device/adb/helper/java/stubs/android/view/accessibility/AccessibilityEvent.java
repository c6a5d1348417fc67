package android.view.accessibility;

import java.util.List;

/** Signature stub (public SDK; the getters are AccessibilityRecord's, API 4). */
public final class AccessibilityEvent {
    public static final int TYPE_WINDOW_CONTENT_CHANGED = 0x800;
    public static final int TYPE_NOTIFICATION_STATE_CHANGED = 0x40;

    private AccessibilityEvent() { throw new RuntimeException("Stub!"); }

    public int getEventType() { throw new RuntimeException("Stub!"); }

    public CharSequence getClassName() { throw new RuntimeException("Stub!"); }

    public CharSequence getPackageName() { throw new RuntimeException("Stub!"); }

    public List<CharSequence> getText() { throw new RuntimeException("Stub!"); }
}
