package phonepilot.helper;

import android.net.LocalServerSocket;
import android.net.LocalSocket;
import android.os.SystemClock;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;

/**
 * Serves the protocol on an abstract local socket, one client at a time
 * (the phone has one UiAutomation, requests are serialised anyway). The hello
 * is sent first, so a client that reads it knows the helper is listening.
 * The helper exits when no client has been connected for idleMillis.
 */
final class Server {
    static final Host SYSTEM = new Host() {
        @Override
        public void exit(int status) {
            System.exit(status);
        }

        @Override
        public long now() {
            return SystemClock.uptimeMillis();
        }
    };

    private final Automation automation;
    private final LocalServerSocket socket;
    private final long idleMillis;
    private final Host host;
    private final String hello;
    private final Object lock = new Object();
    private int clients;
    private long lastSeen;

    Server(Automation automation, LocalServerSocket socket, long idleMillis, Host host, int pid) {
        this.automation = automation;
        this.socket = socket;
        this.idleMillis = idleMillis;
        this.host = host;
        this.hello = "phonepilot-helper proto=" + Protocol.VERSION + " sdk=" + Api.sdk() + " pid=" + pid;
        this.lastSeen = host.now();
    }

    /** Starts the idle watchdog. */
    void watchIdle() {
        Thread t = new Thread(new Runnable() {
            @Override
            public void run() {
                while (true) {
                    try {
                        Thread.sleep(Math.max(10, Math.min(1000, idleMillis / 4)));
                    } catch (InterruptedException e) {
                        return;
                    }
                    if (idle()) {
                        host.exit(0);
                        return;
                    }
                }
            }
        }, "phonepilot-helper-idle");
        t.setDaemon(true);
        t.start();
    }

    boolean idle() {
        synchronized (lock) {
            return clients == 0 && host.now() - lastSeen >= idleMillis;
        }
    }

    /** Accepts clients until the socket fails. */
    void serve() throws IOException {
        while (true) {
            final LocalSocket s = socket.accept();
            synchronized (lock) {
                clients++;
            }
            Thread t = new Thread(new Runnable() {
                @Override
                public void run() {
                    try {
                        session(s);
                    } finally {
                        synchronized (lock) {
                            clients--;
                            lastSeen = host.now();
                        }
                    }
                }
            }, "phonepilot-helper-client");
            t.setDaemon(true);
            t.start();
        }
    }

    private void session(LocalSocket s) {
        try {
            DataInputStream in = new DataInputStream(new BufferedInputStream(s.getInputStream()));
            DataOutputStream out = new DataOutputStream(new BufferedOutputStream(s.getOutputStream(), 64 * 1024));
            Protocol.write(out, Protocol.HELLO, Protocol.utf8(hello));
            while (true) {
                Frame f;
                try {
                    f = Protocol.read(in, Protocol.MAX_REQUEST);
                } catch (FrameTooLarge e) {
                    Protocol.writeError(out, Protocol.E_TOO_LARGE, e.getMessage());
                    return; // the rest of the stream cannot be framed
                }
                if (f == null) {
                    return;
                }
                if (!answer(f, out)) {
                    return;
                }
            }
        } catch (IOException e) {
            // The client went away mid-frame.
        } finally {
            try {
                s.close();
            } catch (IOException e) {
                // closing anyway
            }
        }
    }

    /** Answers one request; false when the helper is to stop. */
    boolean answer(Frame f, DataOutputStream out) throws IOException {
        byte[] reply;
        try {
            synchronized (automation) {
                reply = handle(f);
            }
        } catch (Automation.Refused e) {
            Protocol.writeError(out, e.code, e.getMessage());
            return true;
        } catch (EOFException e) {
            Protocol.writeError(out, Protocol.E_BAD_REQUEST, e.getMessage());
            return true;
        } catch (InterruptedException e) {
            Protocol.writeError(out, Protocol.E_FAILED, "interrupted");
            return false;
        } catch (RuntimeException e) {
            Protocol.writeError(out, Protocol.E_FAILED, e.toString());
            return true;
        } catch (LinkageError e) {
            // A framework member this build lacks (NoSuchMethodError, NoSuchFieldError...):
            // this request cannot be served here, the others still can.
            Protocol.writeError(out, Protocol.E_UNSUPPORTED, e.toString());
            return true;
        }
        if (reply == null) {
            Protocol.writeError(out, Protocol.E_BAD_REQUEST, "unknown request type " + (f.type & 0xff));
            return true;
        }
        Protocol.write(out, f.type, reply);
        if (f.type == Protocol.QUIT) {
            host.exit(0);
            return false;
        }
        return true;
    }

    private static final byte[] EMPTY = new byte[0];

    /** The reply payload for a request, or null for an unknown type. */
    private byte[] handle(Frame f) throws Automation.Refused, EOFException, InterruptedException {
        Protocol.Reader r = new Protocol.Reader(f.payload);
        switch (f.type) {
            case Protocol.HELLO:
                return Protocol.utf8(hello);
            case Protocol.TREE: {
                boolean extras = Api.treeExtrasByDefault();
                if (r.remaining() > 0) {
                    int flags = r.int32();
                    if ((flags & Protocol.TREE_EXPLICIT) != 0) {
                        extras = (flags & Protocol.TREE_EXTRAS) != 0;
                    }
                }
                long seen = automation.changes();
                byte[] xml = Protocol.utf8(automation.tree(extras, Protocol.MAX_REPLY / 4));
                byte[] out = new byte[8 + xml.length];
                System.arraycopy(Protocol.int64(seen), 0, out, 0, 8);
                System.arraycopy(xml, 0, out, 8, xml.length);
                return out;
            }
            case Protocol.SCREENSHOT:
                return automation.screenshot();
            case Protocol.SET_TEXT: {
                String selector = r.utf8(r.int32());
                automation.setText(selector, r.rest());
                return EMPTY;
            }
            case Protocol.TAP:
                automation.tap(r.int32(), r.int32());
                return EMPTY;
            case Protocol.LONG_PRESS:
                automation.longPress(r.int32(), r.int32(), r.int32());
                return EMPTY;
            case Protocol.SWIPE:
                automation.swipe(r.int32(), r.int32(), r.int32(), r.int32(), r.int32());
                return EMPTY;
            case Protocol.KEY:
                automation.key(r.int32());
                return EMPTY;
            case Protocol.FRONT_APP:
                return Protocol.utf8(automation.frontApp());
            case Protocol.CHANGES: {
                byte[] out = new byte[16];
                System.arraycopy(Protocol.int64(automation.changes()), 0, out, 0, 8);
                System.arraycopy(Protocol.int64(automation.sinceLastChange()), 0, out, 8, 8);
                return out;
            }
            case Protocol.LAUNCH:
                return Protocol.utf8(Starter.launch(r.rest()));
            case Protocol.TOASTS:
                return automation.toastsAfter(r.int64());
            case Protocol.QUIT:
                return EMPTY;
            default:
                return null;
        }
    }
}
