package android.os;

/** JVM fake. */
public class Process {
    public static final int myPid() { return (int) ProcessHandle.current().pid(); }
}
