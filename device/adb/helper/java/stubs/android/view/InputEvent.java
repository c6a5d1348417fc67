package android.view;

/** Signature stub (public SDK). */
public abstract class InputEvent {
    InputEvent() { throw new RuntimeException("Stub!"); }
}
