package apps

import "strings"

// iosBundles lists the iOS bundle identifiers of the apps the table names,
// keyed by the app's first name. An iPhone reports the app in front by its
// bundle id (WebDriverAgent's /wda/activeAppInfo) and launches by it.
// Sources: Apple's own apps' identifiers as MDM profiles and WDA list them
// (com.apple.Preferences, com.apple.MobileSMS, …); third-party ids from
// each app's App Store listing.
var iosBundles = map[string][]string{
	"Settings":    {"com.apple.Preferences"},
	"Messages":    {"com.apple.MobileSMS"},
	"Contacts":    {"com.apple.MobileAddressBook"},
	"Clock":       {"com.apple.mobiletimer"},
	"Calendar":    {"com.apple.mobilecal"},
	"Camera":      {"com.apple.camera"},
	"Photos":      {"com.apple.mobileslideshow"},
	"Phone":       {"com.apple.mobilephone"},
	"Calculator":  {"com.apple.calculator"},
	"Files":       {"com.apple.DocumentsApp"},
	"Google Maps": {"com.google.Maps"},
	"Chrome":      {"com.google.chrome.ios"},
	"Gmail":       {"com.google.Gmail"},
	"YouTube":     {"com.google.ios.youtube"},
	"Taobao":      {"com.taobao.taobao4iphone"},
	"Alipay":      {"com.alipay.iphoneclient"},
	"WeChat":      {"com.tencent.xin"},
	"JD":          {"com.360buy.jdmobile"},
	"Pinduoduo":   {"com.xunmeng.pinduoduo"},
	"Douyin":      {"com.ss.iphone.ugc.Aweme"},
	"Xiaohongshu": {"com.xingin.discover"},
	"Bilibili":    {"tv.danmaku.bilianime"},
	"WhatsApp":    {"net.whatsapp.WhatsApp"},
	"Telegram":    {"ph.telegra.Telegraph"},
	"Instagram":   {"com.burbn.instagram"},
	"Facebook":    {"com.facebook.Facebook"},
	"Spotify":     {"com.spotify.client"},
}

// Bundles returns the app's iOS bundle identifiers (none when the table
// does not know them).
func (a App) Bundles() []string { return iosBundles[a.Names[0]] }

// Bundle returns the main iOS bundle id of the app called name, or "" when
// the table does not know it.
func Bundle(name string) string {
	if a, ok := Lookup(name); ok && len(a.Bundles()) > 0 {
		return a.Bundles()[0]
	}
	if a, ok := byPackage[strings.ToLower(strings.TrimSpace(name))]; ok && len(a.Bundles()) > 0 {
		return a.Bundles()[0]
	}
	return ""
}

// identities is every identifier an app is known by on a phone: its Android
// packages and its iOS bundle ids.
func identities(a App) []string {
	return append(append([]string(nil), a.Packages...), a.Bundles()...)
}
