package phonebench

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// ProgressBar draws one line on a terminal while a suite runs:
//
//	[██████████░░░░░░░░░░]  412/1350  31%  ✗ 7  0:42 left  reference realistic zh settings.wifi.off
//
// The caller decides whether the writer is a terminal; the bar rewrites
// its line with \r and is cleared by Done.
type ProgressBar struct {
	mu     sync.Mutex
	w      io.Writer
	now    func() time.Time
	start  time.Time
	failed int
	width  int // of the last line drawn, to clear it
	last   time.Time
}

// NewProgressBar draws on w, timing with now (time.Now).
func NewProgressBar(w io.Writer, now func() time.Time) *ProgressBar {
	return &ProgressBar{w: w, now: now, start: now()}
}

// barCells is how wide the bar itself is.
const barCells = 24

// Update is Options.Progress: it redraws the line, at most 20 times a
// second (and always for the last record).
func (b *ProgressBar) Update(done, total int, r Record) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !r.Success {
		b.failed++
	}
	now := b.now()
	if done < total && now.Sub(b.last) < 50*time.Millisecond {
		return
	}
	b.last = now
	line := b.line(done, total, r, now)
	pad := ""
	if n := len([]rune(line)); n < b.width {
		pad = strings.Repeat(" ", b.width-n)
	}
	b.width = len([]rune(line))
	fmt.Fprint(b.w, "\r"+line+pad)
}

func (b *ProgressBar) line(done, total int, r Record, now time.Time) string {
	frac := 0.0
	if total > 0 {
		frac = float64(done) / float64(total)
	}
	full := int(frac*barCells + 0.5)
	bar := strings.Repeat("█", full) + strings.Repeat("░", barCells-full)
	left := ""
	if done > 0 && done < total {
		el := now.Sub(b.start)
		rem := time.Duration(float64(el) / float64(done) * float64(total-done))
		left = fmt.Sprintf("  %s left", clockText(rem))
	}
	fails := ""
	if b.failed > 0 {
		fails = fmt.Sprintf("  ✗ %d", b.failed)
	}
	return fmt.Sprintf("[%s] %*d/%d %3.0f%%%s%s  %s %s %s %s", bar, len(fmt.Sprint(total)), done, total, 100*frac, fails, left,
		r.Policy, r.Profile, r.Locale, r.Task)
}

// Done clears the line.
func (b *ProgressBar) Done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.width > 0 {
		fmt.Fprint(b.w, "\r"+strings.Repeat(" ", b.width)+"\r")
	}
	b.width = 0
}

func clockText(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
