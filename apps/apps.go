// Package apps is the one table of app identity: the names people call an
// app (English and Chinese) and its Android package(s) (and iOS bundle
// ids). The rule Planner reads goals with it, the Executor's "app in front"
// check and the launch_app tool judge the foreground with it, and the
// drivers resolve launch names with it. Beside it, platform.go holds the
// platform facts (which packages are permission prompts, system dialogs,
// the system UI, decorations, the launcher). It imports only
// internal/editdist (the one edit distance, for Closest).
package apps

import (
	"regexp"
	"strings"
	"unicode"
)

// App is a well-known app: the names people call it and its package(s),
// most common first (some apps ship under regional packages).
type App struct {
	Names    []string
	Packages []string
}

// Known is the built-in table. Names are matched case-insensitively,
// ignoring spaces and punctuation ("Google  Maps" = "google-maps").
var Known = []App{
	// China
	{[]string{"Taobao", "淘宝", "手机淘宝"}, []string{"com.taobao.taobao"}},
	{[]string{"Tmall", "天猫"}, []string{"com.tmall.wireless"}},
	{[]string{"JD", "JD.com", "Jingdong", "京东"}, []string{"com.jingdong.app.mall"}},
	{[]string{"Pinduoduo", "PDD", "拼多多"}, []string{"com.xunmeng.pinduoduo"}},
	{[]string{"WeChat", "Weixin", "微信"}, []string{"com.tencent.mm"}},
	{[]string{"QQ"}, []string{"com.tencent.mobileqq"}},
	{[]string{"WeCom", "WeChat Work", "企业微信"}, []string{"com.tencent.wework"}},
	{[]string{"Alipay", "支付宝"}, []string{"com.eg.android.AlipayGphone"}},
	{[]string{"Meituan", "美团"}, []string{"com.sankuai.meituan"}},
	{[]string{"Meituan Waimai", "美团外卖"}, []string{"com.sankuai.meituan.takeoutnew"}},
	{[]string{"Ele.me", "饿了么"}, []string{"me.ele"}},
	{[]string{"Dianping", "大众点评"}, []string{"com.dianping.v1"}},
	{[]string{"Douyin", "抖音"}, []string{"com.ss.android.ugc.aweme"}},
	{[]string{"Kuaishou", "快手"}, []string{"com.smile.gifmaker"}},
	{[]string{"Xiaohongshu", "RedNote", "Little Red Book", "小红书"}, []string{"com.xingin.xhs"}},
	{[]string{"Bilibili", "哔哩哔哩", "B站"}, []string{"tv.danmaku.bili"}},
	{[]string{"Weibo", "微博", "新浪微博"}, []string{"com.sina.weibo"}},
	{[]string{"Zhihu", "知乎"}, []string{"com.zhihu.android"}},
	{[]string{"Baidu", "百度"}, []string{"com.baidu.searchbox"}},
	{[]string{"Baidu Maps", "百度地图"}, []string{"com.baidu.BaiduMap"}},
	{[]string{"Amap", "Gaode Maps", "高德地图"}, []string{"com.autonavi.minimap"}},
	{[]string{"Didi", "滴滴出行", "滴滴"}, []string{"com.sdu.didi.psnger"}},
	{[]string{"Ctrip", "Trip.com", "携程", "携程旅行"}, []string{"ctrip.android.view", "ctrip.english"}},
	{[]string{"12306", "铁路12306"}, []string{"com.MobileTicket"}},
	{[]string{"NetEase Cloud Music", "网易云音乐"}, []string{"com.netease.cloudmusic"}},
	{[]string{"QQ Music", "QQ音乐"}, []string{"com.tencent.qqmusic"}},
	{[]string{"Tencent Video", "腾讯视频"}, []string{"com.tencent.qqlive"}},
	{[]string{"iQIYI", "爱奇艺"}, []string{"com.qiyi.video"}},
	{[]string{"Youku", "优酷"}, []string{"com.youku.phone"}},
	{[]string{"Xianyu", "闲鱼"}, []string{"com.taobao.idlefish"}},
	{[]string{"Futu", "Futubull", "moomoo", "富途牛牛"}, []string{"cn.futu.trader", "com.moomoo.trade"}},
	{[]string{"Toutiao", "今日头条"}, []string{"com.ss.android.article.news"}},
	{[]string{"DingTalk", "钉钉"}, []string{"com.alibaba.android.rimet"}},
	{[]string{"Feishu", "Lark", "飞书"}, []string{"com.ss.android.lark"}},
	// System and Google
	{[]string{"Settings", "设置"}, []string{"com.android.settings"}},
	{[]string{"Chrome", "Google Chrome", "谷歌浏览器"}, []string{"com.android.chrome"}},
	{[]string{"Browser", "浏览器"}, []string{"com.android.browser", "com.android.chrome"}},
	{[]string{"YouTube", "油管"}, []string{"com.google.android.youtube"}},
	{[]string{"Gmail", "谷歌邮箱"}, []string{"com.google.android.gm"}},
	{[]string{"Google Maps", "Maps", "谷歌地图", "地图"}, []string{"com.google.android.apps.maps"}},
	{[]string{"Google", "Google Search", "谷歌"}, []string{"com.google.android.googlequicksearchbox"}},
	{[]string{"Play Store", "Google Play", "应用商店"}, []string{"com.android.vending"}},
	{[]string{"Photos", "Google Photos", "相册", "图库", "Gallery"}, []string{"com.google.android.apps.photos", "com.android.gallery3d", "com.miui.gallery"}},
	{[]string{"Camera", "相机"}, []string{"com.android.camera2", "com.android.camera", "com.google.android.GoogleCamera"}},
	{[]string{"Phone", "Dialer", "电话", "拨号"}, []string{"com.google.android.dialer", "com.android.dialer"}},
	{[]string{"Contacts", "联系人", "通讯录"}, []string{"com.google.android.contacts", "com.android.contacts"}},
	{[]string{"Messages", "SMS", "信息", "短信"}, []string{"com.google.android.apps.messaging", "com.android.mms"}},
	{[]string{"Calendar", "日历"}, []string{"com.google.android.calendar", "com.android.calendar"}},
	{[]string{"Clock", "Alarm", "时钟", "闹钟"}, []string{"com.google.android.deskclock", "com.android.deskclock"}},
	{[]string{"Calculator", "计算器"}, []string{"com.google.android.calculator", "com.android.calculator2"}},
	{[]string{"Files", "File Manager", "文件", "文件管理"}, []string{"com.google.android.apps.nbu.files", "com.android.documentsui"}},
	{[]string{"Google Drive", "Drive", "谷歌云端硬盘"}, []string{"com.google.android.apps.docs"}},
	{[]string{"Google Translate", "Translate", "谷歌翻译", "翻译"}, []string{"com.google.android.apps.translate"}},
	{[]string{"Keep", "Google Keep", "Keep Notes"}, []string{"com.google.android.keep"}},
	{[]string{"Google Tasks", "Tasks"}, []string{"com.google.android.apps.tasks"}},
	// International
	{[]string{"WhatsApp"}, []string{"com.whatsapp"}},
	{[]string{"Telegram", "电报"}, []string{"org.telegram.messenger"}},
	{[]string{"Facebook", "脸书"}, []string{"com.facebook.katana"}},
	{[]string{"Messenger"}, []string{"com.facebook.orca"}},
	{[]string{"Instagram"}, []string{"com.instagram.android"}},
	{[]string{"X", "Twitter", "推特"}, []string{"com.twitter.android"}},
	{[]string{"TikTok"}, []string{"com.zhiliaoapp.musically", "com.ss.android.ugc.trill"}},
	{[]string{"Snapchat"}, []string{"com.snapchat.android"}},
	{[]string{"LinkedIn", "领英"}, []string{"com.linkedin.android"}},
	{[]string{"Reddit"}, []string{"com.reddit.frontpage"}},
	{[]string{"Discord"}, []string{"com.discord"}},
	{[]string{"Slack"}, []string{"com.Slack"}},
	{[]string{"Zoom"}, []string{"us.zoom.videomeetings"}},
	{[]string{"Spotify"}, []string{"com.spotify.music"}},
	{[]string{"Netflix", "网飞"}, []string{"com.netflix.mediaclient"}},
	{[]string{"Amazon", "Amazon Shopping", "亚马逊"}, []string{"com.amazon.mShop.android.shopping"}},
	{[]string{"Uber"}, []string{"com.ubercab"}},
	{[]string{"Airbnb"}, []string{"com.airbnb.android"}},
	{[]string{"PayPal"}, []string{"com.paypal.android.p2pmobile"}},
	{[]string{"Outlook", "Microsoft Outlook"}, []string{"com.microsoft.office.outlook"}},
	{[]string{"Microsoft Teams", "Teams"}, []string{"com.microsoft.teams"}},
	{[]string{"Firefox"}, []string{"org.mozilla.firefox"}},
	{[]string{"Obsidian"}, []string{"md.obsidian"}},
	{[]string{"Proton VPN"}, []string{"ch.protonvpn.android"}},
	{[]string{"inDrive", "inDriver"}, []string{"sinet.startup.inDriver"}},
	{[]string{"ChatGPT"}, []string{"com.openai.chatgpt"}},
	{[]string{"Shopee"}, []string{"com.shopee.id", "com.shopee.ph", "com.shopee.my"}},
}

