package phonepilot.helper;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;

/**
 * The wire format between phonepilot (device/adb/helper on the host) and the
 * helper. One frame is a 4-byte big-endian length n (n >= 1), then n bytes:
 * a type byte and the payload. Requests and replies alternate; a reply has
 * the request's type, or ERROR with a code byte and a UTF-8 message.
 */
final class Protocol {
    private Protocol() {}

    /**
     * Version of this protocol; the hello carries it. 1: the first set of
     * requests; 2: adds LAUNCH (and the error codes REFUSED, UNSUPPORTED);
     * 3: adds TOASTS.
     * A client reads the version from the hello and sends only what that
     * version serves (a version-1 helper answers LAUNCH as an unknown type).
     */
    static final int VERSION = 3;

    static final byte HELLO = 'H';
    static final byte TREE = 'T';
    static final byte SCREENSHOT = 'S';
    static final byte SET_TEXT = 'X';
    static final byte TAP = 'P';
    static final byte LONG_PRESS = 'L';
    static final byte SWIPE = 'W';
    static final byte KEY = 'K';
    static final byte FRONT_APP = 'A';
    static final byte CHANGES = 'C';
    /** Version 2: start a package's launcher activity (payload: the package, UTF-8). */
    static final byte LAUNCH = 'O';
    /**
     * Version 3: the toasts heard after a sequence number (payload: int64;
     * reply: Toasts.after's).
     */
    static final byte TOASTS = 'N';
    static final byte QUIT = 'Q';
    static final byte ERROR = 'E';

    /** Error codes (the first payload byte of an ERROR reply). */
    static final byte E_BAD_REQUEST = 1;
    static final byte E_TOO_LARGE = 2;
    static final byte E_NO_FOCUS = 3;
    static final byte E_NO_WINDOW = 4;
    static final byte E_FAILED = 5;
    static final byte E_NOT_FOUND = 6;
    /** Version 2: the system refused what was asked (an activity start, with its result). */
    static final byte E_REFUSED = 7;
    /** Version 2: this Android build lacks a framework member the request needs. */
    static final byte E_UNSUPPORTED = 8;

    /** Largest request frame accepted (a set-text of a long text fits). */
    static final int MAX_REQUEST = 1 << 20;
    /** Largest reply frame sent (a 1440x3200 RGBA frame is 18 MB). */
    static final int MAX_REPLY = 64 << 20;

    /** Tree request flag: add drawing-order and hint after bounds. */
    static final int TREE_EXTRAS = 1;
    /** Tree request flag: the flags word is meaningful (else the helper's default). */
    static final int TREE_EXPLICIT = 1 << 31;

    /** Reads one frame, or returns null at a clean end of stream. */
    static Frame read(DataInputStream in, int max) throws IOException {
        int b0 = in.read();
        if (b0 < 0) {
            return null;
        }
        int n = (b0 << 24) | (in.readUnsignedByte() << 16) | (in.readUnsignedByte() << 8) | in.readUnsignedByte();
        if (n < 1 || n > max) {
            throw new FrameTooLarge(n, max);
        }
        byte type = in.readByte();
        byte[] payload = new byte[n - 1];
        in.readFully(payload);
        return new Frame(type, payload);
    }

    /** Writes one frame; a reply past MAX_REPLY becomes an E_TOO_LARGE error. */
    static void write(DataOutputStream out, byte type, byte[] payload) throws IOException {
        if (payload.length + 1L > MAX_REPLY) {
            writeError(out, E_TOO_LARGE, "reply of " + payload.length + " bytes is over the limit of " + MAX_REPLY);
            return;
        }
        out.writeInt(payload.length + 1);
        out.writeByte(type);
        out.write(payload);
        out.flush();
    }

    static void writeError(DataOutputStream out, byte code, String message) throws IOException {
        byte[] msg = utf8(message == null ? "" : message);
        out.writeInt(msg.length + 2);
        out.writeByte(ERROR);
        out.writeByte(code);
        out.write(msg);
        out.flush();
    }

    static byte[] utf8(String s) {
        try {
            return s.getBytes("UTF-8");
        } catch (java.io.UnsupportedEncodingException e) {
            throw new IllegalStateException(e);
        }
    }

    static String fromUtf8(byte[] b, int off, int len) {
        try {
            return new String(b, off, len, "UTF-8");
        } catch (java.io.UnsupportedEncodingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Reads big-endian int32 values from a payload. */
    static final class Reader {
        private final byte[] b;
        private int pos;

        Reader(byte[] b) {
            this.b = b;
        }

        int remaining() {
            return b.length - pos;
        }

        int int32() throws EOFException {
            if (remaining() < 4) {
                throw new EOFException("payload too short: need 4 more bytes at offset " + pos + " of " + b.length);
            }
            int v = ((b[pos] & 0xff) << 24) | ((b[pos + 1] & 0xff) << 16) | ((b[pos + 2] & 0xff) << 8) | (b[pos + 3] & 0xff);
            pos += 4;
            return v;
        }

        long int64() throws EOFException {
            long hi = int32() & 0xffffffffL;
            long lo = int32() & 0xffffffffL;
            return (hi << 32) | lo;
        }

        String utf8(int len) throws EOFException {
            if (len < 0 || remaining() < len) {
                throw new EOFException("payload too short: string of " + len + " bytes at offset " + pos + " of " + b.length);
            }
            String s = fromUtf8(b, pos, len);
            pos += len;
            return s;
        }

        String rest() {
            String s = fromUtf8(b, pos, remaining());
            pos = b.length;
            return s;
        }
    }

    static byte[] int64(long v) {
        byte[] b = new byte[8];
        for (int i = 7; i >= 0; i--) {
            b[i] = (byte) v;
            v >>>= 8;
        }
        return b;
    }
}
