package android.graphics;

/** Signature stub (public SDK). */
public class Point {
    public int x;
    public int y;
    public Point() { throw new RuntimeException("Stub!"); }
}
