package android.content.pm;

/** JVM fake. */
public class ActivityInfo extends ComponentInfo {
}
