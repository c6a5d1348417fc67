package android.view;

/** JVM fake. */
public abstract class InputEvent {
    public int source;
    InputEvent() {}
}
