package safety

// The gate's vocabulary, as data. Every list is matched case-insensitively
// after width folding (full-width Latin → ASCII, half-width katakana →
// full-width). A word written in Latin letters matches on word boundaries
// ("pay" is not in "Display", "send" is not in "Sending"); a word written in
// Han, kana, Hangul or Thai matches as a substring, since those scripts do
// not put spaces between words. Multi-word Latin phrases match as a run of
// whole words ("buy now" in "Buy now · ¥4,155").
//
// To add a language, add its words to each category below and its
// exceptions, and a row to the table test in gate_test.go.

// actionWords are the words that name an irreversible action, by category.
// They are matched on an element's own label and id, on the labels it
// carries (its plain-text children), and on the label of the row it
// belongs to.
var actionWords = map[Category][]string{
	Payment: {
		// English
		"pay", "pay now", "buy", "buy now", "buy it now", "purchase", "place order", "submit order",
		"confirm order", "order now", "checkout", "check out", "proceed to checkout", "transfer",
		"send money", "withdraw", "top up", "top-up", "recharge", "add money", "add funds",
		"confirm payment", "donate",
		// Chinese (simplified)
		"支付", "付款", "立即购买", "购买", "立即支付", "立即付款", "确认支付", "确认付款", "提交订单",
		"结算", "去结算", "转账", "提现", "充值", "下单", "买单", "立即抢购", "马上抢",
		// Chinese (traditional)
		"購買", "立即購買", "提交訂單", "結帳", "結算", "轉帳", "轉賬", "提現", "儲值", "確認付款",
		"確認支付", "下單",
		// Spanish
		"pagar", "pagar ahora", "comprar", "comprar ahora", "realizar pedido", "hacer pedido",
		"finalizar compra", "confirmar pago", "transferir", "retirar dinero", "recargar",
		// Portuguese
		"comprar agora", "finalizar pedido", "fazer pedido", "confirmar pagamento", "sacar dinheiro",
		"recarregar",
		// German
		"bezahlen", "jetzt bezahlen", "kaufen", "jetzt kaufen", "zahlungspflichtig bestellen",
		"bestellen", "zur kasse", "überweisen", "abheben", "aufladen",
		// French
		"payer", "acheter", "acheter maintenant", "commander", "passer la commande",
		"valider la commande", "virement", "recharger",
		// Japanese
		"支払う", "支払い", "お支払い", "購入", "今すぐ購入", "注文を確定", "注文する", "レジに進む",
		"送金", "出金", "チャージ",
		// Korean
		"결제", "구매", "바로 구매", "주문하기", "송금", "이체", "출금", "충전",
		// Thai
		"ชำระเงิน", "จ่ายเงิน", "ซื้อ", "สั่งซื้อ", "โอนเงิน", "ถอนเงิน", "เติมเงิน",
	},
	Delete: {
		"delete", "remove", "clear data", "clear storage", "clear all", "clear history", "erase",
		"factory reset", "erase all data", "reset phone", "uninstall", "delete account",
		"删除", "移除", "清除数据", "清除", "清空", "恢复出厂设置", "卸载",
		"刪除", "清除資料", "恢復原廠設定", "解除安裝",
		"eliminar", "borrar", "quitar", "borrar datos", "desinstalar", "restablecer",
		"excluir", "apagar", "remover", "limpar dados", "redefinir",
		"löschen", "entfernen", "daten löschen", "deinstallieren", "zurücksetzen",
		"supprimer", "effacer", "retirer", "désinstaller", "réinitialiser",
		"削除", "消去", "初期化", "アンインストール",
		"삭제", "제거", "초기화",
		"ลบ", "ล้างข้อมูล", "รีเซ็ต", "ถอนการติดตั้ง",
	},
	// Inviting sends an invitation to someone: a message in their name.
	Send: {
		"send", "send message", "=post", "=post it", "publish", "share", "reply", "reply all", "forward",
		"forward to", "upload", "tweet", "invite", "send invite", "send invitation",
		"发送", "发布", "发表", "分享", "回复", "转发", "上传", "邀请",
		"傳送", "發送", "發佈", "發布", "發表", "回覆", "轉寄", "轉發", "上傳", "邀請",
		"enviar", "publicar", "compartir", "responder", "reenviar", "subir", "invitar",
		"compartilhar", "partilhar", "encaminhar", "reencaminhar", "carregar", "convidar",
		"senden", "absenden", "posten", "veröffentlichen", "teilen", "antworten", "weiterleiten",
		"hochladen", "einladen",
		"envoyer", "publier", "partager", "répondre", "transférer", "téléverser", "inviter",
		"送信", "投稿", "公開", "共有", "返信", "転送", "アップロード", "招待",
		"보내기", "전송", "게시", "공유", "답장", "전달", "업로드", "초대",
		"ส่ง", "โพสต์", "เผยแพร่", "แชร์", "ตอบกลับ", "ส่งต่อ", "อัปโหลด", "เชิญ",
	},
	Account: {
		"log out", "logout", "sign out", "log off", "change password", "reset password",
		"remove account", "turn off screen lock", "disable screen lock", "remove screen lock",
		"退出登录", "退出账号", "注销", "修改密码", "更改密码", "重置密码", "关闭屏幕锁定",
		"登出", "登出帳號", "變更密碼", "修改密碼", "重設密碼",
		"cerrar sesión", "cambiar contraseña", "restablecer contraseña",
		"sair da conta", "terminar sessão", "encerrar sessão", "alterar senha", "mudar senha",
		"abmelden", "passwort ändern", "passwort zurücksetzen",
		"se déconnecter", "déconnexion", "changer le mot de passe", "modifier le mot de passe",
		"ログアウト", "サインアウト", "パスワードを変更", "パスワードの変更",
		"로그아웃", "비밀번호 변경",
		"ออกจากระบบ", "เปลี่ยนรหัสผ่าน",
	},
	Permission: {
		// Grant words outside the permission controller: a dialog that
		// says only "Allow" grants something.
		"allow", "allow all", "always allow", "grant", "允许", "始终允许", "允許", "permitir",
		"zulassen", "erlauben", "autoriser", "許可", "허용", "อนุญาต",
	},
	Install: {
		"install", "install update", "安装", "立即安装", "安裝", "instalar", "installieren",
		"installer", "インストール", "설치", "ติดตั้ง",
	},
	Call: {
		"call", "call now", "dial", "voice call", "video call", "emergency call", "make a call",
		"call back",
		"拨打", "呼叫", "打电话", "语音通话", "视频通话", "拨号", "撥打", "打電話", "語音通話", "視訊通話",
		"llamar", "llamada", "ligar para", "fazer chamada", "chamada de voz", "chamada de vídeo",
		"anrufen", "appeler", "電話をかける", "発信", "音声通話", "ビデオ通話",
		"전화 걸기", "전화하기", "음성 통화", "영상 통화", "โทรออก", "โทรหา",
	},
}

