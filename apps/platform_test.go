package apps

import "testing"

// TestPlatformFacts: each role of the system's packages, on the packages
// the places that used to list them named (and vendors' forms of them).
func TestPlatformFacts(t *testing.T) {
	type facts struct{ permission, dialog, systemUI, decoration, launcher, notAnApp bool }
	cases := map[string]facts{
		"com.android.permissioncontroller":           {permission: true, dialog: true},
		"com.google.android.permissioncontroller":    {permission: true, dialog: true},
		"com.android.packageinstaller":               {permission: true, dialog: true},
		"com.google.android.packageinstaller":        {permission: true, dialog: true},
		"com.lbe.security.miui":                      {permission: true, dialog: true},
		"com.google.android.gms":                     {dialog: true},
		"android":                                    {dialog: true, decoration: true, notAnApp: true},
		"com.android.systemui":                       {systemUI: true, decoration: true, notAnApp: true},
		"com.oplus.systemuiplugin":                   {systemUI: true, decoration: true, notAnApp: true},
		"com.google.android.inputmethod.latin":       {decoration: true, notAnApp: true},
		"com.baidu.input_huawei.ime":                 {decoration: true, notAnApp: true},
		"gesture":                                    {decoration: true, notAnApp: true},
		"com.samsung.android.app.cocktailbarservice": {decoration: true, notAnApp: true},
		"":                                      {decoration: true, notAnApp: true},
		"com.google.android.apps.nexuslauncher": {launcher: true, notAnApp: true},
		"com.sec.android.app.launcher":          {launcher: true, notAnApp: true},
		"com.apple.springboard":                 {launcher: true, notAnApp: true}, // an iPhone's home screen
		"com.apple.Preferences":                 {},
		"com.android.settings":                  {},
		"com.taobao.taobao":                     {},
		"com.google.android.gm":                 {},
	}
	for pkg, want := range cases {
		got := facts{PermissionPrompt(pkg), SystemDialog(pkg), SystemUI(pkg), Decoration(pkg), Launcher(pkg), NotAnApp(pkg)}
		if got != want {
			t.Errorf("%q: got %+v, want %+v", pkg, got, want)
		}
	}
}
