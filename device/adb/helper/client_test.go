package helper

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

func errorsAs(err error, target any) bool { return errors.As(err, target) }

// fakeBackend is a phone with one focused field, for Serve.
type fakeBackend struct {
	mu      sync.Mutex
	text    string
	changes uint64
	taps    []string
	toasts  []ToastEvent
}

func (f *fakeBackend) Toasts(after uint64) (uint64, []ToastEvent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []ToastEvent
	for _, ev := range f.toasts {
		if ev.Seq > after {
			out = append(out, ev)
		}
	}
	return uint64(len(f.toasts)), out, nil
}

func (f *fakeBackend) toast(pkg, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.toasts = append(f.toasts, ToastEvent{Seq: uint64(len(f.toasts) + 1), Package: pkg, Text: text})
}

func (f *fakeBackend) Tree(extras bool) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	x := ""
	if extras {
		x = ` drawing-order="1" hint=""`
	}
	return []byte(fmt.Sprintf(`<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation="0"><node index="0" text="%s" resource-id="com.example.notes:id/title" class="android.widget.EditText" package="com.example.notes" bounds="[0,0][10,10]"%s /></hierarchy>`,
		strings.ReplaceAll(f.text, "👋", "&#128075;"), x)), nil
}

func (f *fakeBackend) Screenshot() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, 2, 2))
	copy(img.Pix, []byte{1, 2, 3, 255, 4, 5, 6, 255, 7, 8, 9, 255, 10, 11, 12, 255})
	return EncodeFrame(img), nil
}

func (f *fakeBackend) SetText(selector, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if selector != "" && selector != "com.example.notes:id/title" {
		return &Error{Code: CodeNotFound, Message: "no node has resource-id " + selector}
	}
	f.text = text
	return nil
}

func (f *fakeBackend) tap(s string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.taps = append(f.taps, s)
	return nil
}
func (f *fakeBackend) Tap(x, y int) error { return f.tap(fmt.Sprint("tap ", x, y)) }
func (f *fakeBackend) LongPress(x, y int, d time.Duration) error {
	return f.tap(fmt.Sprint("long ", x, y, d))
}
func (f *fakeBackend) Swipe(x1, y1, x2, y2 int, d time.Duration) error {
	return f.tap(fmt.Sprint("swipe ", x1, y1, x2, y2, d))
}
func (f *fakeBackend) Key(k int) error           { return f.tap(fmt.Sprint("key ", k)) }
func (f *fakeBackend) FrontApp() (string, error) { return "com.example.notes", nil }
func (f *fakeBackend) Launch(pkg string) (string, error) {
	if pkg != "com.example.notes" {
		return "", &Error{Code: CodeNotFound, Message: "no launcher activity in " + pkg + " (not installed, or nothing to launch)"}
	}
	return "com.example.notes/com.example.notes.Main", f.tap("launch " + pkg)
}
func (f *fakeBackend) Changes() (uint64, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.changes, 40 * time.Millisecond
}

// TestClientAgainstServe runs the same conformance drive as the JVM test
// against the Go Serve the simulator uses.
func TestClientAgainstServe(t *testing.T) {
	b := &fakeBackend{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				Serve(c, Hello{Proto: ProtocolVersion, SDK: 34, PID: 4242}, b, true)
			}()
		}
	}()
	conformance(t, func() Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}, func() {
		b.mu.Lock()
		b.changes++
		b.mu.Unlock()
	}, func() { b.toast("com.example.notes", "Saved") })
	if got := strings.Join(b.taps, "|"); got != "launch com.example.notes|tap 10 20|swipe 0 0 10 10 20ms|key 4" {
		t.Errorf("injected %q", got)
	}
}

func TestDialRejectsWhatIsNotTheHelper(t *testing.T) {
	for name, first := range map[string][]byte{
		"nothing":       nil,
		"other program": []byte("HTTP/1.1 400 Bad Request\r\n\r\n"),
		"wrong version": frame(OpHello, "phonepilot-helper proto=9 sdk=34 pid=1"),
		"version 0":     frame(OpHello, "phonepilot-helper proto=0 sdk=34 pid=1"),
		"not a hello":   frame(OpTree, "x"),
	} {
		t.Run(name, func(t *testing.T) {
			a, b := net.Pipe()
			go func() {
				b.Write(first)
				b.Close()
			}()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if _, err := Dial(ctx, a); err == nil {
				t.Fatal("Dial accepted it")
			}
		})
	}
}