// japaneseOnly are words of the lists above, written in Han characters
// alone, that name the action in Japanese only: in Chinese 共有 is "in
// total" (a Damai page's "共有 3 场"), 公開 "public", 招待 "to host guests",
// 送信 and 返信 are not used. They count only on a Japanese screen (one
// that shows kana somewhere); a Chinese screen has none.
var japaneseOnly = []string{"共有", "公開", "招待", "送信", "返信"}

// exceptions are phrases that contain an action word without naming the
// action: negations ("Don't allow"), states ("已安装" installed, "人付款"
// people paid), places that only show something ("Payment methods", "Call
// history"), brand names ("支付宝", "Google Pay"). A matched exception
// blanks its span before the action words are looked for, for every
// category.
var exceptions = []string{
	// negations and refusals
	"don't allow", "do not allow", "deny", "not now", "no permitir", "não permitir", "nicht zulassen",
	"ne pas autoriser", "不允许", "不允許", "禁止", "許可しない", "허용 안함", "허용 안 함", "ไม่อนุญาต",
	// states and counts
	"已安装", "已安裝", "未安装", "人付款", "已付款", "待付款", "已购买", "已購買", "支付成功", "付款成功",
	"已发送", "已傳送", "インストール済み", "快捷回复", "已邀请", "已邀請",
	// an invitation code is typed, not sent
	"invite code", "invitation code", "邀请码", "邀請碼", "招待コード",
	// places that show, settings rows
	"payment methods", "payment method", "付款方式", "支付方式", "付款方法", "call history", "call log",
	"call logs", "call settings", "calling accounts", "通话记录", "通話記錄", "通話履歴",
	"sending options", "send feedback", "share location", "file transfer", "transfer files",
	"data transfer", "usb file transfer", "transferencia de archivos", "transferência de arquivos",
	"get started", "get help", "get directions", "get the app", "forgot password", "忘记密码",
	"post office", "sharing", "clear search", "deleted", "recently deleted",
	// brand and app names
	"支付宝", "支付寶", "google pay", "apple pay", "samsung pay", "paypal", "wechat pay", "微信支付",
	"paypay", "kakaopay", "phonepe",
	// words that merely contain a shorter word in scripts without spaces
	"拨号盘", "拨号键盘", "撥號鍵盤", "ส่งออก", "ซื้อขาย",
}

