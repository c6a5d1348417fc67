package android.view;

import android.graphics.Point;

/** Signature stub (public SDK). */
public final class Display {
    private Display() { throw new RuntimeException("Stub!"); }
    public void getSize(Point outSize) { throw new RuntimeException("Stub!"); }
    public int getRotation() { throw new RuntimeException("Stub!"); }
}
