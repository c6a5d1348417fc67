package adb

import "testing"

// FLAG_SECURE of the focused window, as Android prints it: by name on 7+,
// as hex before; another window's flags do not count.
func TestFocusedWindowSecure(t *testing.T) {
	const android12 = `WINDOW MANAGER WINDOWS (dumpsys window windows)
  Window #0 Window{1a2b3c4 u0 NavigationBar0}:
    mAttrs={(0,0)(fillx132) gr=BOTTOM CENTER_VERTICAL sim={adjust=pan} ty=NAVIGATION_BAR fmt=TRANSLUCENT
      fl=NOT_FOCUSABLE NOT_TOUCH_MODAL TOUCHABLE_WHEN_WAKING WATCH_OUTSIDE_TOUCH SPLIT_TOUCH HARDWARE_ACCELERATED FLAG_SLIPPERY
  Window #4 Window{9f8e7d6 u0 com.eg.android.AlipayGphone/com.alipay.mobile.cashier.ui.CashierActivity}:
    mDisplayId=0 rootTaskId=31 mSession=Session{5a1 1234:u0a10234}
    mAttrs={(0,0)(fillxfill) sim={adjust=resize forwardNavigation} ty=BASE_APPLICATION fmt=TRANSPARENT wanim=0x1030001
      fl=LAYOUT_IN_SCREEN LAYOUT_INSET_DECOR SPLIT_TOUCH HARDWARE_ACCELERATED SECURE DRAWS_SYSTEM_BAR_BACKGROUNDS
  mCurrentFocus=Window{9f8e7d6 u0 com.eg.android.AlipayGphone/com.alipay.mobile.cashier.ui.CashierActivity}
`
	const android6 = `  Window #3 Window{2c4e6a8 u0 com.bank.app/com.bank.app.PinActivity}:
    mAttrs=WM.LayoutParams{(0,0)(fillxfill) sim=#120 ty=1 fl=#81812100 wanim=0x1030465 needsMenuKey=2}
  mCurrentFocus=Window{2c4e6a8 u0 com.bank.app/com.bank.app.PinActivity}
`
	const otherWindowSecure = `  Window #2 Window{aaa111 u0 com.bank.app/com.bank.app.PinActivity}:
      fl=LAYOUT_IN_SCREEN SECURE
  Window #5 Window{bbb222 u0 com.android.settings/.Settings}:
      fl=LAYOUT_IN_SCREEN LAYOUT_INSET_DECOR SPLIT_TOUCH HARDWARE_ACCELERATED
  mCurrentFocus=Window{bbb222 u0 com.android.settings/.Settings}
`
	const hexNotSecure = `  Window #3 Window{2c4e6a8 u0 com.example/.Main}:
    mAttrs=WM.LayoutParams{(0,0)(fillxfill) ty=1 fl=#81810100}
  mCurrentFocus=Window{2c4e6a8 u0 com.example/.Main}
`
	for _, c := range []struct {
		name, out string
		want      bool
	}{
		{"Android 12 names", android12, true},
		{"Android 6 hex", android6, true},
		{"another window is secure", otherWindowSecure, false},
		{"hex without 0x2000", hexNotSecure, false},
		{"no focus line", "  Window #1 Window{abc u0 x.y/.Z}:\n      fl=SECURE\n", false},
		{"empty", "", false},
	} {
		if got := FocusedWindowSecure([]byte(c.out)); got != c.want {
			t.Errorf("%s: FocusedWindowSecure = %v, want %v", c.name, got, c.want)
		}
	}
}
