package android.content.pm;

/** JVM fake: name and packageName declared here, as in the framework (the helper reaches them through ActivityInfo). */
public class PackageItemInfo {
    public String name;
    public String packageName;
}
