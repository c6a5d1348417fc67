package android.accessibilityservice;

/** Signature stub (public SDK). */
public class AccessibilityServiceInfo {
    public static final int FLAG_INCLUDE_NOT_IMPORTANT_VIEWS = 0x2;
    public static final int FLAG_REPORT_VIEW_IDS = 0x10;
    public static final int FLAG_RETRIEVE_INTERACTIVE_WINDOWS = 0x40;
    public int flags;
}
