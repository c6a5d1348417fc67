package android.content.pm;

/** Signature stub (public SDK). */
public class ActivityInfo extends ComponentInfo {
}
