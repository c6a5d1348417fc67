package phonepilot.fakes;

import android.app.IApplicationThread;
import android.app.ProfilerInfo;
import android.content.Intent;
import android.content.pm.ActivityInfo;
import android.content.pm.ParceledListSlice;
import android.content.pm.ResolveInfo;
import android.os.Bundle;
import android.os.IBinder;

import java.util.ArrayList;
import java.util.List;

/**
 * JVM fakes of the binder interfaces the helper's Starter reaches by
 * reflection, one class per shape a release has (AOSP's IPackageManager,
 * IActivityManager and IActivityTaskManager): a test puts the one of the
 * release it plays in World.
 */
public final class Framework {
    private Framework() {}

    static List<ResolveInfo> resolve(Intent intent, String how, int userId) {
        World.pmCalls.add(how + " user=" + userId + " " + intent);
        List<ResolveInfo> out = new ArrayList<ResolveInfo>();
        if (!"android.intent.action.MAIN".equals(intent.action) || !intent.categories.contains("android.intent.category.LAUNCHER")) {
            return out;
        }
        List<String> acts = World.launchers.get(intent.getPackage());
        if (acts == null) {
            return out;
        }
        for (String a : acts) {
            ResolveInfo ri = new ResolveInfo();
            ri.activityInfo = new ActivityInfo();
            ri.activityInfo.name = a;
            ri.activityInfo.packageName = intent.getPackage();
            out.add(ri);
        }
        return out;
    }

    /** IPackageManager, API 21–23: a List, int flags. */
    public static class Pm21 {
        public List<ResolveInfo> queryIntentActivities(Intent intent, String resolvedType, int flags, int userId) {
            return resolve(intent, "query(int) list", userId);
        }
    }

    /** IPackageManager, API 24–32: a ParceledListSlice, int flags. */
    public static class Pm24 {
        public ParceledListSlice<ResolveInfo> queryIntentActivities(Intent intent, String resolvedType, int flags, int userId) {
            return new ParceledListSlice<ResolveInfo>(resolve(intent, "query(int) slice", userId));
        }
    }

    /** IPackageManager, API 33+: a ParceledListSlice, long flags. */
    public static class Pm33 {
        public ParceledListSlice<ResolveInfo> queryIntentActivities(Intent intent, String resolvedType, long flags, int userId) {
            return new ParceledListSlice<ResolveInfo>(resolve(intent, "query(long) slice", userId));
        }
    }

    static int start(String how, String callingPackage, Intent intent, int userId) {
        World.started.add(how + " " + callingPackage + " " + intent + " user=" + userId);
        if (World.startThrows != null) {
            throw World.startThrows;
        }
        return World.startResult;
    }

    /** IActivityManager with startActivityAsUser only (API 21–29). */
    public static class AmPlain {
        public int startActivityAsUser(IApplicationThread caller, String callingPackage, Intent intent, String resolvedType,
                IBinder resultTo, String resultWho, int requestCode, int flags, ProfilerInfo profilerInfo, Bundle options, int userId) {
            return start("IActivityManager.startActivityAsUser", callingPackage, intent, userId);
        }
    }

    /** IActivityManager of API 30+: startActivityAsUser (deprecated) and startActivityAsUserWithFeature. */
    public static class AmBoth extends AmPlain {
        public int startActivityAsUserWithFeature(IApplicationThread caller, String callingPackage, String callingFeatureId, Intent intent,
                String resolvedType, IBinder resultTo, String resultWho, int requestCode, int flags, ProfilerInfo profilerInfo,
                Bundle options, int userId) {
            return start("IActivityManager.startActivityAsUserWithFeature", callingPackage, intent, userId);
        }
    }

    /** An IActivityManager without any start method (a vendor build that moved them). */
    public static class AmNone {
        public int startActivity(Intent intent) {
            return start("IActivityManager.startActivity(wrong)", "", intent, 0);
        }
    }

    /** IActivityTaskManager of API 30+: startActivityAsUser with a feature id. */
    public static class Atm30 {
        public int startActivityAsUser(IApplicationThread caller, String callingPackage, String callingFeatureId, Intent intent,
                String resolvedType, IBinder resultTo, String resultWho, int requestCode, int flags, ProfilerInfo profilerInfo,
                Bundle options, int userId) {
            return start("IActivityTaskManager.startActivityAsUser", callingPackage, intent, userId);
        }
    }
}
