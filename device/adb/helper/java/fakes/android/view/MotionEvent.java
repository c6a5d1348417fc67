package android.view;

/** JVM fake: records what was obtained. */
public final class MotionEvent extends InputEvent {
    public static final int ACTION_DOWN = 0;
    public static final int ACTION_UP = 1;
    public static final int ACTION_MOVE = 2;
    public long downTime;
    public long eventTime;
    public int action;
    public float x;
    public float y;
    private MotionEvent() {}
    public static MotionEvent obtain(long downTime, long eventTime, int action, float x, float y, int metaState) {
        MotionEvent e = new MotionEvent();
        e.downTime = downTime;
        e.eventTime = eventTime;
        e.action = action;
        e.x = x;
        e.y = y;
        return e;
    }
    public final void setSource(int s) { source = s; }
    public final void recycle() {}
    @Override
    public String toString() { return "motion " + action + " " + x + "," + y; }
}
