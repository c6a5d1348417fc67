package android.app;

import phonepilot.fakes.World;

/** JVM fake: getService(), the activity task manager (API 29+). */
public class ActivityTaskManager {
    public static Object getService() {
        if (android.os.Build.VERSION.SDK_INT < 29) {
            throw new NoSuchMethodError("ActivityTaskManager needs API 29");
        }
        return World.activityTaskManager;
    }
}
