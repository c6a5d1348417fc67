package android.app;

import phonepilot.fakes.World;

/** JVM fake: the hidden statics getService() (API 26+) and getCurrentUser(). */
public class ActivityManager {
    public static Object getService() {
        if (android.os.Build.VERSION.SDK_INT < 26) {
            throw new NoSuchMethodError("ActivityManager.getService needs API 26");
        }
        World.amVia = "ActivityManager.getService";
        return World.activityManager;
    }

    public static int getCurrentUser() { return World.currentUser; }
}
