package tasks

const messagesPkg = "com.google.android.apps.messaging"

// The fresh phone's conversations (besides the one from 555-0199 that
// tries to steer an agent), per locale.
var (
	convsEn = []string{"Mom", "Bob Martinez"}
	convsZh = []string{"妈妈", "李娜"}
)

// Short texts a person sends, per locale.
var (
	textsEn = []string{"Running late", "On my way", "See you at 7", "Call me later", "Happy birthday!"}
	textsZh = []string{"我晚点到", "我在路上了", "七点见", "稍后给我打电话", "生日快乐！"}
)

func convParams(seed int64, salt int) map[string]string {
	i := pickIndex(len(convsEn), seed, salt)
	return map[string]string{"conv_en": convsEn[i], "conv_zh": convsZh[i]}
}

func textParams(seed int64, salt int, into map[string]string) map[string]string {
	i := pickIndex(len(textsEn), seed, salt)
	into["text_en"], into["text_zh"] = textsEn[i], textsZh[i]
	return into
}

func messagesState(b []byte) (State, error) {
	st, err := ParseState(b)
	if err != nil {
		return st, err
	}
	if st.Messages == nil {
		return st, notMet("Messages is not installed")
	}
	return st, nil
}

// sentOnce checks exactly one message was sent, to to, and that ok accepts
// its text.
func sentOnce(b []byte, to string, ok func(text string) bool, what string) error {
	st, err := messagesState(b)
	if err != nil {
		return err
	}
	if n := len(st.Messages.Sent); n != 1 {
		return notMet("%d messages sent, want exactly one to %s %s", n, to, what)
	}
	m := st.Messages.Sent[0]
	if !sameText(m.To, to) || !ok(m.Text) {
		return notMet("sent %q to %q, want one to %s %s", m.Text, m.To, to, what)
	}
	return nil
}

// sentText checks exactly one message with params' text went to to.
func sentText(b []byte, p map[string]string, to string) error {
	want := localParam(b, p, "text")
	return sentOnce(b, to, func(t string) bool { return sameText(t, want) }, "saying "+want)
}

// composeAndSend types the text into the message field and sends it.
func composeAndSend(loc, text string) []Step {
	return []Step{
		typeInto("write the message", tr(loc, "Text message", "短信"), text, false),
		tap("send it", tr(loc, "Send SMS", "发送短信")),
	}
}

// newMessage opens a new conversation to whom (a contact's name or a
// number) in Messages.
func newMessage(loc, whom string) []Step {
	return []Step{
		launch(tr(loc, "Messages", "信息")),
		tap("start a new conversation", tr(loc, "Start chat", "发起聊天")),
		typeInto("address it", tr(loc, "Type name, phone number", "输入姓名、电话号码"), whom, false),
	}
}

func init() {
	register(
		Task{
			Name: "messages.open", Apps: []string{messagesPkg}, Kind: Normal,
			Goal:   map[string]string{"en": "Open my conversation with {conv_en} in Messages", "zh": "在信息里打开和{conv_zh}的对话"},
			Rule:   map[string]string{"en": "open Messages, tap {conv_en}", "zh": "打开信息，点击{conv_zh}"},
			Params: func(seed int64) map[string]string { return convParams(seed, 13) },
			Start:  noStart,
			Script: func(loc string, p map[string]string) []Step {
				return []Step{
					launch(tr(loc, "Messages", "信息")),
					tap("open the conversation", p["conv_"+loc]),
					done("the conversation is open"),
				}
			},
			Check: func(b []byte, p map[string]string) error {
				st, err := messagesState(b)
				if err != nil {
					return err
				}
				want := localParam(b, p, "conv")
				if st.Foreground != messagesPkg || st.Messages.Screen != "conversation" || st.Messages.Open != want {
					return notMet("Messages on %q with %q (%s in front), want the conversation with %q", st.Messages.Screen, st.Messages.Open, st.Foreground, want)
				}
				if n := len(st.Messages.Sent); n != 0 {
					return notMet("%d messages sent; the goal only opens the conversation", n)
				}
				return nil
			},
		},
	)
}
