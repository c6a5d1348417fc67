package android.content.pm;

/** Signature stub (public SDK). */
public class ResolveInfo {
    public ActivityInfo activityInfo;
}
