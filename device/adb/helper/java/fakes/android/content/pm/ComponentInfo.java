package android.content.pm;

/** JVM fake. */
public class ComponentInfo extends PackageItemInfo {
}
