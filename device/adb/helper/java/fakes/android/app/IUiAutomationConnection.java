package android.app;

/** JVM fake of the hidden binder interface. */
public interface IUiAutomationConnection {}
