package android.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;

/** JVM fake over a loopback TCP socket. */
public class LocalSocket {
    private final Socket s;
    LocalSocket(Socket s) { this.s = s; }
    public InputStream getInputStream() throws IOException { return s.getInputStream(); }
    public OutputStream getOutputStream() throws IOException { return s.getOutputStream(); }
    public void close() throws IOException { s.close(); }
}
