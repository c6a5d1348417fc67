package android.os;

/** Signature stub (public SDK). */
public final class Looper {
    private Looper() { throw new RuntimeException("Stub!"); }
    public static Looper getMainLooper() { throw new RuntimeException("Stub!"); }
    public static void prepareMainLooper() { throw new RuntimeException("Stub!"); }
}
