package android.os;

/** JVM fake. */
public final class Looper {
    private static Looper main;
    Looper() {}
    public static synchronized Looper getMainLooper() { return main; }
    public static synchronized void prepareMainLooper() {
        if (main != null) {
            throw new IllegalStateException("The main Looper has already been prepared.");
        }
        main = new Looper();
    }
}
