package rule

import "strings"

// knownApps maps names people use for common apps to their packages, so a
// launch step can expect the right package in front. Apps not listed still
// launch (the device resolves the name); the step then expects the
// foreground app to change.
var knownApps = map[string]string{
	"taobao": "com.taobao.taobao", "淘宝": "com.taobao.taobao", "手机淘宝": "com.taobao.taobao",
	"settings": "com.android.settings", "设置": "com.android.settings",
	"jd": "com.jingdong.app.mall", "京东": "com.jingdong.app.mall",
	"wechat": "com.tencent.mm", "微信": "com.tencent.mm",
	"alipay": "com.eg.android.AlipayGphone", "支付宝": "com.eg.android.AlipayGphone",
	"chrome": "com.android.chrome",
}

// appKey folds an app name for lookup.
func appKey(name string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimSpace(name), " ", ""))
}

// knownApp reports whether name is an app the table knows.
func knownApp(name string) bool { _, ok := knownApps[appKey(unquote(name))]; return ok }

// appPackage returns the package the table knows for name, or "".
func appPackage(name string) string { return knownApps[appKey(name)] }

// inApp reports whether pkg is the app named name: by the table, by the
// package itself, or by a package segment spelling the name.
func inApp(pkg, name string) bool {
	if pkg == "" || name == "" {
		return false
	}
	if p := appPackage(name); p != "" {
		return p == pkg
	}
	if strings.EqualFold(pkg, name) {
		return true
	}
	key := appKey(name)
	for _, part := range strings.Split(strings.ToLower(pkg), ".") {
		if part == key {
			return true
		}
	}
	return false
}
