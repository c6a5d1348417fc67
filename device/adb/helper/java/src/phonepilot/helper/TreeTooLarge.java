package phonepilot.helper;

/** The tree's XML grew past the reply limit. */
final class TreeTooLarge extends RuntimeException {
    TreeTooLarge(int limit) {
        super("the tree's XML is over the limit of " + limit + " characters");
    }
}
