package phonepilot.helper;

import android.content.Intent;
import android.content.pm.ResolveInfo;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.List;

/**
 * Starts an app's launcher activity from inside the helper, through the
 * activity manager's binder, as a launcher does: no `monkey` or `am`
 * process (each a new Java VM on the phone). The activity is resolved with
 * the package manager's binder (ACTION_MAIN + CATEGORY_LAUNCHER in the
 * package, the first match, as PackageManager.getLaunchIntentForPackage
 * does), then started with NEW_TASK | RESET_TASK_IF_NEEDED as the shell
 * package on the current user, as `am start` does.
 *
 * Every member is hidden and differs across releases: each is found by
 * reflection, by name and parameter types, behind a Build.VERSION.SDK_INT
 * guard (docs/device-helper.md lists them).
 */
final class Starter {
    private Starter() {}

    static final String ACTION_MAIN = "android.intent.action.MAIN";
    static final String CATEGORY_LAUNCHER = "android.intent.category.LAUNCHER";
    static final int FLAG_ACTIVITY_NEW_TASK = 0x10000000;
    static final int FLAG_ACTIVITY_RESET_TASK_IF_NEEDED = 0x00200000;
    /** The shell's package: the calling package must belong to the calling uid (2000). */
    static final String SHELL_PACKAGE = "com.android.shell";
    /** UserHandle.USER_CURRENT, what `am start` passes by default. */
    static final int USER_CURRENT = -2;

    /** Starts pkg's launcher activity; returns "pkg/activity code". */
    static String launch(String pkg) throws Automation.Refused {
        if (pkg.isEmpty()) {
            throw new Automation.Refused(Protocol.E_BAD_REQUEST, "no package named");
        }
        String activity = launcherActivity(pkg);
        Intent intent = new Intent(ACTION_MAIN);
        intent.addCategory(CATEGORY_LAUNCHER);
        intent.setClassName(pkg, activity);
        intent.addFlags(FLAG_ACTIVITY_NEW_TASK | FLAG_ACTIVITY_RESET_TASK_IF_NEEDED);
        int code = start(intent, pkg + "/" + activity);
        return pkg + "/" + activity + " " + code;
    }

    // ---- resolving the launcher activity (IPackageManager) ----

    /** The class name of pkg's first launcher activity, or E_NOT_FOUND. */
    static String launcherActivity(String pkg) throws Automation.Refused {
        Object pm;
        try {
            pm = Class.forName("android.app.ActivityThread").getMethod("getPackageManager").invoke(null);
        } catch (Exception e) {
            throw unsupported("ActivityThread.getPackageManager()", e);
        }
        if (pm == null) {
            throw new Automation.Refused(Protocol.E_UNSUPPORTED, "no package manager service");
        }
        Intent query = new Intent(ACTION_MAIN);
        query.addCategory(CATEGORY_LAUNCHER);
        query.setPackage(pkg);
        // The flags parameter is an int until API 32, a long from API 33.
        boolean longFlags = Api.sdk() >= 33;
        Method m = method(pm, "queryIntentActivities", Intent.class, String.class, longFlags ? long.class : int.class, int.class);
        if (m == null) {
            longFlags = !longFlags;
            m = method(pm, "queryIntentActivities", Intent.class, String.class, longFlags ? long.class : int.class, int.class);
        }
        if (m == null) {
            throw new Automation.Refused(Protocol.E_UNSUPPORTED, "IPackageManager.queryIntentActivities(Intent, String, int|long, int) is not on this Android build");
        }
        Object found;
        try {
            found = m.invoke(pm, query, null, longFlags ? (Object) Long.valueOf(0) : (Object) Integer.valueOf(0), Integer.valueOf(currentUser()));
        } catch (InvocationTargetException e) {
            throw new Automation.Refused(Protocol.E_FAILED, "queryIntentActivities: " + cause(e));
        } catch (IllegalAccessException e) {
            throw unsupported("queryIntentActivities", e);
        }
        List<?> list = asList(found);
        if (list != null) {
            for (Object o : list) {
                if (o instanceof ResolveInfo) {
                    ResolveInfo ri = (ResolveInfo) o;
                    if (ri.activityInfo != null && ri.activityInfo.name != null) {
                        return ri.activityInfo.name;
                    }
                }
            }
        }
        throw new Automation.Refused(Protocol.E_NOT_FOUND, "no launcher activity in " + pkg + " (not installed, or nothing to launch)");
    }

