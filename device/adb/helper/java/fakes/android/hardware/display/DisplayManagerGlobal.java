package android.hardware.display;

import android.view.Display;

/** JVM fake of the hidden display registry. */
public final class DisplayManagerGlobal {
    private static final DisplayManagerGlobal INSTANCE = new DisplayManagerGlobal();
    public static DisplayManagerGlobal getInstance() { return INSTANCE; }
    public Display getRealDisplay(int displayId) { return displayId == 0 ? new Display() : null; }
}
