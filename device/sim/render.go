package sim

import (
	"image"
	"image/color"
	"image/draw"
	"math"
	"os"
	"strings"
	"sync"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// CJKFontPath is where Debian's fonts-noto-cjk puts the CJK font. Without
// it Chinese text renders as boxes (the dump is unaffected).
const CJKFontPath = "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"

// fonts are parsed once per process; faces are cached per size. Faces are
// not safe for concurrent use, so drawing text holds fontMu.
var (
	fontOnce  sync.Once
	fontMu    sync.Mutex
	latinReg  *opentype.Font
	latinBold *opentype.Font
	cjkFont   *opentype.Font
	faces     = map[faceKey]font.Face{}
)

type faceKey struct {
	which int // 0 regular, 1 bold, 2 cjk
	size  int
}

func loadFonts() {
	latinReg, _ = opentype.Parse(goregular.TTF)
	latinBold, _ = opentype.Parse(gobold.TTF)
	data, err := os.ReadFile(CJKFontPath)
	if err != nil {
		return
	}
	col, err := opentype.ParseCollection(data)
	if err != nil {
		return
	}
	// Prefer the Simplified Chinese member; the first is Japanese.
	var buf sfnt.Buffer
	for i := 0; i < col.NumFonts(); i++ {
		f, err := col.Font(i)
		if err != nil {
			continue
		}
		if cjkFont == nil {
			cjkFont = f
		}
		if name, err := f.Name(&buf, sfnt.NameIDFamily); err == nil && strings.HasSuffix(name, " SC") {
			cjkFont = f
			break
		}
	}
}

// HasCJKFont reports whether Chinese text renders with a real font.
func HasCJKFont() bool {
	fontOnce.Do(loadFonts)
	return cjkFont != nil
}

func face(which, size int) font.Face {
	if size < 4 {
		size = 4
	}
	k := faceKey{which, size}
	if f, ok := faces[k]; ok {
		return f
	}
	src := latinReg
	switch which {
	case 1:
		src = latinBold
	case 2:
		src = cjkFont
	}
	if src == nil {
		return nil
	}
	f, err := opentype.NewFace(src, &opentype.FaceOptions{Size: float64(size), DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return nil
	}
	faces[k] = f
	return f
}

// renderer paints a tree of nodes onto an image.
type renderer struct {
	img *image.RGBA
	s   float64
}

// screenshotLocked draws the current screen and encodes it as PNG.
func (p *Phone) screenshotLocked() ([]byte, image.Image) {
	img, png := p.renderLocked(true)
	return png, img
}

// drawLocked draws the current screen.
func (p *Phone) drawLocked() *image.RGBA {
	img, _ := p.renderLocked(false)
	return img
}

// renderLocked draws the current screen (and encodes it when wantPNG). The
// drawing is a pure function of the node tree, so when nothing drawn has
// changed since the last call it returns that rendering again: a real
// phone's screencap copies a ready framebuffer, and ours would otherwise
// spend tens of milliseconds painting the same pixels. Callers must not
// modify what it returns.
func (p *Phone) renderLocked(wantPNG bool) (*image.RGBA, []byte) {
	ws := p.windowsAt(p.now(), false)
	key, cacheable := renderKey(p.g, ws)
	if cacheable {
		if s := keptShot(key); s != nil {
			if wantPNG {
				return s.img, s.pngOf()
			}
			return s.img, nil
		}
	}
	img := p.paint(ws)
	var png []byte
	if wantPNG {
		png = encodePNG(img)
	}
	if cacheable {
		keepShot(&lastShot{key: key, img: img, png: png})
	}
	return img, png
}

// paint draws the windows, topmost last.
func (p *Phone) paint(ws []*node) *image.RGBA {
	fontOnce.Do(loadFonts)
	img := image.NewRGBA(image.Rect(0, 0, p.g.W, p.g.H))
	draw.Draw(img, img.Bounds(), &image.Uniform{black}, image.Point{}, draw.Src)
	rd := &renderer{img: img, s: p.g.scale}
	fontMu.Lock()
	defer fontMu.Unlock()
	for i := len(ws) - 1; i >= 0; i-- {
		rd.node(ws[i])
	}
	return img
}

func (rd *renderer) node(n *node) {
	if n.r.Empty() {
		return
	}
	lay := n.r
	if !n.full.Empty() {
		lay = n.full
	}
	dst, ok := rd.img.SubImage(n.r).(*image.RGBA)
	if !ok {
		return
	}
	l := n.look
	radius := l.radius
	if radius < 0 {
		radius = min(lay.Dx(), lay.Dy()) / 2
	}
	textDone := false
	switch l.kind {
	case paintWallpaper:
		draw.Draw(dst, lay, wallpaper(lay.Dx(), lay.Dy()), image.Point{}, draw.Src)
	case paintPicture:
		fillRounded(dst, lay, radius, l.accent)
		c := lighten(l.accent, 0.45)
		cx, cy := (lay.Min.X+lay.Max.X)/2, (lay.Min.Y+lay.Max.Y)/2
		d := min(lay.Dx(), lay.Dy())
		fillRounded(dst, rect(cx-d/4, cy-d/4, cx+d/4, cy+d/4), d/10, c)
		fillCircle(dst, cx+d/5, cy-d/5, d/10, lighten(l.accent, 0.7))
	}
	if l.bg.A > 0 {
		fillRounded(dst, lay, radius, l.bg)
	}
	if l.border.A > 0 {
		strokeRounded(dst, lay, radius, max(2, int(2*rd.s+0.5)), l.border)
	}
	if l.snapshot != nil {
		rd.snapshot(dst, l.snapshot(), lay)
	}
	switch l.kind {
	case paintIcon:
		rd.icon(dst, n, lay)
		textDone = true
	case paintSwitch:
		rd.switchWidget(dst, lay, n.checked, l.accent)
	case paintSpinner:
		cx, cy := (lay.Min.X+lay.Max.X)/2, (lay.Min.Y+lay.Max.Y)/2
		arc(dst, cx, cy, float64(min(lay.Dx(), lay.Dy()))/2-4, 8*rd.s, 0, 1.5*math.Pi, l.accent)
	case paintBattery:
		w := lay.Dx()
		body := rect(lay.Min.X, lay.Min.Y, lay.Max.X-w/8, lay.Max.Y)
		strokeRounded(dst, body, 4, max(2, int(3*rd.s)), l.fg)
		in := body.Inset(max(3, int(6*rd.s)))
		in.Max.X = in.Min.X + in.Dx()*85/100
		fillRect(dst, in, l.fg)
		fillRect(dst, rect(lay.Max.X-w/8, lay.Min.Y+lay.Dy()/3, lay.Max.X, lay.Max.Y-lay.Dy()/3), l.fg)
	case paintGlyph:
		gr := lay
		if n.text != "" {
			// icon above a caption
			gr = rect(lay.Min.X, lay.Min.Y+lay.Dy()/10, lay.Max.X, lay.Min.Y+lay.Dy()*6/10)
			rd.text(dst, n.text, rect(lay.Min.X, lay.Min.Y+lay.Dy()*6/10, lay.Max.X, lay.Max.Y), l.size, l.fg, false, true)
			textDone = true
		}
		side := min(gr.Dx(), gr.Dy()) * 6 / 10
		if n.text == "" && l.bg.A == 0 {
			side = min(gr.Dx(), gr.Dy()) * 7 / 10
		}
		cx, cy := (gr.Min.X+gr.Max.X)/2, (gr.Min.Y+gr.Max.Y)/2
		drawGlyph(dst, l.glyph, rect(cx-side/2, cy-side/2, cx+side/2, cy+side/2), l.fg, rd.s)
	}
	if !textDone && n.text != "" {
		size := l.size
		if size == 0 {
			size = int(40 * rd.s)
		}
		fg := l.fg
		if fg.A == 0 {
			fg = rgb(0x20, 0x20, 0x20)
		}
		tr := lay
		if !l.center && (l.bg.A > 0 || l.border.A > 0) {
			tr.Min.X += int(36 * rd.s)
		}
		rd.text(dst, n.text, tr, size, fg, l.bold, l.center)
	}
	for _, k := range n.kids {
		rd.node(k)
	}
}

// snapshot renders a window off screen and scales its top part into the
// area of r below a header band (a recents card).
func (rd *renderer) snapshot(dst *image.RGBA, w *node, r image.Rectangle) {
	if w == nil {
		return
	}
	full := image.NewRGBA(w.r)
	(&renderer{img: full, s: rd.s}).node(w)
	area := rect(r.Min.X+r.Dx()/30, r.Min.Y+r.Dy()/4, r.Max.X-r.Dx()/30, r.Max.Y-r.Dy()/30)
	scale := float64(area.Dx()) / float64(w.r.Dx())
	srcH := int(float64(area.Dy()) / scale)
	src := full.SubImage(rect(w.r.Min.X, w.r.Min.Y+rd.s2i(100), w.r.Max.X, min(w.r.Max.Y, w.r.Min.Y+rd.s2i(100)+srcH)))
	xdraw.ApproxBiLinear.Scale(dst, area, src, src.Bounds(), xdraw.Src, nil)
}

func (rd *renderer) s2i(v int) int { return int(float64(v)*rd.s + 0.5) }

// icon draws an app icon: a rounded square (or a circle) with its glyph,
// and the label underneath when the node has one (launcher cells).
func (rd *renderer) icon(dst *image.RGBA, n *node, lay image.Rectangle) {
	l := n.look
	ir := lay
	if n.text != "" {
		side := min(lay.Dx(), lay.Dy()) * 62 / 100
		cx := (lay.Min.X + lay.Max.X) / 2
		ir = rect(cx-side/2, lay.Min.Y+lay.Dy()/20, cx+side/2, lay.Min.Y+lay.Dy()/20+side)
		rd.text(dst, n.text, rect(lay.Min.X, ir.Max.Y+lay.Dy()/40, lay.Max.X, lay.Max.Y), l.size, l.fg, false, true)
	}
	radius := ir.Dx() / 4
	if l.radius < 0 {
		radius = ir.Dx() / 2
	}
	fillRounded(dst, ir, radius, l.accent)
	gl := l.glyph
	gr := ir.Inset(ir.Dx() / 5)
	if isVectorGlyph(gl) {
		drawGlyph(dst, gl, gr, white, rd.s)
		return
	}
	rd.text(dst, gl, ir, ir.Dy()*45/100, white, true, true)
}

func (rd *renderer) switchWidget(dst *image.RGBA, r image.Rectangle, on bool, accent color.RGBA) {
	h := r.Dy() * 7 / 10
	track := rect(r.Min.X, r.Min.Y+(r.Dy()-h)/2, r.Max.X, r.Min.Y+(r.Dy()+h)/2)
	if on {
		fillRounded(dst, track, h/2, accent)
		fillCircle(dst, track.Max.X-h/2, (track.Min.Y+track.Max.Y)/2, h*4/10, white)
	} else {
		fillRounded(dst, track, h/2, rgb(0xe0, 0xe2, 0xe6))
		strokeRounded(dst, track, h/2, max(2, int(3*rd.s)), rgb(0x74, 0x77, 0x7f))
		fillCircle(dst, track.Min.X+h/2, (track.Min.Y+track.Max.Y)/2, h*28/100, rgb(0x74, 0x77, 0x7f))
	}
}

// text draws one line in r, vertically centred, left-aligned or centred,
// cut with an ellipsis when too long. Each rune uses the Go font when it
// has the glyph, else the CJK font, else a box.
func (rd *renderer) text(dst *image.RGBA, s string, r image.Rectangle, size int, fg color.RGBA, bold, center bool) {
	if s == "" || size <= 0 {
		return
	}
	lw := 0
	if bold {
		lw = 1
	}
	latin := face(lw, size)
	cjk := face(2, size)
	if latin == nil {
		return
	}
	type glyph struct {
		f   font.Face
		r   rune
		adv fixed.Int26_6
	}
	var gs []glyph
	var width fixed.Int26_6
	boxAdv := fixed.I(size * 6 / 10)
	for _, ch := range s {
		if ch == '\n' {
			ch = ' '
		}
		if a, ok := latin.GlyphAdvance(ch); ok && (ch < 0x2e80 || cjk == nil) {
			gs = append(gs, glyph{latin, ch, a})
			width += a
			continue
		}
		if cjk != nil {
			if a, ok := cjk.GlyphAdvance(ch); ok {
				gs = append(gs, glyph{cjk, ch, a})
				width += a
				continue
			}
		}
		gs = append(gs, glyph{nil, ch, boxAdv})
		width += boxAdv
	}
	maxW := fixed.I(r.Dx())
	if width > maxW {
		ell, _ := latin.GlyphAdvance('…')
		for len(gs) > 0 && width+ell > maxW {
			width -= gs[len(gs)-1].adv
			gs = gs[:len(gs)-1]
		}
		gs = append(gs, glyph{latin, '…', ell})
		width += ell
	}
	m := latin.Metrics()
	base := r.Min.Y + (r.Dy()+(m.Ascent-m.Descent).Round())/2
	x := fixed.I(r.Min.X)
	if center {
		x = fixed.I(r.Min.X) + (maxW-width)/2
	}
	src := image.NewUniform(fg)
	for _, g := range gs {
		if g.f == nil {
			bx := x.Round()
			strokeRounded(dst, rect(bx+2, base-size*7/10, bx+g.adv.Round()-2, base), 0, 2, fg)
		} else {
			d := font.Drawer{Dst: dst, Src: src, Face: g.f, Dot: fixed.Point26_6{X: x, Y: fixed.I(base)}}
			d.DrawString(string(g.r))
			if bold && g.f == cjk {
				d.Dot = fixed.Point26_6{X: x + fixed.I(1), Y: fixed.I(base)}
				d.DrawString(string(g.r))
			}
		}
		x += g.adv
	}
}

// Primitive shapes. They draw into dst, whose bounds clip them.

func fillRect(dst *image.RGBA, r image.Rectangle, c color.RGBA) {
	op := draw.Over
	if c.A == 255 {
		op = draw.Src
	}
	draw.Draw(dst, r, &image.Uniform{c}, image.Point{}, op)
}

func fillRounded(dst *image.RGBA, r image.Rectangle, radius int, c color.RGBA) {
	if radius <= 0 {
		fillRect(dst, r, c)
		return
	}
	radius = min(radius, r.Dx()/2, r.Dy()/2)
	rf := float64(radius)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		inset := 0
		var dy float64
		switch {
		case y < r.Min.Y+radius:
			dy = rf - float64(y-r.Min.Y) - 0.5
		case y >= r.Max.Y-radius:
			dy = float64(y-(r.Max.Y-radius)) + 0.5
		}
		if dy > 0 {
			inset = radius - int(math.Sqrt(math.Max(0, rf*rf-dy*dy))+0.5)
		}
		fillRect(dst, rect(r.Min.X+inset, y, r.Max.X-inset, y+1), c)
	}
}

func strokeRounded(dst *image.RGBA, r image.Rectangle, radius, w int, c color.RGBA) {
	if radius <= 0 {
		fillRect(dst, rect(r.Min.X, r.Min.Y, r.Max.X, r.Min.Y+w), c)
		fillRect(dst, rect(r.Min.X, r.Max.Y-w, r.Max.X, r.Max.Y), c)
		fillRect(dst, rect(r.Min.X, r.Min.Y, r.Min.X+w, r.Max.Y), c)
		fillRect(dst, rect(r.Max.X-w, r.Min.Y, r.Max.X, r.Max.Y), c)
		return
	}
	radius = min(radius, r.Dx()/2, r.Dy()/2)
	b := r.Intersect(dst.Bounds())
	ro, ri := float64(radius), float64(radius-w)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			// distance outside the inner rectangle of corner centres
			cx := clampf(float64(x)+0.5, float64(r.Min.X+radius), float64(r.Max.X-radius))
			cy := clampf(float64(y)+0.5, float64(r.Min.Y+radius), float64(r.Max.Y-radius))
			d := math.Hypot(float64(x)+0.5-cx, float64(y)+0.5-cy)
			if d <= ro && d > ri {
				blend(dst, x, y, c)
			}
		}
	}
}

