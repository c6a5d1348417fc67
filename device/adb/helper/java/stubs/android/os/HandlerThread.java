package android.os;

/** Signature stub (public SDK). */
public class HandlerThread extends Thread {
    public HandlerThread(String name) { throw new RuntimeException("Stub!"); }
    public Looper getLooper() { throw new RuntimeException("Stub!"); }
}
