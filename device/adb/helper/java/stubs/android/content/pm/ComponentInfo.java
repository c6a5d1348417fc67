package android.content.pm;

/** Signature stub (public SDK). */
public class ComponentInfo extends PackageItemInfo {
}
