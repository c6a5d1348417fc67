package phonepilot.helper;

/** A frame read from the peer (see Protocol). Top-level: enjarify keeps no inner-class records. */
final class Frame {
    final byte type;
    final byte[] payload;

    Frame(byte type, byte[] payload) {
        this.type = type;
        this.payload = payload;
    }
}