// A version-1 helper (before OpLaunch) is still spoken to: its other
// requests work, Launch is not sent (ErrNotServed), and such a helper
// answers the request as an unknown type if a client sends it anyway.
func TestOldHelperIsNotAskedToLaunch(t *testing.T) {
	a, b := net.Pipe()
	fb := &fakeBackend{}
	go Serve(b, Hello{Proto: 1, SDK: 34, PID: 7}, fb, true)
	ctx := context.Background()
	c, err := Dial(ctx, a)
	if err != nil {
		t.Fatalf("a version-1 helper: %v", err)
	}
	if c.Serves(OpLaunch) {
		t.Fatal("a version-1 helper said to serve launch")
	}
	if _, err := c.Launch(ctx, "com.example.notes"); !errors.Is(err, ErrNotServed) {
		t.Fatalf("launch on a version-1 helper: %v, want ErrNotServed", err)
	}
	if len(fb.taps) != 0 {
		t.Fatalf("the version-1 helper launched: %v", fb.taps)
	}
	var he *Error
	if _, err := c.call(ctx, OpLaunch, []byte("com.example.notes")); !errorsAs(err, &he) || he.Code != CodeBadRequest || len(fb.taps) != 0 {
		t.Fatalf("a version-1 helper sent launch: %v (launched %v)", err, fb.taps)
	}
	if err := c.Tap(ctx, 1, 2); err != nil || c.Broken() {
		t.Fatalf("tap on a version-1 helper: %v", err)
	}
}

// A version-2 helper (before OpToasts) is not asked for toasts
// (ErrNotServed, nothing sent, the client not broken), and answers the
// request as an unknown type if a client sends it anyway; a version-3
// helper is.
func TestToastsOnlyFromVersion3(t *testing.T) {
	for _, proto := range []int{1, 2, 3} {
		a, b := net.Pipe()
		fb := &fakeBackend{}
		fb.toast("com.taobao.taobao", "Added to cart")
		go Serve(b, Hello{Proto: proto, SDK: 34, PID: 7}, fb, true)
		ctx := context.Background()
		c, err := Dial(ctx, a)
		if err != nil {
			t.Fatalf("a version-%d helper: %v", proto, err)
		}
		now, evs, err := c.Toasts(ctx, 0)
		if proto < ToastsVersion {
			if !errors.Is(err, ErrNotServed) || c.Broken() {
				t.Fatalf("toasts on a version-%d helper: %v (broken %t), want ErrNotServed", proto, err, c.Broken())
			}
			var he *Error
			if _, err := c.call(ctx, OpToasts, make([]byte, 8)); !errorsAs(err, &he) || he.Code != CodeBadRequest || !strings.Contains(he.Message, "unknown request type 78") {
				t.Fatalf("a version-%d helper answered toasts: %v", proto, err)
			}
			continue
		}
		if err != nil || now != 1 || len(evs) != 1 || evs[0] != (ToastEvent{Seq: 1, Package: "com.taobao.taobao", Text: "Added to cart"}) {
			t.Fatalf("toasts on a version-3 helper = %d %+v, %v", now, evs, err)
		}
		var he *Error
		if _, err := c.call(ctx, OpToasts, []byte{0, 0, 0, 0}); !errorsAs(err, &he) || he.Code != CodeBadRequest {
			t.Fatalf("a short toasts request: %v", err)
		}
	}
}

