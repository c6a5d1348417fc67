package android.view.accessibility;

/** Signature stub (public SDK). */
public final class AccessibilityEvent {
    private AccessibilityEvent() { throw new RuntimeException("Stub!"); }
}
