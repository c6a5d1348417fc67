package android.os;

/** JVM fake. */
public final class SystemClock {
    private SystemClock() {}
    public static long uptimeMillis() { return System.nanoTime() / 1000000L; }
}
