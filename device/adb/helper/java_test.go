package helper

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// The helper's own code, tested without a phone: the committed dex is what
// the build script makes, ART's verifier (dexdump -c) accepts it, and the
// shipped dex, turned back into JVM classes by enjarify, passes the Java
// tests against fakes of the android classes (java/test) and speaks the
// protocol to this package's Client. The tools are Debian packages
// (scripts/test.sh installs them); without them these tests skip, except
// under PHONEPILOT_INTEGRATION=1, where they fail.

// slowSuite gates the tests that build or run Java (tens of seconds on a
// loaded machine): they run under PHONEPILOT_INTEGRATION=1 (CI) or
// PHONEPILOT_HELPER_JVM=1 and skip plainly otherwise.
func slowSuite(t *testing.T) {
	t.Helper()
	if os.Getenv("PHONEPILOT_INTEGRATION") != "1" && os.Getenv("PHONEPILOT_HELPER_JVM") != "1" {
		t.Skip("builds and runs Java: set PHONEPILOT_HELPER_JVM=1 (or PHONEPILOT_INTEGRATION=1)")
	}
}

func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			msg := n + " not found (Debian packages: default-jdk-headless, dexdump, enjarify, libguava-java; scripts/test.sh installs them)"
			if os.Getenv("PHONEPILOT_INTEGRATION") == "1" {
				t.Fatal(msg + "; PHONEPILOT_INTEGRATION=1 requires it")
			}
			t.Skip(msg)
		}
	}
}

func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func TestDexRebuildsByteIdentical(t *testing.T) {
	slowSuite(t)
	needTools(t, "javac", "java", "dpkg", "apt-get")
	if _, err := os.Stat("/usr/share/java/guava.jar"); err != nil && os.Getenv("PHONEPILOT_INTEGRATION") != "1" {
		t.Skip("guava.jar missing (libguava-java)")
	}
	out := filepath.Join(t.TempDir(), "rebuilt.dex")
	log := run(t, "../../..", nil, "./scripts/build-helper.sh", out)
	t.Log(strings.TrimSpace(log))
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !IsDex(got) {
		t.Fatalf("scripts/build-helper.sh made a dex of %d bytes that differs from the committed one (%d bytes): rebuild and commit device/adb/helper/phonepilot-helper.dex", len(got), len(dex))
	}
}

func TestDexdumpVerifies(t *testing.T) {
	needTools(t, "dexdump")
	out := run(t, ".", nil, "dexdump", "-c", "phonepilot-helper.dex")
	if !strings.Contains(out, "Checksum verified") {
		t.Fatalf("dexdump -c:\n%s", out)
	}
	// The verifier rejects a one-byte corruption (so the check above means something).
	bad := Dex()
	bad[len(bad)/2] ^= 0xff
	p := filepath.Join(t.TempDir(), "bad.dex")
	os.WriteFile(p, bad, 0o644)
	if err := exec.Command("dexdump", "-c", p).Run(); err == nil {
		t.Fatal("dexdump -c accepted a corrupted dex")
	}
}

// jvmClasses enjarifies the shipped dex and compiles the fakes and tests
// against it, once per test binary; it returns the classpath.
func jvmClasses(t *testing.T) string {
	t.Helper()
	slowSuite(t)
	needTools(t, "javac", "java", "enjarify")
	jvm.once.Do(func() { jvm.cp, jvm.err = buildJVMClasses() })
	if jvm.err != nil {
		t.Fatal(jvm.err)
	}
	return jvm.cp
}

var jvm struct {
	once sync.Once
	dir  string
	cp   string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if jvm.dir != "" {
		os.RemoveAll(jvm.dir)
	}
	os.Exit(code)
}

