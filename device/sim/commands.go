package sim

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"image"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// commands are the programs the simulated phone has, by name.
var commands map[string]func(p *Phone, e *cmdEnv) int

func init() {
	commands = map[string]func(p *Phone, e *cmdEnv) int{
		"true":  func(*Phone, *cmdEnv) int { return 0 },
		"false": func(*Phone, *cmdEnv) int { return 1 },
		"echo":  cmdEcho,
		"cat":   cmdCat,
		"rm":    cmdRm,
		"ls":    cmdLs,
		"mkdir": cmdMkdir,
		"sleep": cmdSleep,
		"exit":  cmdExit,
		"id": func(_ *Phone, e *cmdEnv) int {
			e.out("uid=2000(shell) gid=2000(shell) groups=2000(shell) context=u:r:shell:s0\n")
			return 0
		},
		"whoami":      func(_ *Phone, e *cmdEnv) int { e.out("shell\n"); return 0 },
		"grep":        cmdGrep,
		"head":        cmdHead,
		"tail":        cmdTail,
		"wc":          cmdWc,
		"base64":      cmdBase64,
		"uiautomator": cmdUIAutomator,
		"screencap":   cmdScreencap,
		"input":       cmdInput,
		"am":          cmdAm,
		"monkey":      cmdMonkey,
		"ime":         cmdIme,
		"settings":    cmdSettings,
		"dumpsys":     cmdDumpsys,
		"wm":          cmdWm,
		"getprop":     cmdGetprop,
		"pm":          cmdPm,
		"cmd":         cmdCmd,
		"app_process": cmdAppProcess,
		"kill":        cmdKill,
	}
}

func cmdEcho(_ *Phone, e *cmdEnv) int {
	args := e.args[1:]
	nl := true
	if len(args) > 0 && args[0] == "-n" {
		nl, args = false, args[1:]
	}
	e.out("%s", strings.Join(args, " "))
	if nl {
		e.out("\n")
	}
	return 0
}

func cmdCat(p *Phone, e *cmdEnv) int {
	if len(e.args) == 1 {
		e.stdout.Write(e.stdin)
		return 0
	}
	status := 0
	for _, f := range e.args[1:] {
		if f == "-" {
			e.stdout.Write(e.stdin)
			continue
		}
		data, err := p.ReadFile(f)
		if err != nil {
			if _, serr := p.Stat(f); serr == nil {
				e.err("cat: %s: Is a directory\n", f)
			} else {
				e.err("cat: %s: No such file or directory\n", f)
			}
			status = 1
			continue
		}
		e.stdout.Write(data)
	}
	return status
}

func cmdRm(p *Phone, e *cmdEnv) int {
	force, recursive := false, false
	var names []string
	for _, a := range e.args[1:] {
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			force = force || strings.Contains(a, "f")
			recursive = recursive || strings.ContainsAny(a, "rR")
			continue
		}
		names = append(names, a)
	}
	if len(names) == 0 {
		e.err("rm: Needs 1 argument (see \"rm --help\")\n")
		return 1
	}
	status := 0
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range names {
		if err := p.removeLocked(n, recursive); err != nil {
			if strings.Contains(err.Error(), "Is a directory") {
				e.err("rm: %s: is a directory\n", n)
				status = 1
			} else if !force {
				e.err("rm: %s: No such file or directory\n", n)
				status = 1
			}
		}
	}
	return status
}

func cmdLs(p *Phone, e *cmdEnv) int {
	long := false
	var names []string
	for _, a := range e.args[1:] {
		if strings.HasPrefix(a, "-") {
			long = long || strings.Contains(a, "l")
			continue
		}
		names = append(names, a)
	}
	if len(names) == 0 {
		names = []string{"/"}
	}
	status := 0
	for _, n := range names {
		st, err := p.Stat(n)
		if err != nil {
			e.err("ls: %s: No such file or directory\n", n)
			status = 1
			continue
		}
		entries := []struct {
			name string
			size int64
			dir  bool
			mod  time.Time
		}{}
		if st.IsDir() {
			list, _ := p.ReadDir(n)
			for _, f := range list {
				entries = append(entries, struct {
					name string
					size int64
					dir  bool
					mod  time.Time
				}{f.Name(), f.Size(), f.IsDir(), f.ModTime()})
			}
		} else {
			entries = append(entries, struct {
				name string
				size int64
				dir  bool
				mod  time.Time
			}{n, st.Size(), false, st.ModTime()})
		}
		for _, f := range entries {
			if !long {
				e.out("%s\n", f.name)
				continue
			}
			mode := "-rw-rw----"
			if f.dir {
				mode = "drwxrwx--x"
			}
			e.out("%s 1 shell shell %8d %s %s\n", mode, f.size, f.mod.Format("2006-01-02 15:04"), f.name)
		}
	}
	return status
}

func cmdMkdir(p *Phone, e *cmdEnv) int {
	parents := false
	status := 0
	for _, a := range e.args[1:] {
		if a == "-p" {
			parents = true
			continue
		}
		p.mu.Lock()
		err := p.mkdirLocked(a, parents)
		p.mu.Unlock()
		if err != nil {
			e.err("mkdir: '%s': %v\n", a, err)
			status = 1
		}
	}
	return status
}

func cmdSleep(p *Phone, e *cmdEnv) int {
	if len(e.args) < 2 {
		e.err("sleep: Needs 1 argument\n")
		return 1
	}
	f, err := strconv.ParseFloat(e.args[1], 64)
	if err != nil || f < 0 {
		e.err("sleep: invalid number '%s'\n", e.args[1])
		return 1
	}
	if p.cfg.Clock.Sleep(e.ctx, time.Duration(f*float64(time.Second))) != nil {
		return 130
	}
	return 0
}

