package android.os;

/** JVM fake: tests set the release. */
public class Build {
    public static class VERSION {
        public static int SDK_INT = 34;
    }
}
