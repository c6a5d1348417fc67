package android.graphics;

/** JVM fake. */
public final class Rect {
    public int left;
    public int top;
    public int right;
    public int bottom;
    public Rect() {}
}
