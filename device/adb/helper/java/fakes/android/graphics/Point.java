package android.graphics;

/** JVM fake. */
public class Point {
    public int x;
    public int y;
    public Point() {}
}
