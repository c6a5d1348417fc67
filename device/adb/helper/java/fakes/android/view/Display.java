package android.view;

import android.graphics.Point;
import phonepilot.fakes.World;

/** JVM fake: World's display. */
public final class Display {
    public Display() {}
    public void getSize(Point outSize) { outSize.x = World.displayWidth; outSize.y = World.displayHeight; }
    public int getRotation() { return World.rotation; }
}
