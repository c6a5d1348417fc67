package android.net;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import phonepilot.fakes.World;

/** JVM fake: an abstract name bound to a loopback TCP port in World.sockets. */
public class LocalServerSocket {
    private final ServerSocket server;
    private final String name;

    public LocalServerSocket(String name) throws IOException {
        synchronized (World.sockets) {
            if (World.sockets.containsKey(name)) {
                throw new IOException("Address already in use");
            }
            server = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
            World.sockets.put(name, this);
        }
        this.name = name;
    }

    /** The loopback port tests connect to. */
    public int port() { return server.getLocalPort(); }

    public LocalSocket accept() throws IOException {
        return new LocalSocket(server.accept());
    }

    public void close() throws IOException {
        synchronized (World.sockets) {
            World.sockets.remove(name);
        }
        server.close();
    }
}
