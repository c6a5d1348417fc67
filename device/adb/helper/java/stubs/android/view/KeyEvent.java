package android.view;

/** Signature stub (public SDK). */
public class KeyEvent extends InputEvent {
    public static final int ACTION_DOWN = 0;
    public static final int ACTION_UP = 1;
    public KeyEvent(long downTime, long eventTime, int action, int code, int repeat) { throw new RuntimeException("Stub!"); }
    public final void setSource(int source) { throw new RuntimeException("Stub!"); }
}
