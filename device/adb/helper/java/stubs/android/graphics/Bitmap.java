package android.graphics;

import java.nio.Buffer;

/** Signature stub (public SDK). */
public final class Bitmap {
    private Bitmap() { throw new RuntimeException("Stub!"); }
    public enum Config { ALPHA_8, RGB_565, ARGB_4444, ARGB_8888, RGBA_F16, HARDWARE }
    public Config getConfig() { throw new RuntimeException("Stub!"); }
    public Bitmap copy(Config config, boolean isMutable) { throw new RuntimeException("Stub!"); }
    public void recycle() { throw new RuntimeException("Stub!"); }
    public int getWidth() { throw new RuntimeException("Stub!"); }
    public int getHeight() { throw new RuntimeException("Stub!"); }
    public void copyPixelsToBuffer(Buffer dst) { throw new RuntimeException("Stub!"); }
}
