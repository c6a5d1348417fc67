package android.view.accessibility;

/** JVM fake. */
public final class AccessibilityEvent {
    public AccessibilityEvent() {}
}