func clampf(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

func fillCircle(dst *image.RGBA, cx, cy, radius int, c color.RGBA) {
	fillRounded(dst, rect(cx-radius, cy-radius, cx+radius, cy+radius), radius, c)
}

func blend(dst *image.RGBA, x, y int, c color.RGBA) {
	if !(image.Point{x, y}.In(dst.Bounds())) {
		return
	}
	if c.A == 255 {
		dst.SetRGBA(x, y, c)
		return
	}
	// c is alpha-premultiplied (image/color's convention).
	o := dst.RGBAAt(x, y)
	a := uint32(c.A)
	mix := func(s, d uint8) uint8 { return uint8(min(255, uint32(s)+uint32(d)*(255-a)/255)) }
	dst.SetRGBA(x, y, color.RGBA{mix(c.R, o.R), mix(c.G, o.G), mix(c.B, o.B), 255})
}

// line draws a thick segment.
func line(dst *image.RGBA, x0, y0, x1, y1, w float64, c color.RGBA) {
	b := image.Rect(int(math.Min(x0, x1)-w), int(math.Min(y0, y1)-w), int(math.Max(x0, x1)+w)+1, int(math.Max(y0, y1)+w)+1).Intersect(dst.Bounds())
	dx, dy := x1-x0, y1-y0
	l2 := dx*dx + dy*dy
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			px, py := float64(x)+0.5, float64(y)+0.5
			t := 0.0
			if l2 > 0 {
				t = clampf(((px-x0)*dx+(py-y0)*dy)/l2, 0, 1)
			}
			if math.Hypot(px-(x0+t*dx), py-(y0+t*dy)) <= w/2 {
				blend(dst, x, y, c)
			}
		}
	}
}