func buildJVMClasses() (string, error) {
	dir, err := os.MkdirTemp("", "phonepilot-helper-jvm-")
	if err != nil {
		return "", err
	}
	jvm.dir = dir
	jar := filepath.Join(dir, "helper.jar")
	sh := func(env []string, name string, args ...string) error {
		cmd := exec.Command(name, args...)
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return nil
	}
	// enjarify picks its Python from PATH; Debian's must come first.
	if err := sh([]string{"PATH=/usr/bin:" + os.Getenv("PATH")}, "enjarify", "-f", "-o", jar, "phonepilot-helper.dex"); err != nil {
		return "", err
	}
	fakes, tests := filepath.Join(dir, "fakes"), filepath.Join(dir, "test")
	javac := func(out, cp, root string) error {
		var srcs []string
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".java") {
				srcs = append(srcs, p)
			}
			return err
		})
		args := []string{"-nowarn", "-encoding", "UTF-8", "-d", out}
		if cp != "" {
			args = append(args, "-cp", cp)
		}
		return sh(nil, "javac", append(args, srcs...)...)
	}
	if err := javac(fakes, "", "java/fakes"); err != nil {
		return "", err
	}
	if err := javac(tests, jar+":"+fakes, "java/test"); err != nil {
		return "", err
	}
	return jar + ":" + fakes + ":" + tests, nil
}

func TestHelperOnJVM(t *testing.T) {
	cp := jvmClasses(t)
	out := run(t, ".", nil, "java", "-cp", cp, "phonepilot.helper.HelperTest", "../../../perception/testdata/uidump")
	t.Log("\n" + out)
	m := regexp.MustCompile(`helper JVM tests: (\d+) passed, 0 failed`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no pass count in:\n%s", out)
	}
	if !strings.Contains(out, "round trips: 22 real dumps byte for byte") {
		t.Errorf("expected the 22 uiautomator-dump fixtures to round-trip:\n%s", out)
	}
}

// TestClientAgainstJVMHelper: this package's Client against the shipped
// helper itself (on the JVM, fakes behind it).
func TestClientAgainstJVMHelper(t *testing.T) {
	cp := jvmClasses(t)
	cmd := exec.Command("java", "-cp", cp, "phonepilot.helper.Launcher")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var port string
	for port == "" && lines.Scan() {
		if p, ok := strings.CutPrefix(lines.Text(), "PORT "); ok {
			port = p
		}
	}
	if port == "" {
		t.Fatal("the JVM helper printed no port")
	}
	fire := func() {
		stdin.Write([]byte("event\n"))
		for lines.Scan() && lines.Text() != "fired" {
		}
	}
	toast := func() {
		stdin.Write([]byte("toast\n"))
		for lines.Scan() && lines.Text() != "fired" {
		}
	}
	conformance(t, func() Conn {
		c, err := net.Dial("tcp", "127.0.0.1:"+port)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}, fire, toast)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("the helper did not exit 0 after quit: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the helper did not exit after quit")
	}
}

