package android.os;

/** JVM fake (only its type matters: a parameter of the start methods). */
public interface IBinder {
}
