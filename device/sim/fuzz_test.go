package sim

import (
	"context"
	"io"
	"testing"
	"time"
)

// FuzzExec: no command line makes the phone panic or hang.
func FuzzExec(f *testing.F) {
	for _, s := range []string{
		"uiautomator dump /dev/tty", "input text 'a b'", "input swipe 1 2 3 4 5", "am start -n a/b", "ime set x",
		"settings put global wifi_on 0", "dumpsys window | grep -E 'a|b' | head -n 1", "echo \"x\\\" y\" > /sdcard/a; cat < /sdcard/a",
		"am broadcast -a ADB_INPUT_B64 --es msg ////", "input keyevent 3 4 66 67 187", "pm clear com.taobao.taobao", "cmd package resolve-activity --brief",
		"grep", "head -n", "rm -rf /", "ls -l /sdcard", "2>&1", ";;", "a && || b", "exit 300", "screencap -p /nodir/x.png",
	} {
		f.Add(s)
	}
	p := newTestPhone(f, Config{Width: 360, Height: 800})
	f.Fuzz(func(t *testing.T, line string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.Exec(ctx, line, len(line)%2 == 0, io.Discard, io.Discard)
	})
}
