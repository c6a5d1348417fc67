package android.content;

import java.util.ArrayList;
import java.util.List;

/** JVM fake: keeps what the helper set, and prints it. */
public class Intent {
    public final String action;
    public final List<String> categories = new ArrayList<String>();
    public String pkg;
    public String component;
    public int flags;

    public Intent(String action) { this.action = action; }
    public Intent addCategory(String category) { categories.add(category); return this; }
    public Intent setPackage(String packageName) { pkg = packageName; return this; }
    public String getPackage() { return pkg; }
    public Intent setClassName(String packageName, String className) { component = packageName + "/" + className; return this; }
    public Intent addFlags(int f) { flags |= f; return this; }

    @Override
    public String toString() {
        return "Intent{" + action + " " + categories + (pkg != null ? " pkg=" + pkg : "") + (component != null ? " cmp=" + component : "")
            + " flags=0x" + Integer.toHexString(flags) + "}";
    }
}
