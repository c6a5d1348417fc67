package android.app;

/** JVM fake of the hidden shell-side connection. */
public final class UiAutomationConnection implements IUiAutomationConnection {
    public UiAutomationConnection() {}
}
