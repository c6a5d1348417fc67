package android.os;

/** Signature stub (public SDK). */
public final class SystemClock {
    private SystemClock() { throw new RuntimeException("Stub!"); }
    public static long uptimeMillis() { throw new RuntimeException("Stub!"); }
}
