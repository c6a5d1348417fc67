package phonepilot.helper;

import android.view.accessibility.AccessibilityEvent;

import java.util.List;

/**
 * The toasts the helper heard: each accessibility event that announces one,
 * with a growing sequence number, the app's package and the text, the last
 * KEEP of them. Android announces a toast when it shows it, with
 * TYPE_NOTIFICATION_STATE_CHANGED and the class name android.widget.Toast
 * (ToastPresenter, API 30+, also for the text toasts SystemUI draws on the
 * app's behalf) or its inner class android.widget.Toast$TN (Toast.TN before
 * 30), the app's package and the toast view's text. A notification's event
 * has the same type and another class name: it is not recorded.
 */
final class Toasts {
    /** Events kept; a reply carries at most this many. */
    static final int KEEP = 16;
    /** Longest text and package kept (chars). */
    static final int MAX_TEXT = 1000;
    static final int MAX_PACKAGE = 255;

    private final long[] seqs = new long[KEEP];
    private final long[] times = new long[KEEP];
    private final String[] packages = new String[KEEP];
    private final String[] texts = new String[KEEP];
    private long seq;

    /** Whether an event of this type and class name announces a toast. */
    static boolean isToast(int type, CharSequence className) {
        if (type != AccessibilityEvent.TYPE_NOTIFICATION_STATE_CHANGED || className == null) {
            return false;
        }
        String c = className.toString();
        return c.equals("android.widget.Toast") || c.startsWith("android.widget.Toast$");
    }

    /** Records the event if it announces a toast. */
    void heard(AccessibilityEvent e, long now) {
        if (!isToast(e.getEventType(), e.getClassName())) {
            return;
        }
        CharSequence pkg = e.getPackageName();
        StringBuilder text = new StringBuilder();
        List<CharSequence> parts = e.getText();
        if (parts != null) {
            for (CharSequence p : parts) {
                if (p == null) {
                    continue;
                }
                if (text.length() > 0) {
                    text.append(' ');
                }
                text.append(p);
            }
        }
        record(pkg == null ? "" : pkg.toString(), text.toString(), now);
    }

    synchronized void record(String pkg, String text, long now) {
        seq++;
        int i = (int) (seq % KEEP);
        seqs[i] = seq;
        times[i] = now;
        packages[i] = clip(pkg, MAX_PACKAGE);
        texts[i] = clip(text, MAX_TEXT);
    }

    private static String clip(String s, int max) {
        if (s.length() <= max) {
            return s;
        }
        int end = max;
        if (Character.isHighSurrogate(s.charAt(end - 1))) {
            end--;
        }
        return s.substring(0, end);
    }

    /**
     * The reply to TOASTS: the current sequence (int64), the number of
     * events that follow (int32), and for each toast heard after sequence
     * `after` that is still kept, oldest first: its sequence (int64), how
     * long ago it was heard in ms (int64), the package and the text (each
     * an int32 byte length and UTF-8).
     */
    synchronized byte[] after(long after, long now) {
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        write(out, Protocol.int64(seq));
        long first = Math.max(Math.max(after, 0) + 1, seq - KEEP + 1);
        long n = Math.max(0, seq - first + 1);
        write(out, int32((int) n));
        for (long s = first; s <= seq; s++) {
            int i = (int) (s % KEEP);
            write(out, Protocol.int64(seqs[i]));
            write(out, Protocol.int64(Math.max(0, now - times[i])));
            byte[] p = Protocol.utf8(packages[i]);
            write(out, int32(p.length));
            write(out, p);
            byte[] t = Protocol.utf8(texts[i]);
            write(out, int32(t.length));
            write(out, t);
        }
        return out.toByteArray();
    }

    private static void write(java.io.ByteArrayOutputStream out, byte[] b) {
        out.write(b, 0, b.length);
    }

    private static byte[] int32(int v) {
        return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }
}
