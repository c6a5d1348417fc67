package android.app;

import phonepilot.fakes.World;

/** JVM fake: the hidden static getPackageManager() hands out the test's IPackageManager. */
public final class ActivityThread {
    public static Object getPackageManager() { return World.packageManager; }
}
