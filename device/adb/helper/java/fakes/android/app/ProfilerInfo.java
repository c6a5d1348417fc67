package android.app;

/** JVM fake (only its type matters: a parameter of the start methods). */
public class ProfilerInfo {
}