// arc draws a ring segment from angle a0 to a1 (radians, clockwise from 3 o'clock).
func arc(dst *image.RGBA, cx, cy int, radius, w, a0, a1 float64, c color.RGBA) {
	b := image.Rect(cx-int(radius+w), cy-int(radius+w), cx+int(radius+w)+1, cy+int(radius+w)+1).Intersect(dst.Bounds())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			dx, dy := float64(x-cx)+0.5, float64(y-cy)+0.5
			d := math.Hypot(dx, dy)
			if math.Abs(d-radius) > w/2 {
				continue
			}
			a := math.Atan2(dy, dx)
			if a < 0 {
				a += 2 * math.Pi
			}
			if a >= a0 && a <= a1 {
				blend(dst, x, y, c)
			}
		}
	}
}

func gradient(dst *image.RGBA, r image.Rectangle, top, bottom color.RGBA) {
	h := r.Dy()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		t := float64(y-r.Min.Y) / float64(max(1, h-1))
		c := color.RGBA{uint8(float64(top.R)*(1-t) + float64(bottom.R)*t), uint8(float64(top.G)*(1-t) + float64(bottom.G)*t),
			uint8(float64(top.B)*(1-t) + float64(bottom.B)*t), 255}
		fillRect(dst, rect(r.Min.X, y, r.Max.X, y+1), c)
	}
}

