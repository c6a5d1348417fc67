package phonepilot.helper;

import android.net.LocalServerSocket;
import android.os.HandlerThread;
import android.os.Looper;

import java.io.PrintStream;
import java.lang.reflect.Method;

/**
 * phonepilot's helper on the phone. Started by adb as the shell user:
 *
 *   CLASSPATH=/data/local/tmp/phonepilot-helper-HASH.dex app_process / phonepilot.helper.Main --socket NAME [--idle-exit SECONDS]
 *
 * It prints one line and then serves until no client has been connected for
 * the idle time (default 30 s):
 *
 *   READY NAME PID                 listening on the abstract socket @NAME
 *   ERROR held MESSAGE             another tool holds the UiAutomation (exit 3)
 *   ERROR usage|start|socket MSG   (exit 2, 4, 5)
 */
public final class Main {
    private Main() {}

    static final int EXIT_USAGE = 2;
    static final int EXIT_HELD = 3;
    static final int EXIT_START = 4;
    static final int EXIT_SOCKET = 5;

    public static void main(String[] args) {
        System.exit(run(args, System.out, Server.SYSTEM, android.os.Process.myPid()));
    }

    /** Runs the helper; returns the exit status when it stops by itself. */
    static int run(String[] args, PrintStream out, Host host, int pid) {
        String name = null;
        long idleMillis = 30000;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--socket") && i + 1 < args.length) {
                name = args[++i];
            } else if (args[i].equals("--idle-exit") && i + 1 < args.length) {
                try {
                    idleMillis = Math.round(Double.parseDouble(args[++i]) * 1000);
                } catch (NumberFormatException e) {
                    idleMillis = -1;
                }
                if (idleMillis <= 0) {
                    out.println("ERROR usage --idle-exit takes a positive number of seconds");
                    return EXIT_USAGE;
                }
            } else {
                out.println("ERROR usage unknown argument " + args[i] + " (phonepilot.helper.Main --socket NAME [--idle-exit SECONDS])");
                return EXIT_USAGE;
            }
        }
        if (name == null || name.isEmpty()) {
            out.println("ERROR usage --socket NAME is required");
            return EXIT_USAGE;
        }
        exemptHiddenApis();
        Automation automation;
        try {
            if (Looper.getMainLooper() == null) {
                Looper.prepareMainLooper();
            }
            HandlerThread thread = new HandlerThread("phonepilot-helper-a11y");
            thread.start();
            automation = Automation.connect(thread.getLooper());
        } catch (Automation.HeldException e) {
            out.println("ERROR held " + e.getMessage());
            return EXIT_HELD;
        } catch (Exception e) {
            out.println("ERROR start " + e);
            return EXIT_START;
        }
        LocalServerSocket socket;
        try {
            socket = new LocalServerSocket(name);
        } catch (Exception e) {
            out.println("ERROR socket @" + name + ": " + e);
            return EXIT_SOCKET;
        }
        Server server = new Server(automation, socket, idleMillis, host, pid);
        server.watchIdle();
        out.println("READY " + name + " " + pid);
        out.flush();
        try {
            server.serve();
        } catch (Exception e) {
            out.println("ERROR socket " + e);
            return EXIT_SOCKET;
        }
        return 0;
    }

    /**
     * A process started by app_process is not forked from zygote, so the
     * hidden-API policy should not apply; exempt everything anyway, as
     * insurance, and carry on if this build has no such method.
     */
    private static void exemptHiddenApis() {
        try {
            Class<?> vm = Class.forName("dalvik.system.VMRuntime");
            Object runtime = vm.getDeclaredMethod("getRuntime").invoke(null);
            Method m = vm.getDeclaredMethod("setHiddenApiExemptions", String[].class);
            m.invoke(runtime, new Object[] {new String[] {"L"}});
        } catch (Throwable e) {
            // Older Android (no policy) or a build without the method.
        }
    }
}
