package android.net;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/** Signature stub (public SDK). */
public class LocalSocket {
    public InputStream getInputStream() throws IOException { throw new RuntimeException("Stub!"); }
    public OutputStream getOutputStream() throws IOException { throw new RuntimeException("Stub!"); }
    public void close() throws IOException { throw new RuntimeException("Stub!"); }
}