var wallpapers sync.Map // image.Point (size) → *image.RGBA

// wallpaper is the launcher's gradient, drawn once per size.
func wallpaper(w, h int) *image.RGBA {
	k := image.Point{w, h}
	if v, ok := wallpapers.Load(k); ok {
		return v.(*image.RGBA)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	gradient(img, img.Bounds(), rgb(0x1f, 0x3a, 0x6e), rgb(0x7a, 0x4f, 0x9e))
	wallpapers.Store(k, img)
	return img
}

func lighten(c color.RGBA, t float64) color.RGBA {
	f := func(v uint8) uint8 { return uint8(float64(v) + (255-float64(v))*t) }
	return color.RGBA{f(c.R), f(c.G), f(c.B), 255}
}

var vectorGlyphs = map[string]bool{
	"back": true, "close": true, "close-circle": true, "plus": true, "search": true, "wifi": true, "bt": true, "check": true,
	"home": true, "recents": true, "send": true, "trash": true, "camera": true, "cart": true, "person": true, "chat": true,
	"play": true, "star": true, "shop": true, "grid": true, "bell": true, "battery": true, "storage": true, "sound": true,
	"sun": true, "palette": true, "lock": true, "pin": true, "key": true, "heart": true, "info": true, "phone": true,
	"help": true, "alarm": true, "clock": true, "timer": true, "stopwatch": true, "bed": true, "gear": true, "mail": true,
}

func isVectorGlyph(name string) bool { return vectorGlyphs[name] }

// drawGlyph draws a small line icon by name inside r.
func drawGlyph(dst *image.RGBA, name string, r image.Rectangle, c color.RGBA, s float64) {
	x0, y0 := float64(r.Min.X), float64(r.Min.Y)
	w, h := float64(r.Dx()), float64(r.Dy())
	P := func(fx, fy float64) (float64, float64) { return x0 + fx*w, y0 + fy*h }
	lw := math.Max(2, math.Min(w, h)/9)
	seg := func(ax, ay, bx, by float64) {
		x1, y1 := P(ax, ay)
		x2, y2 := P(bx, by)
		line(dst, x1, y1, x2, y2, lw, c)
	}
	cx, cy := (r.Min.X+r.Max.X)/2, (r.Min.Y+r.Max.Y)/2
	rad := float64(min(r.Dx(), r.Dy())) / 2
	switch name {
	case "back":
		seg(0.15, 0.5, 0.85, 0.5)
		seg(0.15, 0.5, 0.45, 0.2)
		seg(0.15, 0.5, 0.45, 0.8)
	case "close":
		seg(0.2, 0.2, 0.8, 0.8)
		seg(0.8, 0.2, 0.2, 0.8)
	case "close-circle":
		arc(dst, cx, cy, rad-lw/2, lw/1.5, 0, 2*math.Pi, c)
		seg(0.33, 0.33, 0.67, 0.67)
		seg(0.67, 0.33, 0.33, 0.67)
	case "plus":
		seg(0.5, 0.2, 0.5, 0.8)
		seg(0.2, 0.5, 0.8, 0.5)
	case "search":
		arc(dst, int(x0+w*0.42), int(y0+h*0.42), rad*0.55, lw, 0, 2*math.Pi, c)
		seg(0.62, 0.62, 0.88, 0.88)
	case "wifi":
		for _, f := range []float64{0.9, 0.62, 0.34} {
			arc(dst, cx, int(y0+h*0.9), rad*f*1.6, lw, 1.25*math.Pi, 1.75*math.Pi, c)
		}
		fillCircle(dst, cx, int(y0+h*0.85), int(lw), c)
	case "bt":
		seg(0.5, 0.1, 0.5, 0.9)
		seg(0.5, 0.1, 0.75, 0.3)
		seg(0.75, 0.3, 0.25, 0.7)
		seg(0.5, 0.9, 0.75, 0.7)
		seg(0.75, 0.7, 0.25, 0.3)
	case "check":
		seg(0.15, 0.55, 0.4, 0.8)
		seg(0.4, 0.8, 0.85, 0.25)
	case "home":
		seg(0.15, 0.5, 0.5, 0.15)
		seg(0.5, 0.15, 0.85, 0.5)
		seg(0.25, 0.45, 0.25, 0.85)
		seg(0.75, 0.45, 0.75, 0.85)
		seg(0.25, 0.85, 0.75, 0.85)
	case "recents":
		strokeRounded(dst, rect(int(x0+w*0.2), int(y0+h*0.2), int(x0+w*0.8), int(y0+h*0.8)), int(w*0.1), int(lw), c)
	case "send":
		seg(0.15, 0.15, 0.9, 0.5)
		seg(0.9, 0.5, 0.15, 0.85)
		seg(0.15, 0.15, 0.3, 0.5)
		seg(0.3, 0.5, 0.15, 0.85)
		seg(0.3, 0.5, 0.6, 0.5)
	case "trash":
		seg(0.15, 0.25, 0.85, 0.25)
		seg(0.25, 0.25, 0.3, 0.9)
		seg(0.75, 0.25, 0.7, 0.9)
		seg(0.3, 0.9, 0.7, 0.9)
		seg(0.4, 0.1, 0.6, 0.1)
	case "camera":
		strokeRounded(dst, rect(int(x0+w*0.1), int(y0+h*0.25), int(x0+w*0.9), int(y0+h*0.85)), int(w*0.1), int(lw), c)
		arc(dst, cx, int(y0+h*0.55), rad*0.3, lw, 0, 2*math.Pi, c)
	case "cart":
		seg(0.05, 0.15, 0.2, 0.15)
		seg(0.2, 0.15, 0.3, 0.65)
		seg(0.3, 0.65, 0.8, 0.65)
		seg(0.25, 0.3, 0.9, 0.3)
		seg(0.9, 0.3, 0.8, 0.65)
		fillCircle(dst, int(x0+w*0.35), int(y0+h*0.85), int(lw), c)
		fillCircle(dst, int(x0+w*0.75), int(y0+h*0.85), int(lw), c)
	case "person":
		arc(dst, cx, int(y0+h*0.32), rad*0.38, lw, 0, 2*math.Pi, c)
		arc(dst, cx, int(y0+h*1.0), rad*0.75, lw, math.Pi, 2*math.Pi, c)
	case "chat", "mail":
		strokeRounded(dst, rect(int(x0+w*0.1), int(y0+h*0.15), int(x0+w*0.9), int(y0+h*0.75)), int(w*0.12), int(lw), c)
		seg(0.3, 0.75, 0.2, 0.92)
	case "play":
		seg(0.3, 0.15, 0.3, 0.85)
		seg(0.3, 0.15, 0.85, 0.5)
		seg(0.3, 0.85, 0.85, 0.5)
	case "star", "heart":
		for i := 0; i < 5; i++ {
			a1 := -math.Pi/2 + float64(i)*4*math.Pi/5
			a2 := -math.Pi/2 + float64(i+1)*4*math.Pi/5
			seg(0.5+0.45*math.Cos(a1), 0.5+0.45*math.Sin(a1), 0.5+0.45*math.Cos(a2), 0.5+0.45*math.Sin(a2))
		}
	case "shop", "storage":
		strokeRounded(dst, rect(int(x0+w*0.15), int(y0+h*0.35), int(x0+w*0.85), int(y0+h*0.9)), 0, int(lw), c)
		seg(0.1, 0.35, 0.25, 0.12)
		seg(0.25, 0.12, 0.75, 0.12)
		seg(0.75, 0.12, 0.9, 0.35)
	case "grid":
		for _, fx := range []float64{0.2, 0.6} {
			for _, fy := range []float64{0.2, 0.6} {
				fillRect(dst, rect(int(x0+w*fx), int(y0+h*fy), int(x0+w*(fx+0.25)), int(y0+h*(fy+0.25))), c)
			}
		}
	case "gear":
		arc(dst, cx, cy, rad*0.5, lw*1.2, 0, 2*math.Pi, c)
		for i := 0; i < 8; i++ {
			a := float64(i) * math.Pi / 4
			seg(0.5+0.3*math.Cos(a), 0.5+0.3*math.Sin(a), 0.5+0.47*math.Cos(a), 0.5+0.47*math.Sin(a))
		}
	case "bell", "alarm", "clock", "timer", "stopwatch", "sun", "help", "info", "palette":
		arc(dst, cx, cy, rad*0.8, lw, 0, 2*math.Pi, c)
		seg(0.5, 0.5, 0.5, 0.25)
		seg(0.5, 0.5, 0.68, 0.6)
	case "battery":
		strokeRounded(dst, rect(int(x0+w*0.3), int(y0+h*0.15), int(x0+w*0.7), int(y0+h*0.9)), 2, int(lw), c)
		fillRect(dst, rect(int(x0+w*0.4), int(y0+h*0.05), int(x0+w*0.6), int(y0+h*0.15)), c)
	case "sound":
		seg(0.15, 0.4, 0.15, 0.6)
		seg(0.15, 0.4, 0.45, 0.15)
		seg(0.15, 0.6, 0.45, 0.85)
		seg(0.45, 0.15, 0.45, 0.85)
		arc(dst, int(x0+w*0.5), cy, rad*0.5, lw, -0.3*math.Pi+2*math.Pi, 2*math.Pi, c)
		arc(dst, int(x0+w*0.5), cy, rad*0.5, lw, 0, 0.3*math.Pi, c)
	case "lock", "key":
		strokeRounded(dst, rect(int(x0+w*0.2), int(y0+h*0.45), int(x0+w*0.8), int(y0+h*0.9)), 3, int(lw), c)
		arc(dst, cx, int(y0+h*0.45), rad*0.45, lw, math.Pi, 2*math.Pi, c)
	case "pin":
		arc(dst, cx, int(y0+h*0.38), rad*0.5, lw, 0, 2*math.Pi, c)
		seg(0.25, 0.5, 0.5, 0.95)
		seg(0.75, 0.5, 0.5, 0.95)
	case "phone":
		strokeRounded(dst, rect(int(x0+w*0.25), int(y0+h*0.05), int(x0+w*0.75), int(y0+h*0.95)), int(w*0.08), int(lw), c)
	case "bed":
		seg(0.1, 0.3, 0.1, 0.85)
		seg(0.1, 0.65, 0.9, 0.65)
		seg(0.9, 0.5, 0.9, 0.85)
		seg(0.3, 0.5, 0.9, 0.5)
	}
}