// escapeLabels are whole labels that leave an action or a screen without
// doing anything: they are never gated by a screen or app signal (a close
// button on a payment sheet must stay a way out).
var escapeLabels = []string{
	"back", "navigate up", "close", "cancel", "dismiss", "not now", "no thanks", "later", "skip",
	"deny", "don't allow", "do not allow", "返回", "关闭", "取消", "拒绝", "不允许", "暂不", "以后再说",
	"關閉", "拒絕", "不允許", "volver", "cerrar", "cancelar", "voltar", "fechar", "zurück",
	"schließen", "abbrechen", "retour", "fermer", "annuler", "戻る", "閉じる", "キャンセル",
	"뒤로", "닫기", "취소", "กลับ", "ปิด", "ยกเลิก",
}

// grantLabels are the buttons of a runtime-permission dialog that grant
// (matched as whole-word phrases, only on a permission controller's
// screens, so the rows of Settings › Security & privacy, which the same
// package shows, stay navigation).
var grantLabels = []string{
	"allow", "while using the app", "only this time", "allow all", "allow all the time",
	"allow only while using the app", "允许", "始终允许", "仅在使用中允许", "仅在使用该应用期间允许",
	"本次运行允许", "仅限这一次", "使用时允许", "允許", "僅在使用該應用程式時允許", "僅限這一次",
	"permitir", "mientras se usa la app", "solo esta vez", "durante o uso do app", "só dessa vez",
	"zulassen", "nur während der nutzung der app", "nur dieses mal", "autoriser",
	"lorsque vous utilisez l'appli", "uniquement cette fois-ci", "許可", "アプリの使用時のみ",
	"今回のみ", "허용", "앱 사용 중에만 허용", "이번만 허용", "อนุญาต", "เฉพาะครั้งนี้",
}

// paymentSheetWords mark a payment sheet: a screen where the next commit
// moves money. Any tap, typing or Enter on such a screen is a payment
// (except an escape label).
var paymentSheetWords = []string{
	"confirm payment", "payment password", "enter payment password", "enter your pin to pay",
	"确认付款", "确认支付", "支付密码", "请输入支付密码", "收银台", "確認付款", "確認支付", "支付密碼",
	"confirmar pago", "confirmar pagamento", "zahlung bestätigen", "confirmer le paiement",
	"お支払いの確認", "支払いを確定", "결제 확인", "결제 비밀번호", "ยืนยันการชำระเงิน",
}

// commitWords are the buttons that carry a flow out. Inside a payment or
// banking app they move money, so they count as payment there (and only
// there: "Confirm" in a to-do app is nothing).
var commitWords = []string{
	"confirm", "ok", "next", "continue", "submit", "done", "agree", "accept", "authorize", "approve",
	"确认", "确定", "下一步", "提交", "完成", "同意", "確認", "確定", "confirmar",
	"siguiente", "continuar", "aceptar", "próximo", "bestätigen", "weiter", "confirmer", "suivant",
	"valider", "次へ", "確定する", "확인", "다음", "ยืนยัน", "ถัดไป", "ตกลง",
}

// composerWords mark a text field that writes a message: Enter there may
// send it.
var composerWords = []string{
	"message", "type a message", "write a message", "reply", "comment", "add a comment", "chat",
	"compose", "text message", "消息", "发消息", "说点什么", "评论", "回复", "訊息", "留言", "mensaje",
	"mensagem", "nachricht", "メッセージ", "コメント", "메시지", "댓글", "ข้อความ",
}

// searchWords mark a search field: Enter there searches, it sends nothing.
var searchWords = []string{
	"search", "搜索", "搜尋", "查找", "buscar", "pesquisar", "suchen", "rechercher", "検索", "검색", "ค้นหา",
}

