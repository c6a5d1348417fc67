package android.view.accessibility;

import phonepilot.fakes.World;

/** JVM fake of the hidden client whose cache older releases clear. */
public final class AccessibilityInteractionClient {
    private static final AccessibilityInteractionClient INSTANCE = new AccessibilityInteractionClient();
    public static AccessibilityInteractionClient getInstance() { return INSTANCE; }
    public void clearCache() { World.cacheClears++; }
}
