package android.app;

import phonepilot.fakes.World;

/** JVM fake: getDefault(), the activity manager before API 26. */
public abstract class ActivityManagerNative {
    public static Object getDefault() {
        World.amVia = "ActivityManagerNative.getDefault";
        return World.activityManager;
    }
}
