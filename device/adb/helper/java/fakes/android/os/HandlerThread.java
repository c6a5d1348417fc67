package android.os;

/** JVM fake. */
public class HandlerThread extends Thread {
    private final Looper looper = new Looper();
    public HandlerThread(String name) { super(name); setDaemon(true); }
    public Looper getLooper() { return looper; }
}