func cmdExit(p *Phone, e *cmdEnv) int {
	code := 0
	if len(e.args) > 1 {
		code, _ = strconv.Atoi(e.args[1])
	}
	if e.exit != nil {
		*e.exit = code & 0xff
	}
	return exitShell
}

func inputLines(p *Phone, e *cmdEnv, files []string) ([]string, int) {
	data := e.stdin
	if len(files) > 0 {
		var b bytes.Buffer
		for _, f := range files {
			d, err := p.ReadFile(f)
			if err != nil {
				e.err("%s: %s: No such file or directory\n", e.args[0], f)
				return nil, 2
			}
			b.Write(d)
		}
		data = b.Bytes()
	}
	s := string(data)
	if s == "" {
		return nil, 0
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n"), 0
}

// cmdGrep supports what agents pipe dumpsys into: -E, -i, -v, -o, -c, -F.
func cmdGrep(p *Phone, e *cmdEnv) int {
	var pat string
	var files []string
	ext, icase, invert, only, count, fixed := false, false, false, false, false, false
	havePat := false
	for i := 1; i < len(e.args); i++ {
		a := e.args[i]
		if strings.HasPrefix(a, "-") && len(a) > 1 && !havePat {
			if a == "-e" && i+1 < len(e.args) {
				i++
				pat, havePat = e.args[i], true
				continue
			}
			for _, f := range a[1:] {
				switch f {
				case 'E':
					ext = true
				case 'i':
					icase = true
				case 'v':
					invert = true
				case 'o':
					only = true
				case 'c':
					count = true
				case 'F':
					fixed = true
				}
			}
			continue
		}
		if !havePat {
			pat, havePat = a, true
			continue
		}
		files = append(files, a)
	}
	if !havePat {
		e.err("usage: grep [-EFciov] PATTERN [FILE...]\n")
		return 2
	}
	expr := pat
	if fixed {
		expr = regexp.QuoteMeta(pat)
	} else if !ext {
		// basic regex: \| is alternation, | is literal
		expr = strings.ReplaceAll(strings.ReplaceAll(expr, "|", "\x00"), "\\\x00", "|")
		expr = strings.ReplaceAll(expr, "\x00", "\\|")
	}
	if icase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		e.err("grep: bad regex '%s'\n", pat)
		return 2
	}
	lines, st := inputLines(p, e, files)
	if st != 0 {
		return st
	}
	n := 0
	for _, l := range lines {
		m := re.MatchString(l)
		if m == invert {
			continue
		}
		n++
		switch {
		case count:
		case only && !invert:
			for _, s := range re.FindAllString(l, -1) {
				e.out("%s\n", s)
			}
		default:
			e.out("%s\n", l)
		}
	}
	if count {
		e.out("%d\n", n)
	}
	if n == 0 {
		return 1
	}
	return 0
}

func headTailArgs(e *cmdEnv) (int, []string) {
	n := 10
	var files []string
	for i := 1; i < len(e.args); i++ {
		a := e.args[i]
		switch {
		case a == "-n" && i+1 < len(e.args):
			i++
			n, _ = strconv.Atoi(strings.TrimPrefix(e.args[i], "+"))
		case strings.HasPrefix(a, "-n"):
			n, _ = strconv.Atoi(a[2:])
		case strings.HasPrefix(a, "-") && len(a) > 1:
			n, _ = strconv.Atoi(a[1:])
		default:
			files = append(files, a)
		}
	}
	return n, files
}

func cmdHead(p *Phone, e *cmdEnv) int {
	n, files := headTailArgs(e)
	lines, st := inputLines(p, e, files)
	for i := 0; i < len(lines) && i < n; i++ {
		e.out("%s\n", lines[i])
	}
	return st
}

func cmdTail(p *Phone, e *cmdEnv) int {
	n, files := headTailArgs(e)
	lines, st := inputLines(p, e, files)
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for _, l := range lines {
		e.out("%s\n", l)
	}
	return st
}

func cmdWc(p *Phone, e *cmdEnv) int {
	var files []string
	for _, a := range e.args[1:] {
		if !strings.HasPrefix(a, "-") {
			files = append(files, a)
		}
	}
	data := e.stdin
	if len(files) > 0 {
		d, err := p.ReadFile(files[0])
		if err != nil {
			e.err("wc: %s: No such file or directory\n", files[0])
			return 1
		}
		data = d
	}
	e.out("%d\n", bytes.Count(data, []byte("\n")))
	return 0
}

func cmdBase64(p *Phone, e *cmdEnv) int {
	decode := false
	var files []string
	for _, a := range e.args[1:] {
		if a == "-d" || a == "--decode" {
			decode = true
		} else if !strings.HasPrefix(a, "-") {
			files = append(files, a)
		}
	}
	data := e.stdin
	if len(files) > 0 {
		d, err := p.ReadFile(files[0])
		if err != nil {
			e.err("base64: %s: No such file or directory\n", files[0])
			return 1
		}
		data = d
	}
	if decode {
		out, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(data)), ""))
		if err != nil {
			e.err("base64: invalid input\n")
			return 1
		}
		e.stdout.Write(out)
		return 0
	}
	e.out("%s\n", base64.StdEncoding.EncodeToString(data))
	return 0
}