// Key folds a name for lookup: lower case, letters and digits only, so
// "Google  Maps", "google-maps" and "GoogleMaps" are the same name.
func Key(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// index finds an app by any of its names (folded by Key), byPackage the
// app a package belongs to (lower case).
var (
	index     = indexBy(func(a App) []string { return a.Names }, Key)
	byPackage = indexBy(identities, strings.ToLower)
)

// indexBy maps every key of every app, folded, to the app; the first app
// that lists a key keeps it.
func indexBy(keys func(App) []string, fold func(string) string) map[string]*App {
	m := make(map[string]*App)
	for i := range Known {
		for _, k := range keys(Known[i]) {
			if _, dup := m[fold(k)]; !dup {
				m[fold(k)] = &Known[i]
			}
		}
	}
	return m
}

// Lookup finds a well-known app by any of its names.
func Lookup(name string) (App, bool) {
	a, ok := index[Key(name)]
	if !ok || Key(name) == "" {
		return App{}, false
	}
	return *a, true
}

// Package returns the main package of the app called name, or "" when the
// table does not know the name.
func Package(name string) string {
	if a, ok := Lookup(name); ok {
		return a.Packages[0]
	}
	return ""
}

var packageRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$`)

// LooksLikePackage reports a Java package name ("com.example.app").
func LooksLikePackage(s string) bool { return packageRE.MatchString(s) }

// InFront reports whether pkg, the foreground package, is the app a step
// named: by package (any package of the same app in the table counts: a
// phone may ship Contacts as com.android.contacts or
// com.google.android.contacts), by a name of the table (any of its
// packages), or, for a name the table does not know, by a package segment
// spelling the name ("Obsidian" → md.obsidian).
func InFront(pkg, app string) bool {
	app = strings.TrimSpace(app)
	if pkg == "" || app == "" {
		return false
	}
	if strings.EqualFold(pkg, app) {
		return true
	}
	if a, ok := byPackage[strings.ToLower(app)]; ok {
		return a == byPackage[strings.ToLower(pkg)]
	}
	if a, ok := Lookup(app); ok {
		for _, p := range identities(a) {
			if strings.EqualFold(p, pkg) {
				return true
			}
		}
		return false
	}
	if strings.Contains(app, ".") {
		return false
	}
	key := Key(app)
	for _, part := range strings.Split(strings.ToLower(pkg), ".") {
		if part == key {
			return true
		}
	}
	return false
}

// withSearch are the apps with a search of their own that people use (a
// search bar or a magnifier that opens a search page): where a goal's
// "search for …" can happen, and what a goal that names no app is told.
var withSearch = []string{"Taobao", "Tmall", "JD", "Pinduoduo", "WeChat", "Meituan", "Dianping", "Douyin", "Xiaohongshu",
	"Bilibili", "Weibo", "Zhihu", "Baidu", "Settings", "Contacts", "Chrome", "YouTube", "Gmail", "Google Maps", "Play Store",
	"Amazon", "Spotify", "Netflix", "Reddit"}

// CanSearch reports whether the app with this package has a search of its
// own (withSearch).
func CanSearch(pkg string) bool {
	for _, n := range withSearch {
		a, ok := Lookup(n)
		if !ok {
			continue
		}
		for _, p := range a.Packages {
			if strings.EqualFold(p, pkg) {
				return true
			}
		}
	}
	return false
}
