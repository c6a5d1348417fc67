package scene

import (
	"strings"

	"phonepilot/apps"
)

// EditableClass reports whether a widget class takes typed text: EditText and
// its subclasses (AutoCompleteTextView, SearchView's SearchAutoComplete,
// Material TextInputEditText, ExtractEditText, …).
func EditableClass(class string) bool {
	name := SimpleClass(class)
	return strings.Contains(name, "EditText") ||
		strings.HasSuffix(name, "AutoCompleteTextView") ||
		strings.HasSuffix(name, "SearchAutoComplete")
}

// SimpleClass is the class name without its package ("android.widget.Button"
// → "Button"; an inner class keeps its outer name: "SearchView$SearchAutoComplete").
func SimpleClass(class string) string {
	if i := strings.LastIndexByte(class, '.'); i >= 0 {
		return class[i+1:]
	}
	return class
}

// IDName is a resource id without its package ("com.app:id/search" → "search").
func IDName(id string) string {
	if i := strings.Index(id, ":id/"); i >= 0 {
		return id[i+4:]
	}
	return id
}

// idPackage is the package part of a resource id ("com.app:id/search" →
// "com.app"; "" when the id names none).
func idPackage(id string) string {
	if i := strings.Index(id, ":id/"); i >= 0 {
		return id[:i]
	}
	return ""
}

// ShowsToast reports a toast on the screen: a short message in a window of
// its own with nothing to press (an alert's message has buttons). On
// Android it is the system's toast, android:id/message; an iPhone has no
// toast of its own, and an app's ("Added to cart", a HUD) is static text
// in a window of the app's above its main one (WebDriverAgent lists an
// app's windows as the Application's children; the first is the app's
// own).
func (s *Scene) ShowsToast() bool { return len(s.ToastWindows()) > 0 }

// ToastWindows are the windows in which ShowsToast finds a toast (nil for
// none): comparing two Scenes without them leaves out a toast that came
// or went by itself.
func (s *Scene) ToastWindows() map[int]bool {
	if s == nil {
		return nil
	}
	var out map[int]bool
	for _, el := range s.Elements {
		if out[el.Window] || !s.Visible(el) || !(el.ResourceID == "android:id/message" || s.iosHUDText(el)) {
			continue
		}
		pressable := false
		for _, o := range s.Elements {
			if o.Window == el.Window && (o.Clickable || o.LongClickable || o.Editable) {
				pressable = true
				break
			}
		}
		if !pressable {
			if out == nil {
				out = map[int]bool{}
			}
			out[el.Window] = true
		}
	}
	return out
}

// iosHUDText reports static text in an iPhone app's window above its main
// one.
func (s *Scene) iosHUDText(el Element) bool {
	if el.Class != "XCUIElementTypeStaticText" || el.Window == 0 || el.Package != s.Package {
		return false
	}
	for _, w := range s.Elements {
		if w.Parent < 0 && w.Window == el.Window {
			return w.Class == "XCUIElementTypeWindow"
		}
	}
	return false
}

// Visible reports whether e can be seen and hit: a non-empty rectangle that
// overlaps the screen (when the Scene knows its size).
func (s *Scene) Visible(e Element) bool {
	if e.Bounds.Empty() {
		return false
	}
	if s.Width > 0 && s.Height > 0 {
		b := e.Bounds
		if b.Right <= 0 || b.Bottom <= 0 || b.Left >= s.Width || b.Top >= s.Height {
			return false
		}
	}
	return true
}

// OnHomeScreen reports a screen whose foreground is the launcher: where
// the home key leads.
func (s *Scene) OnHomeScreen() bool { return s != nil && apps.Launcher(s.Package) }

// ForegroundPackage picks the app a user is in from the top-level windows:
// the largest window of an app, ignoring system decorations (status bar,
// navigation bar, gesture areas, keyboards) and launcher overlays when an
// app window exists; failing those, the largest window of any kind.
func ForegroundPackage(s *Scene) string {
	best, bestRank, bestArea := "", -1, -1
	for _, e := range s.Elements {
		if e.Parent >= 0 {
			continue
		}
		rank := 2
		switch {
		case apps.Decoration(e.Package):
			rank = 0
		case apps.Launcher(e.Package):
			rank = 1
		}
		area := 0
		if !e.Bounds.Empty() {
			area = e.Bounds.Width() * e.Bounds.Height()
		}
		if e.Package == "" {
			area = -1
		}
		if rank > bestRank || rank == bestRank && area > bestArea {
			best, bestRank, bestArea = e.Package, rank, area
		}
	}
	return best
}

// noiseIDs are resource-id names (the part after ":id/") of views whose
// content changes without the screen changing for a user: clocks, battery,
// signal and notification icons, and the bars that hold them.
var noiseIDs = map[string]bool{
	"status_bar": true, "status_bar_container": true, "status_bar_contents": true,
	"status_bar_launch_animation_container": true, "keyguard_header": true,
	"keyguard_status_bar": true, "status_icon_area": true, "system_icons": true,
	"system_icon_area": true, "statusIcons": true, "notification_icon_area": true,
	"notificationIcons": true, "clock": true, "left_clock_container": true,
	"battery": true, "battery_percentage_view": true, "keyguard_clock_container": true,
	"keyguard_status_view": true, "keyguard_indication_area": true,
	"keyguard_indication_text": true, "clock_view": true,
}

// noise marks elements whose changes do not change "the screen": everything
// inside a status-bar-like view (by id), and small system-decoration
// windows (status bar, navigation bar, floating balls) when an app window
// is in front.
func (s *Scene) noise() []bool {
	n := make([]bool, len(s.Elements))
	screenArea := s.Width * s.Height
	for i, e := range s.Elements {
		if e.Parent >= 0 && e.Parent < i {
			if n[e.Parent] {
				n[i] = true
				continue
			}
		} else if e.Package != s.Package && apps.Decoration(e.Package) && s.decoration(e.Bounds, screenArea) {
			n[i] = true
			continue
		}
		if e.ResourceID != "" && noiseIDs[IDName(e.ResourceID)] &&
			(apps.SystemUI(idPackage(e.ResourceID)) || apps.Decoration(e.Package)) {
			n[i] = true
		}
	}
	return n
}

// decoration reports a system window shaped like a bar or a tiny overlay:
// a strip along the top or bottom edge (status bar, navigation bar), a
// gesture strip, a floating ball. A system dialog in the middle of the
// screen is not decoration: the user has to deal with it.
func (s *Scene) decoration(b Bounds, screenArea int) bool {
	if b.Empty() || screenArea <= 0 {
		return true
	}
	area := b.Width() * b.Height()
	if area*20 < screenArea {
		return true
	}
	bar := b.Height()*8 < s.Height
	return bar && (b.Top <= 0 || b.Bottom >= s.Height)
}