// uiautomator dump [--compressed] [file|/dev/tty]
func cmdUIAutomator(p *Phone, e *cmdEnv) int {
	if len(e.args) < 2 || e.args[1] != "dump" {
		e.err("Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\nhelp: displays help message\n\nruntest: executes UI automation tests\n\ndump: creates an XML dump of current UI hierarchy\n\nevents: prints out accessibility events until terminated\n")
		if len(e.args) >= 2 && e.args[1] == "help" {
			return 0
		}
		return 1
	}
	compressed := false
	file := "/sdcard/window_dump.xml"
	for _, a := range e.args[2:] {
		switch {
		case a == "--compressed":
			compressed = true
		case strings.HasPrefix(a, "-"):
		default:
			file = a
		}
	}
	p.mu.Lock()
	if n := len(p.helpers.running); n > 0 {
		// A phone allows one UiAutomation: while phonepilot's helper holds
		// it, uiautomator's own registration fails (helper.go).
		p.mu.Unlock()
		e.err("%s", uiAutomationHeld)
		return 1
	}
	delay := p.cost(ObserverUIAutomator, chargeTree)
	start := p.now()
	p.mu.Unlock()
	if err := p.cfg.Clock.Sleep(e.ctx, delay); err != nil {
		return 130
	}
	p.mu.Lock()
	xml, err := p.dumpSince(start, p.now(), compressed)
	if err == nil && file != "/dev/tty" {
		err = p.writeFileLocked(file, xml, 0o660, false)
		if err != nil {
			p.mu.Unlock()
			e.err("ERROR: could not write %s: %v\n", file, err)
			return 1
		}
	}
	p.mu.Unlock()
	if err != nil {
		// uiautomator prints this and exits 0 (ADB-FACTS §15).
		e.err("%s\n", err.Error())
		return 0
	}
	if file == "/dev/tty" && e.tty {
		e.stdout.Write(xml)
	}
	// Without a terminal the write to /dev/tty fails inside uiautomator,
	// which logs it and still reports success: only this line arrives.
	e.out("UI hierchary dumped to: %s\n", file)
	return 0
}

// screencap [-p] [file]: PNG with -p or a .png file name, raw RGBA otherwise.
func cmdScreencap(p *Phone, e *cmdEnv) int {
	pngOut := false
	file := ""
	for _, a := range e.args[1:] {
		switch {
		case a == "-p":
			pngOut = true
		case strings.HasPrefix(a, "-"):
		default:
			file = a
		}
	}
	if pngOut || strings.HasSuffix(file, ".png") {
		// The capture and the PNG encoding on the phone (paths.go); a raw
		// frame costs no encoding.
		if err := p.charge(e.ctx, ObserverUIAutomator, chargePNG); err != nil {
			return 130
		}
	}
	if strings.HasSuffix(file, ".png") {
		pngOut = true
	}
	p.mu.Lock()
	if p.secureLocked() {
		p.mu.Unlock()
		// A FLAG_SECURE window: the capture fails, as Open-AutoGLM and
		// others detect by "Status: -1".
		e.err("Status: -1\n")
		return 1
	}
	var data []byte
	if pngOut {
		data, _ = p.screenshotLocked()
	} else {
		img := p.drawLocked()
		data = rawScreencap(img)
	}
	if file != "" {
		err := p.writeFileLocked(file, data, 0o660, false)
		p.mu.Unlock()
		if err != nil {
			e.err("Error opening file: %s (No such file or directory)\n", file)
			return 1
		}
		return 0
	}
	p.mu.Unlock()
	e.stdout.Write(data)
	return 0
}

// rawScreencap is screencap's raw format on Android 12+: width, height,
// format (1 = RGBA_8888), dataspace, then the pixels.
func rawScreencap(img *image.RGBA) []byte {
	b := img.Bounds()
	out := make([]byte, 16, 16+len(img.Pix))
	binary.LittleEndian.PutUint32(out[0:], uint32(b.Dx()))
	binary.LittleEndian.PutUint32(out[4:], uint32(b.Dy()))
	binary.LittleEndian.PutUint32(out[8:], 1)
	binary.LittleEndian.PutUint32(out[12:], 0)
	return append(out, img.Pix...)
}

const inputUsage = `Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]

The sources are:
      touchscreen
      keyboard
      mouse

The commands and default sources are:
      text <string> (Default: keyboard)
      keyevent [--longpress|--doubletap|--async|--delay <duration between keycodes in ms>] <key code number or name> ... (Default: keyboard)
      tap <x> <y> (Default: touchscreen)
      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)
      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)
`

var inputSources = map[string]bool{"touchscreen": true, "keyboard": true, "mouse": true, "touchpad": true, "stylus": true, "trackball": true, "dpad": true, "gamepad": true, "joystick": true, "touchnavigation": true, "rotaryencoder": true}

