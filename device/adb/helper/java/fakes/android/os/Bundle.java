package android.os;

import java.util.HashMap;
import java.util.Map;

/** JVM fake. */
public final class Bundle {
    public final Map<String, Object> values = new HashMap<String, Object>();
    public Bundle() {}
    public void putCharSequence(String key, CharSequence value) { values.put(key, value); }
}