// conformance drives a helper whose phone shows one focused field
// com.example.notes:id/title in com.example.notes and a 2x2 screenshot.
func conformance(t *testing.T, dial func() Conn, fireEvent, fireToast func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, dial())
	if err != nil {
		t.Fatal(err)
	}
	if h := c.Hello(); h.Proto != ProtocolVersion || h.PID == 0 {
		t.Fatalf("hello %+v", h)
	}
	if !c.Serves(OpLaunch) {
		t.Fatalf("a version %d helper does not serve launch", c.Hello().Proto)
	}
	if cmp, err := c.Launch(ctx, "com.example.notes"); err != nil || cmp != "com.example.notes/com.example.notes.Main" {
		t.Fatalf("launch = %q, %v", cmp, err)
	}
	var nf *Error
	if _, err := c.Launch(ctx, "com.example.none"); !errorsAs(err, &nf) || nf.Code != CodeNotFound || !strings.Contains(nf.Message, "no launcher activity in com.example.none") {
		t.Fatalf("launch of an unknown package: %v", err)
	}
	xml, n0, err := c.Tree(ctx, TreeClassic)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(xml, []byte("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node index=\"0\"")) ||
		bytes.Contains(xml, []byte("drawing-order")) {
		t.Fatalf("tree: %s", xml)
	}
	fireEvent()
	if n, since, err := c.Changes(ctx); err != nil || n != n0+1 || since < 0 || since > 10*time.Second {
		t.Fatalf("changes after one event = %d (%v ago), %v; want %d", n, since, err, n0+1)
	}
	mark, evs, err := c.Toasts(ctx, 0)
	if err != nil || len(evs) != 0 {
		t.Fatalf("toasts before any = %d %+v, %v", mark, evs, err)
	}
	fireToast()
	if now, evs, err := c.Toasts(ctx, mark); err != nil || now != mark+1 || len(evs) != 1 ||
		evs[0].Seq != mark+1 || evs[0].Package != "com.example.notes" || evs[0].Text != "Saved" || evs[0].Ago < 0 || evs[0].Ago > 10*time.Second {
		t.Fatalf("toasts after one = %d %+v, %v", now, evs, err)
	}
	if now, evs, err := c.Toasts(ctx, mark+1); err != nil || now != mark+1 || len(evs) != 0 {
		t.Fatalf("toasts after the last = %d %+v, %v", now, evs, err)
	}
	if err := c.SetText(ctx, "", "你好 👋"); err != nil {
		t.Fatal(err)
	}
	xml, _, err = c.Tree(ctx, TreeExtras)
	if err != nil || !bytes.Contains(xml, []byte(`text="你好 &#128075;" resource-id="com.example.notes:id/title"`)) || !bytes.Contains(xml, []byte(`drawing-order=`)) {
		t.Fatalf("tree after set text (%v): %s", err, xml)
	}
	var he *Error
	if err := c.SetText(ctx, "com.example.notes:id/nope", "x"); !errorsAs(err, &he) || he.Code != CodeNotFound {
		t.Fatalf("set text on a missing id: %v", err)
	}
	if err := c.Tap(ctx, 10, 20); err != nil {
		t.Fatal(err)
	}
	if err := c.Swipe(ctx, 0, 0, 10, 10, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := c.Key(ctx, 4); err != nil {
		t.Fatal(err)
	}
	if err := c.LongPress(ctx, 1, 1, -time.Millisecond); !errorsAs(err, &he) || he.Code != CodeBadRequest {
		t.Fatalf("negative long press: %v", err)
	}
	if app, err := c.FrontApp(ctx); err != nil || app != "com.example.notes" {
		t.Fatalf("front app %q, %v", app, err)
	}
	img, err := c.Screenshot(ctx)
	if err != nil || img.Bounds().Dx() != 2 || img.Pix[4] != 4 {
		t.Fatalf("screenshot %v %v", img, err)
	}
	if _, err := c.call(ctx, Op('Z'), nil); !errorsAs(err, &he) || he.Code != CodeBadRequest {
		t.Fatalf("unknown op: %v", err)
	}
	if c.Broken() {
		t.Fatal("error replies broke the client")
	}
	// A request over the limit is refused on this side, before it is sent.
	if err := c.SetText(ctx, "", strings.Repeat("x", MaxRequest)); !errorsAs(err, &he) || he.Code != CodeTooLarge {
		t.Fatalf("oversized request: %v", err)
	}
	// The helper refuses an oversized frame too (a client that does not check), and hangs up.
	raw := dial()
	if _, _, err := readFrame(raw, MaxReply); err != nil {
		t.Fatal(err)
	}
	raw.Write([]byte{0x7f, 0, 0, 0})
	op, p, err := readFrame(raw, MaxReply)
	if err != nil || op != opError || Code(p[0]) != CodeTooLarge {
		t.Fatalf("oversized frame: %c %q %v", op, p, err)
	}
	raw.Close()
	if err := c.Quit(ctx); err != nil {
		t.Fatal(err)
	}
}