func cmdInput(p *Phone, e *cmdEnv) int {
	args := e.args[1:]
	if len(args) > 0 && inputSources[args[0]] {
		args = args[1:]
	}
	if len(args) > 1 && args[0] == "-d" {
		args = args[2:]
	}
	if len(args) == 0 {
		e.err("%s", inputUsage)
		return 1
	}
	// Each `input` starts a Java process on a phone (paths.go).
	if err := p.charge(e.ctx, ObserverUIAutomator, chargeInput); err != nil {
		return 130
	}
	nums := func(want int, opt int) ([]int, bool) {
		rest := args[1:]
		if len(rest) < want || len(rest) > want+opt {
			return nil, false
		}
		out := make([]int, len(rest))
		for i, s := range rest {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, false
			}
			out[i] = int(f)
		}
		return out, true
	}
	bad := func() int {
		e.err("Error: Invalid arguments for command: %s\n%s", args[0], inputUsage)
		return 1
	}
	switch args[0] {
	case "tap":
		v, ok := nums(2, 0)
		if !ok {
			return bad()
		}
		p.mu.Lock()
		p.tapLocked(v[0], v[1])
		p.mu.Unlock()
	case "swipe", "draganddrop":
		v, ok := nums(4, 1)
		if !ok {
			return bad()
		}
		d := 300 * time.Millisecond
		if len(v) == 5 {
			d = time.Duration(v[4]) * time.Millisecond
		}
		p.mu.Lock()
		p.swipeLocked(v[0], v[1], v[2], v[3], d)
		p.mu.Unlock()
	case "text":
		if len(args) < 2 {
			return bad()
		}
		// input text takes ONE argument; %s is a space; characters without
		// a key mapping (anything non-ASCII) make it throw.
		text := strings.ReplaceAll(args[1], "%s", " ")
		for _, r := range text {
			if r >= utf8.RuneSelf || (r < 0x20 && r != '\n' && r != '\t') {
				e.err("Exception occurred while executing 'text':\njava.lang.NullPointerException: Attempt to get length of null array\n\tat com.android.server.input.InputShellCommand.sendText(InputShellCommand.java:283)\n")
				return 255
			}
		}
		p.mu.Lock()
		p.typeLocked(text)
		p.mu.Unlock()
	case "keyevent":
		var codes []int
		long := false
		for i := 1; i < len(args); i++ {
			a := args[i]
			switch a {
			case "--longpress":
				long = true
				continue
			case "--doubletap", "--async":
				continue
			case "--delay":
				i++
				continue
			}
			c, ok := keyCode(a)
			if !ok {
				e.err("Error: Unknown keycode: %s\n", a)
				return 1
			}
			codes = append(codes, c)
		}
		if len(codes) == 0 {
			return bad()
		}
		_ = long
		p.mu.Lock()
		for _, c := range codes {
			p.keyLocked(c)
		}
		p.mu.Unlock()
	case "press", "roll", "motionevent", "keycombination":
		// accepted, no effect on the simulated screen
	default:
		e.err("Error: Unknown command: %s\n%s", args[0], inputUsage)
		return 1
	}
	return 0
}

var keyNames = map[string]int{
	"HOME": keyHome, "BACK": keyBack, "ENTER": keyEnter, "DEL": keyDel, "APP_SWITCH": keyAppSwitch, "FORWARD_DEL": keyFwdDel,
	"SPACE": keySpace, "TAB": keyTab, "ESCAPE": keyEscape, "MENU": keyMenu, "SEARCH": 84, "POWER": 26, "VOLUME_UP": 24,
	"VOLUME_DOWN": 25, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21, "DPAD_RIGHT": 22, "DPAD_CENTER": 23, "MOVE_END": 123,
	"MOVE_HOME": 122, "WAKEUP": 224, "SLEEP": 223, "NOTIFICATION": 83, "CAMERA": 27,
}

func keyCode(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, n >= 0 && n < 400
	}
	name := strings.TrimPrefix(strings.ToUpper(s), "KEYCODE_")
	if c, ok := keyNames[name]; ok {
		return c, true
	}
	if len(name) == 1 {
		switch r := name[0]; {
		case r >= 'A' && r <= 'Z':
			return 29 + int(r-'A'), true
		case r >= '0' && r <= '9':
			return 7 + int(r-'0'), true
		}
	}
	return 0, false
}

// shortActivity writes an activity as Android does: relative to the
// package when it lies inside it.
func shortActivity(pkg, act string) string {
	if strings.HasPrefix(act, pkg+".") {
		return act[len(pkg):]
	}
	return act
}

func fullActivity(pkg, act string) string {
	if strings.HasPrefix(act, ".") {
		return pkg + act
	}
	return act
}

// settingsActions maps the intents of android.provider.Settings to pages.
var settingsActions = map[string]string{
	"android.settings.SETTINGS":             "main",
	"android.settings.WIFI_SETTINGS":        "network",
	"android.settings.WIRELESS_SETTINGS":    "network",
	"android.settings.BLUETOOTH_SETTINGS":   "connected",
	"android.settings.DISPLAY_SETTINGS":     "display",
	"android.settings.DEVICE_INFO_SETTINGS": "about",
}

func cmdAm(p *Phone, e *cmdEnv) int {
	if len(e.args) < 2 {
		e.err("usage: am [subcommand] [options]\n")
		return 1
	}
	switch e.args[1] {
	case "start", "start-activity":
		return amStart(p, e)
	case "force-stop", "kill":
		if len(e.args) < 3 {
			e.err("Error: no package specified\n")
			return 1
		}
		p.mu.Lock()
		p.act(false, func() { p.kill(e.args[len(e.args)-1]) })
		p.mu.Unlock()
		return 0
	case "broadcast":
		return amBroadcast(p, e)
	}
	e.err("Error: Unknown command: %s\n", e.args[1])
	return 1
}

