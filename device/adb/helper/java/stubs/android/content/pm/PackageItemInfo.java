package android.content.pm;

/** Signature stub (public SDK): name is declared here, as in the framework. */
public class PackageItemInfo {
    public String name;
    public String packageName;
}
