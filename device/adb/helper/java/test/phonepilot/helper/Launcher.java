package phonepilot.helper;

import android.view.accessibility.AccessibilityEvent;
import android.view.accessibility.AccessibilityNodeInfo;

import java.io.BufferedReader;
import java.io.InputStreamReader;

import phonepilot.fakes.World;

/**
 * Runs the shipped helper (enjarify'd) on the JVM over a fake phone with one
 * focused text field and one launchable app, for the Go client's
 * conformance test. Prints
 * "PORT n" once the fake abstract socket listens, then "READY ..." as the
 * helper does; a line "event" on stdin fires an accessibility event, "toast"
 * a toast's; the
 * process ends when the helper exits (quit or idle).
 */
public final class Launcher {
    public static void main(String[] args) throws Exception {
        World.reset();
        AccessibilityNodeInfo root = new AccessibilityNodeInfo();
        root.className = "android.widget.FrameLayout";
        root.packageName = "com.example.notes";
        root.enabled = true;
        root.right = 1080;
        root.bottom = 2400;
        AccessibilityNodeInfo field = new AccessibilityNodeInfo();
        field.className = "android.widget.EditText";
        field.packageName = "com.example.notes";
        field.viewId = "com.example.notes:id/title";
        field.enabled = true;
        field.focusable = true;
        field.focused = true;
        field.editable = true;
        field.top = 100;
        field.right = 1080;
        field.bottom = 200;
        root.children.add(field);
        World.root = root;
        // Launchable: com.example.notes (its launcher activity .Main); the activity manager answers START_SUCCESS.
        World.launchers.put("com.example.notes", java.util.Arrays.asList("com.example.notes.Main"));
        World.screenshot = new android.graphics.Bitmap(2, 2, android.graphics.Bitmap.Config.ARGB_8888,
            new byte[] {1, 2, 3, (byte) 255, 4, 5, 6, (byte) 255, 7, 8, 9, (byte) 255, 10, 11, 12, (byte) 255});
        final String name = "phonepilot-helper-jvm";
        Thread events = new Thread(new Runnable() {
            @Override
            public void run() {
                try {
                    while (!World.sockets.containsKey(name)) {
                        Thread.sleep(5);
                    }
                    System.out.println("PORT " + World.sockets.get(name).port());
                    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
                    String line;
                    while ((line = in.readLine()) != null) {
                        if (line.equals("event") && World.listener != null) {
                            World.listener.onAccessibilityEvent(new AccessibilityEvent());
                            System.out.println("fired");
                        }
                        if (line.equals("toast") && World.listener != null) {
                            World.listener.onAccessibilityEvent(new AccessibilityEvent(AccessibilityEvent.TYPE_NOTIFICATION_STATE_CHANGED,
                                "android.widget.Toast", "com.example.notes", "Saved"));
                            System.out.println("fired");
                        }
                    }
                } catch (Exception e) {
                    System.out.println("launcher: " + e);
                }
            }
        });
        events.setDaemon(true);
        events.start();
        Main.main(new String[] {"--socket", name, "--idle-exit", "20"});
    }
}
