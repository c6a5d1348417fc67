package android.os;

/** Signature stub (public SDK). SDK_INT is no compile-time constant, as on a phone. */
public class Build {
    public static class VERSION {
        public static final int SDK_INT = Integer.parseInt("0");
    }
}
