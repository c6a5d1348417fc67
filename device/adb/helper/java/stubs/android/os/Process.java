package android.os;

/** Signature stub (public SDK). */
public class Process {
    public static final int myPid() { throw new RuntimeException("Stub!"); }
}