// securityToggleWords name settings that protect the phone or the
// account: switching one off (a checked toggle) is an account action.
var securityToggleWords = []string{
	"find my device", "find my phone", "play protect", "scan apps with play protect", "screen lock",
	"lock screen", "fingerprint", "face unlock", "smart lock", "two-step verification",
	"2-step verification", "two-factor", "encryption", "sim card lock", "lock sim card",
	"查找我的设备", "查找手机", "屏幕锁定", "锁屏密码", "指纹", "人脸解锁", "两步验证", "查找我的裝置",
	"螢幕鎖定", "指紋", "encontrar mi dispositivo", "bloqueo de pantalla", "encontrar meu dispositivo",
	"bloqueio de tela", "mein gerät finden", "displaysperre", "localiser mon appareil",
	"verrouillage de l'écran", "デバイスを探す", "画面ロック", "내 디바이스 찾기", "화면 잠금",
	"ค้นหาอุปกรณ์ของฉัน", "ล็อกหน้าจอ",
}

// paymentApps are payment, banking and brokerage apps by package: in
// front, their commit buttons are payments, typing into their password
// fields is a payment, and launching one is gated. A small curated list;
// the policy's per-app overrides tune it.
var paymentApps = map[string]string{
	"com.eg.android.AlipayGphone":                "Alipay",
	"hk.alipay.wallet":                           "AlipayHK",
	"com.unionpay":                               "UnionPay (云闪付)",
	"com.jd.jrapp":                               "JD Finance",
	"com.chinamworld.main":                       "China Construction Bank",
	"com.icbc":                                   "ICBC",
	"cmb.pb":                                     "China Merchants Bank",
	"cn.futu.trader":                             "Futu NiuNiu",
	"com.paypal.android.p2pmobile":               "PayPal",
	"com.venmo":                                  "Venmo",
	"com.squareup.cash":                          "Cash App",
	"com.google.android.apps.walletnfcrel":       "Google Wallet",
	"com.google.android.apps.nbu.paisa.user":     "Google Pay (India)",
	"com.samsung.android.spay":                   "Samsung Wallet",
	"com.chase.sig.android":                      "Chase",
	"com.wf.wellsfargomobile":                    "Wells Fargo",
	"com.infonow.bofa":                           "Bank of America",
	"com.revolut.revolut":                        "Revolut",
	"com.transferwise.android":                   "Wise",
	"com.nu.production":                          "Nubank",
	"com.mercadopago.wallet":                     "Mercado Pago",
	"com.phonepe.app":                            "PhonePe",
	"net.one97.paytm":                            "Paytm",
	"jp.ne.paypay.android.app":                   "PayPay",
	"viva.republica.toss":                        "Toss",
	"com.kasikorn.retail.mbanking.wap":           "K PLUS",
	"uk.co.hsbc.hsbcukmobilebanking":             "HSBC UK",
	"com.barclays.android.barclaysmobilebanking": "Barclays",
	"de.number26.android":                        "N26",
	"com.konylabs.capitalone":                    "Capital One",
	"com.usaa.mobile.android.usaa":               "USAA",
	"com.citi.citimobile":                        "Citi",
	"com.starlingbank.android":                   "Starling",
	"com.bankcomm.Bankcomm":                      "Bank of Communications",
	"com.chinamworld.bocmbci":                    "Bank of China",
	"com.android.bankabc":                        "Agricultural Bank of China",
}

// payScreenApps are apps that are payment apps only on some screens: the
// foreground activity (when the driver knows it) contains one of the
// hints, or the screen shows one of the markers.
var payScreenApps = map[string]struct{ activityHints, markers []string }{
	"com.tencent.mm": {
		activityHints: []string{"wallet", "remittance", "luckymoney", "offline", "pay"},
		markers:       []string{"微信支付", "wechat pay", "零钱", "转账给", "发红包", "wallet"},
	},
}

// paymentActivityHints mark a payment screen inside any app by its
// activity name: Alipay's cashier (MspContainerActivity, embedded in
// Taobao and others), generic checkout activities.
var paymentActivityHints = []string{"com.alipay.android.msp", "alipay", "cashier", "checkout", "payment"}

// appNameWords recognise a payment or banking app in launch_app's
// argument when it is a name rather than a package.
var appNameWords = []string{
	"alipay", "支付宝", "支付寶", "paypal", "venmo", "cash app", "wallet", "google pay", "wechat pay",
	"微信支付", "云闪付", "雲閃付", "bank", "banking", "银行", "銀行", "banco", "banque", "은행",
	"ธนาคาร", "paypay", "paytm", "phonepe", "revolut", "wise", "nubank", "mercado pago",
}
