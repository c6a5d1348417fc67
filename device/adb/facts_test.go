package adb

import (
	"errors"
	"os"
	"testing"

	"phonepilot/device"
)

func TestParsePackageVersion(t *testing.T) {
	for _, tc := range []struct {
		file, pkg, name string
		code            int64
	}{
		{"testdata/dumpsys_package_taobao.txt", "com.taobao.taobao", "10.40.10", 1040100},
		// The updated WebView runs, not the factory copy listed after it.
		{"testdata/dumpsys_package_updated_system_app.txt", "com.google.android.webview", "130.0.6723.108", 672308033},
	} {
		out, err := os.ReadFile(tc.file)
		if err != nil {
			t.Fatal(err)
		}
		name, code, err := ParsePackageVersion(out, tc.pkg)
		if err != nil || name != tc.name || code != tc.code {
			t.Errorf("%s: got %q %d %v, want %q %d", tc.file, name, code, err, tc.name, tc.code)
		}
	}
}

func TestParsePackageVersionNotInstalled(t *testing.T) {
	taobao, _ := os.ReadFile("testdata/dumpsys_package_taobao.txt")
	for name, out := range map[string]string{
		"empty dump":           "Dexopt state:\n\nCompiler stats:\n",
		"another package":      string(taobao),
		"unable to find":       "Unable to find package: com.nope\n",
		"only a hidden system": "Hidden system packages:\n  Package [com.nope] (1):\n    versionCode=3 minSdk=1 targetSdk=1\n    versionName=1.0\n",
	} {
		if _, _, err := ParsePackageVersion([]byte(out), "com.nope"); !errors.Is(err, device.ErrAppNotFound) {
			t.Errorf("%s: err = %v, want ErrAppNotFound", name, err)
		}
	}
	// The package's record without a version is not "version empty".
	if _, _, err := ParsePackageVersion([]byte("Packages:\n  Package [com.x] (1):\n    userId=1\n"), "com.x"); !errors.Is(err, ErrNoVersion) {
		t.Errorf("record without version: %v", err)
	}
}

func TestLocaleFallsBackToTheFactoryLocale(t *testing.T) {
	p := newFakePhone(t)
	d, _ := openFake(t, p)
	p.mu.Lock()
	p.props = map[string]string{"persist.sys.locale": "zh-CN", "ro.product.locale": "en-US"}
	p.mu.Unlock()
	if l, err := d.Locale(t.Context()); err != nil || l != "zh-CN" {
		t.Errorf("user's locale: %q %v, want zh-CN", l, err)
	}
	p.mu.Lock()
	p.props = map[string]string{"ro.product.locale": "en-US"} // never changed: persist.sys.locale unset
	p.mu.Unlock()
	if l, err := d.Locale(t.Context()); err != nil || l != "en-US" {
		t.Errorf("factory locale: %q %v, want en-US", l, err)
	}
	p.mu.Lock()
	p.props = nil
	p.mu.Unlock()
	if _, err := d.Locale(t.Context()); !errors.Is(err, device.ErrUnsupported) {
		t.Errorf("no locale: %v, want ErrUnsupported", err)
	}
}