// A toasts reply that does not add up is an error, not events.
func TestDecodeToastsRejectsBadReplies(t *testing.T) {
	good := EncodeToasts(5, []ToastEvent{{Seq: 4, Ago: 3 * time.Millisecond, Package: "p", Text: "héllo"}, {Seq: 5, Package: "q"}})
	if now, evs, err := DecodeToasts(good); err != nil || now != 5 || len(evs) != 2 || evs[0].Text != "héllo" || evs[0].Ago != 3*time.Millisecond || evs[1].Package != "q" {
		t.Fatalf("good reply: %d %+v %v", now, evs, err)
	}
	many := make([]ToastEvent, MaxToasts+1)
	for i := range many {
		many[i].Seq = uint64(i + 1)
	}
	for name, r := range map[string][]byte{
		"empty":               nil,
		"short":               good[:len(good)-1],
		"trailing":            append(append([]byte(nil), good...), 0),
		"past now":            EncodeToasts(3, []ToastEvent{{Seq: 4}}),
		"out of order":        EncodeToasts(9, []ToastEvent{{Seq: 5}, {Seq: 5}}),
		"over the bound":      EncodeToasts(20, many),
		"negative count":      {0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff},
		"length past the end": EncodeToasts(1, []ToastEvent{{Seq: 1, Package: "p"}})[:28],
	} {
		if _, _, err := DecodeToasts(r); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func frame(op Op, s string) []byte {
	var b strings.Builder
	writeFrame(&b, op, []byte(s))
	return []byte(b.String())
}

// A helper that stops answering fails the call at the ctx deadline, and
// the client is then broken (device/adb restarts or falls back).
func TestHungHelperFailsAtDeadline(t *testing.T) {
	a, b := net.Pipe()
	go func() {
		b.Write(frame(OpHello, "phonepilot-helper proto=1 sdk=34 pid=7"))
		io.Copy(io.Discard, b) // reads requests, never answers
	}()
	c, err := Dial(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, _, err := c.Tree(ctx, TreeDefault); err == nil {
		t.Fatal("no error from a helper that never answers")
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("took %v", time.Since(start))
	}
	if !c.Broken() {
		t.Fatal("client not marked broken")
	}
	if _, _, err := c.Changes(context.Background()); err == nil {
		t.Fatal("a broken client answered")
	}
}

// A helper that dies mid-reply is an unexpected EOF, not a clean answer.
func TestTruncatedReply(t *testing.T) {
	a, b := net.Pipe()
	go func() {
		b.Write(frame(OpHello, "phonepilot-helper proto=1 sdk=34 pid=7"))
		buf := make([]byte, 64)
		b.Read(buf)
		b.Write([]byte{0, 0, 0, 100, 'T', 1, 2})
		b.Close()
	}()
	c, err := Dial(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Tree(context.Background(), TreeDefault); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("err = %v, want unexpected EOF", err)
	}
}

func TestServeRefusesOversizedFrame(t *testing.T) {
	a, b := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(b, Hello{Proto: 1, PID: 1}, &fakeBackend{}, false) }()
	if _, _, err := readFrame(a, MaxReply); err != nil {
		t.Fatal(err)
	}
	a.Write([]byte{0, 0x10, 0, 1}) // MaxRequest+1
	op, p, err := readFrame(a, MaxReply)
	if err != nil || op != opError || Code(p[0]) != CodeTooLarge {
		t.Fatalf("%c %q %v", op, p, err)
	}
	if err := <-done; !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Serve returned %v", err)
	}
}

func TestFrameRoundTrip(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 3, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	got, err := DecodeFrame(EncodeFrame(img))
	if err != nil || string(got.Pix) != string(img.Pix) {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := DecodeFrame(EncodeFrame(img)[:20]); err == nil {
		t.Fatal("short frame accepted")
	}
}

func TestNames(t *testing.T) {
	if !strings.HasPrefix(RemotePath(), "/data/local/tmp/phonepilot-helper-"+Hash()[:16]) {
		t.Fatal(RemotePath())
	}
	want := "CLASSPATH=" + RemotePath() + " exec app_process / phonepilot.helper.Main --socket S --idle-exit 30"
	if got := StartCommand("S", 30*time.Second); got != want {
		t.Fatalf("%q", got)
	}
	if !IsDex(Dex()) || IsDex(append(Dex(), 0)) {
		t.Fatal("IsDex")
	}
}
