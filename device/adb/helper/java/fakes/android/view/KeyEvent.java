package android.view;

/** JVM fake. */
public class KeyEvent extends InputEvent {
    public static final int ACTION_DOWN = 0;
    public static final int ACTION_UP = 1;
    public final int action;
    public final int code;
    public KeyEvent(long downTime, long eventTime, int action, int code, int repeat) {
        this.action = action;
        this.code = code;
    }
    public final void setSource(int s) { source = s; }
    @Override
    public String toString() { return "key " + action + " " + code; }
}
