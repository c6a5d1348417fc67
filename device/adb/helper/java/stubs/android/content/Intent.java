package android.content;

/** Signature stub (public SDK). */
public class Intent {
    public Intent(String action) { throw new RuntimeException("Stub!"); }
    public Intent addCategory(String category) { throw new RuntimeException("Stub!"); }
    public Intent setPackage(String packageName) { throw new RuntimeException("Stub!"); }
    public Intent setClassName(String packageName, String className) { throw new RuntimeException("Stub!"); }
    public Intent addFlags(int flags) { throw new RuntimeException("Stub!"); }
}
