package android.graphics;

import java.nio.Buffer;
import java.nio.ByteBuffer;

/** JVM fake: RGBA bytes. */
public final class Bitmap {
    public enum Config { ALPHA_8, RGB_565, ARGB_4444, ARGB_8888, RGBA_F16, HARDWARE }

    private final int width;
    private final int height;
    private final Config config;
    private final byte[] rgba;
    public boolean recycled;

    public Bitmap(int width, int height, Config config, byte[] rgba) {
        this.width = width;
        this.height = height;
        this.config = config;
        this.rgba = rgba;
    }

    public Config getConfig() { return config; }

    public Bitmap copy(Config c, boolean isMutable) {
        return new Bitmap(width, height, c, rgba.clone());
    }

    public void recycle() { recycled = true; }

    public int getWidth() { return width; }

    public int getHeight() { return height; }

    public void copyPixelsToBuffer(Buffer dst) {
        if (config == Config.HARDWARE) {
            throw new IllegalStateException("unable to copyPixelsToBuffer, pixel access is not supported on Config#HARDWARE bitmaps");
        }
        ((ByteBuffer) dst).put(rgba);
    }
}