    /** A List (API 21–23) or a ParceledListSlice (API 24+, its getList()). */
    private static List<?> asList(Object found) throws Automation.Refused {
        if (found == null || found instanceof List) {
            return (List<?>) found;
        }
        try {
            Object l = found.getClass().getMethod("getList").invoke(found);
            return l instanceof List ? (List<?>) l : null;
        } catch (Exception e) {
            throw unsupported(found.getClass().getName() + ".getList()", e);
        }
    }

    /** The current user (ActivityManager.getCurrentUser(), hidden static, API 17); 0 when it cannot be read. */
    static int currentUser() {
        try {
            Object u = Class.forName("android.app.ActivityManager").getMethod("getCurrentUser").invoke(null);
            return u instanceof Integer ? ((Integer) u).intValue() : 0;
        } catch (Exception e) {
            return 0;
        }
    }

    // ---- starting it (IActivityManager, IActivityTaskManager) ----

    /** Starts the intent; returns the activity manager's result code, or refuses with its name. */
    private static int start(Intent intent, String what) throws Automation.Refused {
        Object am = activityManager();
        Object[] found = startMethod(am, Api.sdk() >= 30);
        if (found == null && Api.sdk() >= 29) {
            // A build whose IActivityManager lacks both: the task manager took activities over in API 29.
            Object atm = activityTaskManager();
            found = startMethod(atm, Api.sdk() >= 30);
        }
        if (found == null) {
            throw new Automation.Refused(Protocol.E_UNSUPPORTED, "no startActivityAsUser method on this Android build's activity manager");
        }
        Method m = (Method) found[1];
        boolean feature = m.getParameterTypes().length == 12;
        Object[] args;
        if (feature) {
            // (caller, callingPackage, callingFeatureId, intent, resolvedType, resultTo, resultWho, requestCode, flags, profilerInfo, options, userId)
            args = new Object[] {null, SHELL_PACKAGE, null, intent, null, null, null, 0, 0, null, null, USER_CURRENT};
        } else {
            // (caller, callingPackage, intent, resolvedType, resultTo, resultWho, requestCode, flags, profilerInfo, options, userId)
            args = new Object[] {null, SHELL_PACKAGE, intent, null, null, null, 0, 0, null, null, USER_CURRENT};
        }
        Object res;
        try {
            res = m.invoke(found[0], args);
        } catch (InvocationTargetException e) {
            Throwable c = e.getCause() == null ? e : e.getCause();
            if (c instanceof SecurityException) {
                throw new Automation.Refused(Protocol.E_REFUSED, "the activity manager refused to start " + what + ": " + c);
            }
            throw new Automation.Refused(Protocol.E_FAILED, m.getName() + ": " + c);
        } catch (IllegalAccessException e) {
            throw unsupported(m.getName(), e);
        }
        int code = res instanceof Integer ? ((Integer) res).intValue() : 0;
        if (code < 0 || code >= 100) {
            throw new Automation.Refused(Protocol.E_REFUSED, "the activity manager did not start " + what + ": " + resultName(code));
        }
        return code;
    }

    /** The IActivityManager: ActivityManager.getService() from API 26, ActivityManagerNative.getDefault() before. */
    static Object activityManager() throws Automation.Refused {
        try {
            if (Api.sdk() >= 26) {
                return Class.forName("android.app.ActivityManager").getMethod("getService").invoke(null);
            }
            return Class.forName("android.app.ActivityManagerNative").getMethod("getDefault").invoke(null);
        } catch (Exception e) {
            throw unsupported("the activity manager service", e);
        }
    }

