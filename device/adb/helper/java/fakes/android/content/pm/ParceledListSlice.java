package android.content.pm;

import java.util.List;

/** JVM fake of the hidden list wrapper IPackageManager returns from API 24. */
public class ParceledListSlice<T> {
    private final List<T> list;
    public ParceledListSlice(List<T> list) { this.list = list; }
    public List<T> getList() { return list; }
}