func amStart(p *Phone, e *cmdEnv) int {
	var comp, action string
	var cats []string
	wait := false
	for i := 2; i < len(e.args); i++ {
		a := e.args[i]
		next := func() string {
			if i+1 < len(e.args) {
				i++
				return e.args[i]
			}
			return ""
		}
		switch a {
		case "-n":
			comp = next()
		case "-a":
			action = next()
		case "-c":
			cats = append(cats, next())
		case "-W":
			wait = true
		case "-d", "-t", "--user", "-f", "--es", "--ei", "--ez", "--activity-brought-to-front":
			if a == "--es" || a == "--ei" || a == "--ez" {
				next()
			}
			next()
		case "-S", "-R", "--activity-clear-task", "--activity-new-task":
		default:
			if !strings.HasPrefix(a, "-") && comp == "" && strings.Contains(a, "/") {
				comp = a
			}
		}
	}
	desc := "Intent { "
	if action != "" {
		desc += "act=" + action + " "
	}
	if len(cats) > 0 {
		desc += "cat=[" + strings.Join(cats, ",") + "] "
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var target app
	page := ""
	if comp != "" {
		pkg, act, ok := strings.Cut(comp, "/")
		a := p.app(pkg)
		if !ok || a == nil {
			e.out("Starting: %scmp=%s }\n", desc, comp)
			e.err("Error type 3\nError: Activity class {%s/%s} does not exist.\n", pkg, fullActivity(pkg, act))
			return 1
		}
		target = a
		desc += "cmp=" + pkg + "/" + shortActivity(pkg, fullActivity(pkg, act)) + " "
	} else if pg, ok := settingsActions[action]; ok {
		target = p.app(settingsPkg)
		page = pg
	} else {
		e.out("Starting: %s}\n", desc)
		e.err("Error: Activity not started, unable to resolve %s}\n", desc)
		return 1
	}
	e.out("Starting: %s}\n", desc)
	p.act(false, func() {
		p.popup = nil
		p.launch(target)
		if s, ok := target.(*settingsApp); ok && page != "" && page != "main" {
			s.stack = []*stScreen{{name: "main"}, {name: page}}
		}
	})
	if wait {
		e.out("Status: ok\nLaunchState: COLD\nActivity: %s/%s\nTotalTime: 412\nWaitTime: 418\nComplete\n", target.pkg(), shortActivity(target.pkg(), target.activity()))
	}
	return 0
}

// amBroadcast delivers ADB Keyboard's intents when it is the current IME
// (its receiver only exists then); anything else is a no-op broadcast.
func amBroadcast(p *Phone, e *cmdEnv) int {
	var action string
	extras := map[string]string{}
	for i := 2; i < len(e.args); i++ {
		a := e.args[i]
		switch a {
		case "-a":
			if i+1 < len(e.args) {
				i++
				action = e.args[i]
			}
		case "--es", "--ei", "--eia", "--ez", "--el":
			if i+2 < len(e.args) {
				extras[e.args[i+1]] = e.args[i+2]
				i += 2
			}
		case "-n", "-c", "-d", "--user", "-f", "-p":
			i++
		}
	}
	flags := ""
	if len(extras) > 0 {
		flags = " (has extras)"
	}
	e.out("Broadcasting: Intent { act=%s flg=0x400000%s }\n", action, flags)
	p.mu.Lock()
	if p.ime == adbKeyboardIME && p.imes[adbKeyboardIME] {
		p.adbKeyboard(action, extras)
	}
	p.mu.Unlock()
	e.out("Broadcast completed: result=0\n")
	return 0
}

func (p *Phone) adbKeyboard(action string, extras map[string]string) {
	switch action {
	case "ADB_INPUT_TEXT":
		p.typeLocked(extras["msg"])
	case "ADB_INPUT_B64":
		data, err := base64.StdEncoding.DecodeString(extras["msg"])
		if err == nil {
			p.typeLocked(string(data))
		}
	case "ADB_INPUT_CHARS":
		var b strings.Builder
		for _, s := range strings.Split(extras["chars"], ",") {
			if n, err := strconv.Atoi(strings.TrimSpace(s)); err == nil {
				b.WriteRune(rune(n))
			}
		}
		p.typeLocked(b.String())
	case "ADB_CLEAR_TEXT":
		p.setTextLocked("")
	case "ADB_INPUT_CODE":
		if n, err := strconv.Atoi(extras["code"]); err == nil {
			p.keyLocked(n)
		}
	case "ADB_EDITOR_CODE":
		if f := p.focusedField(); f != nil && f.edit.submit != nil {
			p.act(false, f.edit.submit)
		}
	}
}

func cmdMonkey(p *Phone, e *cmdEnv) int {
	var pkg string
	for i := 1; i < len(e.args); i++ {
		e.out("  bash arg: %s\n", e.args[i])
		if e.args[i] == "-p" && i+1 < len(e.args) {
			pkg = e.args[i+1]
		}
	}
	p.mu.Lock()
	a := p.app(pkg)
	if a == nil {
		p.mu.Unlock()
		e.err("** No activities found to run, monkey aborted.\n")
		return 251
	}
	p.act(false, func() {
		p.popup = nil
		p.launch(a)
	})
	p.mu.Unlock()
	e.out("Events injected: 1\n## Network stats: elapsed time=14ms (0ms mobile, 0ms wifi, 14ms not connected)\n")
	return 0
}

func (p *Phone) installedIMEs() []string {
	out := []string{gboardIME}
	if !p.cfg.NoADBKeyboard {
		out = append(out, adbKeyboardIME)
	}
	return out
}

func cmdIme(p *Phone, e *cmdEnv) int {
	if len(e.args) < 2 {
		e.err("usage: ime list [-a] [-s] | enable ID | disable ID | set ID | reset\n")
		return 1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	installed := func(id string) bool {
		for _, i := range p.installedIMEs() {
			if i == id {
				return true
			}
		}
		return false
	}
	arg := ""
	if len(e.args) > 2 {
		arg = e.args[len(e.args)-1]
	}
	switch e.args[1] {
	case "list":
		all, short := false, false
		for _, a := range e.args[2:] {
			all = all || strings.Contains(a, "a")
			short = short || strings.Contains(a, "s")
		}
		for _, id := range p.installedIMEs() {
			if !all && !p.imes[id] {
				continue
			}
			if short {
				e.out("%s\n", id)
				continue
			}
			pkg, _, _ := strings.Cut(id, "/")
			e.out("%s:\n  mId=%s mSettingsActivityName=null mIsVrOnly=false mSupportsSwitchingToNextInputMethod=false\n  mIsDefaultResId=0x0\n  Service:\n    priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n    ServiceInfo:\n      name=%s\n      packageName=%s\n", id, id, fullActivity(pkg, strings.SplitN(id, "/", 2)[1]), pkg)
		}
		return 0
	case "enable", "disable":
		if !installed(arg) {
			e.err("Unknown input method %s cannot be %sd for user #0\n", arg, e.args[1])
			return 255
		}
		on := e.args[1] == "enable"
		was := p.imes[arg]
		p.imes[arg] = on
		switch {
		case on && was:
			e.out("Input method %s: already enabled for user #0\n", arg)
		case on:
			e.out("Input method %s: now enabled for user #0\n", arg)
		case !on:
			e.out("Input method %s: now disabled for user #0\n", arg)
			if p.ime == arg {
				p.ime = gboardIME
			}
		}
		return 0
	case "set":
		if !installed(arg) || !p.imes[arg] {
			e.err("Unknown input method %s cannot be selected for user #0\n", arg)
			return 255
		}
		p.ime = arg
		e.out("Input method %s selected for user #0\n", arg)
		return 0
	case "reset":
		p.ime = gboardIME
		for k := range p.imes {
			p.imes[k] = k == gboardIME
		}
		e.out("Reset current and enabled IMEs for user #0\n  Selected: %s\n", gboardIME)
		return 0
	}
	e.err("Unknown command: %s\n", e.args[1])
	return 255
}

func boolSetting(v bool, on, off string) string {
	if v {
		return on
	}
	return off
}

func (p *Phone) getSetting(ns, key string) string {
	s := p.app(settingsPkg).(*settingsApp)
	switch ns + "/" + key {
	case "secure/default_input_method":
		return p.ime
	case "secure/enabled_input_methods":
		var ids []string
		for _, id := range p.installedIMEs() {
			if p.imes[id] {
				ids = append(ids, id)
			}
		}
		return strings.Join(ids, ":")
	case "global/wifi_on":
		return boolSetting(s.wifi, "1", "0")
	case "global/bluetooth_on":
		return boolSetting(s.bluetooth, "1", "0")
	case "global/airplane_mode_on":
		return boolSetting(s.airplane, "1", "0")
	case "secure/ui_night_mode":
		return boolSetting(s.dark, "2", "1")
	case "system/system_locales":
		return map[bool]string{false: "en-US", true: "zh-CN"}[p.zh()]
	}
	if v, ok := p.settings[ns+"/"+key]; ok {
		return v
	}
	return "null"
}

func (p *Phone) putSetting(ns, key, val string) {
	s := p.app(settingsPkg).(*settingsApp)
	on := val == "1" || val == "true"
	switch ns + "/" + key {
	case "secure/default_input_method":
		p.ime = val
		return
	case "global/wifi_on":
		s.wifi = on
		return
	case "global/bluetooth_on":
		s.bluetooth = on
		return
	case "global/airplane_mode_on":
		s.airplane = on
		return
	case "secure/ui_night_mode":
		s.dark = val == "2"
		return
	}
	p.settings[ns+"/"+key] = val
}

func cmdSettings(p *Phone, e *cmdEnv) int {
	var args []string
	for i := 1; i < len(e.args); i++ {
		if e.args[i] == "--user" {
			i++
			continue
		}
		args = append(args, e.args[i])
	}
	usage := func() int {
		e.err("usage:  settings [--user <USER_ID> | current] get namespace key\n        settings [--user <USER_ID> | current] put namespace key value\n        settings [--user <USER_ID> | current] delete namespace key\n        settings [--user <USER_ID> | current] list namespace\n")
		return 1
	}
	if len(args) < 2 {
		return usage()
	}
	ns := args[1]
	if ns != "system" && ns != "secure" && ns != "global" {
		e.err("Invalid namespace '%s'\n", ns)
		return usage()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch args[0] {
	case "get":
		if len(args) < 3 {
			return usage()
		}
		e.out("%s\n", p.getSetting(ns, args[2]))
	case "put":
		if len(args) < 4 {
			return usage()
		}
		p.act(false, func() { p.putSetting(ns, args[2], args[3]) })
	case "delete":
		if len(args) < 3 {
			return usage()
		}
		delete(p.settings, ns+"/"+args[2])
		e.out("Deleted 1 rows\n")
	case "list":
		var keys []string
		for k := range p.settings {
			if strings.HasPrefix(k, ns+"/") {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			e.out("%s=%s\n", strings.TrimPrefix(k, ns+"/"), p.settings[k])
		}
	default:
		return usage()
	}
	return 0
}

// hexID is a stable fake object id for dumpsys lines.
func hexID(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s))
	return fmt.Sprintf("%07x", h.Sum32()&0xfffffff)
}

func (p *Phone) focusedWindow() (pkg, act string) {
	if p.popup != nil && !p.popup.ad && !p.popup.fake {
		// The system window in front (dialogWindow's) has the focus.
		switch p.popup.kind {
		case popupANR:
			// A window of the system server's, not an activity
			// (mCurrentFocus=Window{… Application Not Responding: …}).
			return androidPkg, ""
		case popupSystemUpdate:
			return gmsPkg, "com.google.android.gms.update.SystemUpdateActivity"
		}
		return permissionPkg, "com.android.permissioncontroller.permission.ui.GrantPermissionsActivity"
	}
	return p.foreground()
}

// secureLocked reports a foreground app window with FLAG_SECURE (the
// payment screen): no screenshot, and dumpsys says so.
func (p *Phone) secureLocked() bool {
	a := p.fgApp()
	return a != nil && a.secure()
}

func cmdDumpsys(p *Phone, e *cmdEnv) int {
	if len(e.args) < 2 {
		e.out("Currently running services:\n  activity\n  input_method\n  notification\n  window\n")
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settle(p.now())
	pkg, act := p.focusedWindow()
	comp := pkg + "/" + shortActivity(pkg, act)
	task := 40 + len(p.recents)
	switch e.args[1] {
	case "power":
		// The simulated screen is always on and unlocked.
		e.out("POWER MANAGER (dumpsys power)\n  mWakefulness=Awake\n  mWakefulnessChanging=false\n  mIsPowered=true\n")
	case "window":
		w, h := p.cfg.Width, p.cfg.Height
		sub := ""
		if len(e.args) > 2 {
			sub = e.args[2]
		}
		if sub == "" || sub == "displays" || sub == "d" {
			e.out("WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)\n  Display: mDisplayId=0 rootTasks=3\n    init=%dx%d %ddpi base=%dx%d %ddpi cur=%dx%d app=%dx%d rng=%dx%d-%dx%d\n",
				w, h, p.density(), w, h, p.density(), w, h, w, h-p.g.navH, w, w-p.g.navH, h, h)
		}
		if sub == "" || sub == "windows" || sub == "w" {
			e.out("WINDOW MANAGER WINDOWS (dumpsys window windows)\n")
			e.out("  Window #0 Window{%s u0 NavigationBar0}:\n    mDisplayId=0 rootTaskId=1 mSession=Session{5a1b2c3 1234:u0a10123} mClient=android.os.BinderProxy@1f2e3d4\n", hexID("nav"))
			e.out("  Window #1 Window{%s u0 StatusBar}:\n    mDisplayId=0 rootTaskId=1\n", hexID("status"))
			e.out("  Window #2 Window{%s u0 %s}:\n    mDisplayId=0 rootTaskId=%d mHasSurface=true isReadyForDisplay()=true\n", hexID(comp), comp, task)
			flags := "LAYOUT_IN_SCREEN LAYOUT_INSET_DECOR SPLIT_TOUCH HARDWARE_ACCELERATED"
			if p.secureLocked() {
				flags += " SECURE"
			}
			e.out("    mAttrs={(0,0)(fillxfill) ty=BASE_APPLICATION fmt=TRANSLUCENT wanim=0x1030001\n      fl=%s DRAWS_SYSTEM_BAR_BACKGROUNDS}\n", flags)
		}
		e.out("\n  mGlobalConfiguration={1.0 ?mcc?mnc [%s] ldltr sw411dp w411dp h914dp %ddpi nrml long port finger -keyb/v/h -nav/h winConfig={ mBounds=Rect(0, 0 - %d, %d)}}\n",
			map[bool]string{false: "en_US", true: "zh_CN"}[p.zh()], p.density(), w, h)
		e.out("  mCurrentFocus=Window{%s u0 %s}\n", hexID(comp), comp)
		e.out("  mFocusedApp=ActivityRecord{%s u0 %s t%d}\n", hexID("ar"+comp), comp, task)
		e.out("  mInputMethodWindow=Window{%s u0 InputMethod}\n", hexID("ime"))
		return 0
	case "activity":
		if len(e.args) > 2 && e.args[2] != "activities" && e.args[2] != "a" && e.args[2] != "top" {
			e.out("ACTIVITY MANAGER %s\n", strings.ToUpper(e.args[2]))
			return 0
		}
		rec := fmt.Sprintf("ActivityRecord{%s u0 %s t%d}", hexID("ar"+comp), comp, task)
		e.out("ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\nDisplay #0 (activities from top to bottom):\n")
		e.out("  * Task{%s #%d type=standard A=10123:%s U=0 visible=true visibleRequested=true mode=fullscreen translucent=false sz=1}\n", hexID("task"+pkg), task, pkg)
		e.out("    mResumedActivity: %s\n", rec)
		e.out("    * Hist  #0: %s\n      packageName=%s processName=%s\n      intent={act=android.intent.action.MAIN cat=[android.intent.category.LAUNCHER] flg=0x10200000 cmp=%s}\n", rec, pkg, pkg, comp)
		e.out("\n  ResumedActivity: %s\n\n  mFocusedRootTask=Task{%s #%d}\n  topResumedActivity=%s\n", rec, hexID("task"+pkg), task, rec)
		return 0
	case "input_method":
		e.out("Input method service state:\n  mCurMethodId=%s\n  mCurFocusedWindowClient=%s\n  mInputShown=%v\n", p.ime, comp, p.focusedField() != nil)
		return 0
	case "package":
		if len(e.args) > 2 {
			p.dumpsysPackage(e, e.args[2])
			return 0
		}
	case "notification":
		// The toast queue as NotificationManagerService dumps it (Android
		// 11+: TextToastRecord's toString); no notifications are posted.
		e.out("Current Notification Manager state:\n")
		if ts := p.toastsLocked(p.now()); len(ts) > 0 {
			e.out("  Toast Queue:\n")
			for _, t := range ts {
				e.out("    TextToastRecord{%s 4321:%s/u0a123 token=android.os.BinderProxy@%s text=%s duration=0}\n", hexID("toast"+t.Text), t.Package, hexID("token"+t.Text), t.Text)
			}
			e.out("  \n")
		}
		return 0
	case "display":
		e.out("DISPLAY MANAGER (dumpsys display)\n  mDefaultViewport=DisplayViewport{valid=true, displayId=0, orientation=0, logicalFrame=Rect(0, 0 - %d, %d), deviceWidth=%d, deviceHeight=%d}\n",
			p.cfg.Width, p.cfg.Height, p.cfg.Width, p.cfg.Height)
		return 0
	}
	e.err("Can't find service: %s\n", e.args[1])
	return 0
}

func (p *Phone) density() int { return 420 * p.cfg.Width / 1080 }

func cmdWm(p *Phone, e *cmdEnv) int {
	if len(e.args) < 2 {
		e.err("usage: wm size | density\n")
		return 1
	}
	switch e.args[1] {
	case "size":
		if len(e.args) > 2 && e.args[2] != "reset" {
			e.err("wm size: overriding the display size is not supported by the simulator\n")
			return 1
		}
		e.out("Physical size: %dx%d\n", p.cfg.Width, p.cfg.Height)
	case "density":
		e.out("Physical density: %d\n", p.density())
	default:
		e.err("Error: unknown command '%s'\n", e.args[1])
		return 1
	}
	return 0
}

func (p *Phone) props() map[string]string {
	product, model, dev := p.Model()
	loc := p.locale()
	return map[string]string{
		"ro.product.name": product, "ro.product.model": model, "ro.product.device": dev,
		"ro.product.brand": "phonepilot", "ro.product.manufacturer": "PhonePilot",
		"ro.build.version.release": "14", "ro.build.version.sdk": "34", "ro.build.type": "user",
		"ro.build.display.id": "UP1A.231005.007", "ro.serialno": "PILOTSIM0001",
		"persist.sys.locale": loc, "ro.product.locale": loc, "ro.sf.lcd_density": strconv.Itoa(p.density()),
		"sys.boot_completed": "1", "service.bootanim.exit": "1", "ro.debuggable": "0", "ro.secure": "1",
		"ro.product.cpu.abi": "x86_64", "ro.kernel.qemu": "0",
	}
}

func cmdGetprop(p *Phone, e *cmdEnv) int {
	props := p.props()
	if len(e.args) > 1 {
		e.out("%s\n", props[e.args[1]])
		return 0
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		e.out("[%s]: [%s]\n", k, props[k])
	}
	return 0
}

func (p *Phone) packages() (all []string, third map[string]bool) {
	third = map[string]bool{taobaoPkg: true}
	for _, a := range p.apps {
		all = append(all, a.pkg())
	}
	all = append(all, launcherPkg, systemUIPkg, permissionPkg, "com.google.android.inputmethod.latin", "android", "com.android.shell")
	if !p.cfg.NoADBKeyboard {
		all = append(all, "com.android.adbkeyboard")
		third["com.android.adbkeyboard"] = true
	}
	sort.Strings(all)
	return all, third
}

func cmdPm(p *Phone, e *cmdEnv) int {
	if len(e.args) < 2 {
		e.err("usage: pm list packages [-3] [-s] [FILTER]\n")
		return 1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.args[1] {
	case "list":
		if len(e.args) < 3 || e.args[2] != "packages" {
			e.err("Error: unknown list type\n")
			return 1
		}
		onlyThird, onlySys := false, false
		filter := ""
		for _, a := range e.args[3:] {
			switch a {
			case "-3":
				onlyThird = true
			case "-s":
				onlySys = true
			default:
				if !strings.HasPrefix(a, "-") {
					filter = a
				}
			}
		}
		all, third := p.packages()
		for _, pkg := range all {
			if (onlyThird && !third[pkg]) || (onlySys && third[pkg]) || !strings.Contains(pkg, filter) {
				continue
			}
			e.out("package:%s\n", pkg)
		}
		return 0
	case "path":
		if len(e.args) > 2 {
			all, _ := p.packages()
			for _, pkg := range all {
				if pkg == e.args[2] {
					e.out("package:/data/app/~~%s==/%s-1/base.apk\n", hexID(pkg), pkg)
					return 0
				}
			}
		}
		return 1
	case "clear":
		if len(e.args) > 2 {
			for i, a := range p.apps {
				if a.pkg() == e.args[2] {
					p.apps[i] = appFor(a.pkg())(p)
					p.kill(a.pkg())
					e.out("Success\n")
					return 0
				}
			}
		}
		e.out("Failed\n")
		return 1
	}
	e.err("Unknown command: %s\n", e.args[1])
	return 1
}

func cmdCmd(p *Phone, e *cmdEnv) int {
	if len(e.args) < 2 {
		e.err("cmd: No service specified; use -l to list all running services.\n")
		return 20
	}
	switch e.args[1] {
	case "input":
		return cmdInput(p, &cmdEnv{ctx: e.ctx, args: append([]string{"input"}, e.args[2:]...), stdin: e.stdin, tty: e.tty, stdout: e.stdout, stderr: e.stderr})
	case "package":
		if len(e.args) > 2 && e.args[2] == "resolve-activity" {
			pkg := ""
			brief := false
			for i := 3; i < len(e.args); i++ {
				switch e.args[i] {
				case "--brief":
					brief = true
				case "-c", "-a", "--user":
					i++
				default:
					if !strings.HasPrefix(e.args[i], "-") {
						pkg = e.args[i]
					}
				}
			}
			p.mu.Lock()
			a := p.app(pkg)
			p.mu.Unlock()
			if a == nil {
				e.out("No activity found\n")
				return 0
			}
			if brief {
				e.out("priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n%s/%s\n", pkg, shortActivity(pkg, a.launchActivity()))
			} else {
				e.out("Activity Resolver Table:\n  ActivityInfo:\n    name=%s\n    packageName=%s\n", a.launchActivity(), pkg)
			}
			return 0
		}
		return cmdPm(p, &cmdEnv{ctx: e.ctx, args: append([]string{"pm"}, e.args[2:]...), stdin: e.stdin, stdout: e.stdout, stderr: e.stderr})
	}
	e.err("cmd: Can't find service: %s\n", e.args[1])
	return 20
}