    /** The IActivityTaskManager (API 29+), or null. */
    static Object activityTaskManager() {
        try {
            return Class.forName("android.app.ActivityTaskManager").getMethod("getService").invoke(null);
        } catch (Exception e) {
            return null;
        }
    }

    /**
     * The start method on manager as {manager, method}, or null:
     * startActivityAsUserWithFeature (API 30+; IActivityManager, what `am
     * start` calls there) or the 12-parameter startActivityAsUser
     * (IActivityTaskManager, API 30+) when withFeature, else the
     * 11-parameter startActivityAsUser (API 21+ on IActivityManager, API 29
     * on IActivityTaskManager); the other shape when the preferred one is
     * missing.
     */
    static Object[] startMethod(Object manager, boolean withFeature) {
        if (manager == null) {
            return null;
        }
        Class<?> caller;
        Class<?> profiler;
        Class<?> binder;
        try {
            caller = Class.forName("android.app.IApplicationThread");
            profiler = Class.forName("android.app.ProfilerInfo");
            binder = Class.forName("android.os.IBinder");
        } catch (ClassNotFoundException e) {
            return null;
        }
        Class<?>[] plain = {caller, String.class, Intent.class, String.class, binder, String.class, int.class, int.class, profiler, android.os.Bundle.class, int.class};
        Class<?>[] feature = {caller, String.class, String.class, Intent.class, String.class, binder, String.class, int.class, int.class, profiler, android.os.Bundle.class, int.class};
        String[] names;
        Class<?>[][] shapes;
        if (withFeature) {
            names = new String[] {"startActivityAsUserWithFeature", "startActivityAsUser", "startActivityAsUser"};
            shapes = new Class<?>[][] {feature, feature, plain};
        } else {
            names = new String[] {"startActivityAsUser", "startActivityAsUserWithFeature", "startActivityAsUser"};
            shapes = new Class<?>[][] {plain, feature, feature};
        }
        for (int i = 0; i < names.length; i++) {
            Method m = method(manager, names[i], shapes[i]);
            if (m != null) {
                return new Object[] {manager, m};
            }
        }
        return null;
    }

    private static Method method(Object target, String name, Class<?>... types) {
        try {
            return target.getClass().getMethod(name, types);
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** ActivityManager's START_* result codes (AOSP, API 23+), by value. */
    static String resultName(int code) {
        switch (code) {
            case -100: return "START_VOICE_HIDDEN_SESSION (-100)";
            case -99: return "START_VOICE_NOT_ACTIVE_SESSION (-99)";
            case -98: return "START_NOT_CURRENT_USER_ACTIVITY (-98)";
            case -97: return "START_NOT_VOICE_COMPATIBLE (-97)";
            case -96: return "START_CANCELED (-96)";
            case -95: return "START_NOT_ACTIVITY (-95)";
            case -94: return "START_PERMISSION_DENIED (-94)";
            case -93: return "START_FORWARD_AND_REQUEST_CONFLICT (-93)";
            case -92: return "START_CLASS_NOT_FOUND (-92)";
            case -91: return "START_INTENT_NOT_RESOLVED (-91)";
            case -90: return "START_ASSISTANT_HIDDEN_SESSION (-90)";
            case -89: return "START_ASSISTANT_NOT_ACTIVE_SESSION (-89)";
            case 100: return "START_SWITCHES_CANCELED (100): app switches are stopped for a few seconds after Home";
            case 101: return "START_RETURN_LOCK_TASK_MODE_VIOLATION (101): the phone is pinned to another app";
            case 102: return "START_ABORTED (102)";
            default: return "result " + code;
        }
    }

    private static String cause(InvocationTargetException e) {
        return String.valueOf(e.getCause() == null ? e : e.getCause());
    }

    private static Automation.Refused unsupported(String what, Throwable e) {
        Throwable c = e instanceof InvocationTargetException && e.getCause() != null ? e.getCause() : e;
        return new Automation.Refused(Protocol.E_UNSUPPORTED, what + " is not reachable on this Android build: " + c);
    }
}
