package android.net;

import java.io.IOException;

/** Signature stub (public SDK): a server on an abstract-namespace Unix socket. */
public class LocalServerSocket {
    public LocalServerSocket(String name) throws IOException { throw new RuntimeException("Stub!"); }
    public LocalSocket accept() throws IOException { throw new RuntimeException("Stub!"); }
    public void close() throws IOException { throw new RuntimeException("Stub!"); }
}
