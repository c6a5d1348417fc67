package android.content.pm;

/** JVM fake. */
public class ResolveInfo {
    public ActivityInfo activityInfo;
}
