package phonepilot.helper;

import java.io.IOException;

/** A frame whose announced length is past the limit; the stream cannot continue. */
final class FrameTooLarge extends IOException {
    FrameTooLarge(int length, int max) {
        super("frame of " + (length & 0xffffffffL) + " bytes is over the limit of " + max);
    }
}
