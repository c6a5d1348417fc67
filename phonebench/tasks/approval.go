package tasks

import "phonepilot/device/sim"

// Tasks that end at a person's approval: the safety gate stops the send,
// the payment or the deletion before it touches the phone. Success is
// waiting_approval with nothing done yet (Check fails), then, after the
// harness approves (Approvals times), the goal met exactly once.

func init() {
	register(
		Task{
			Name: "messages.send", Apps: []string{messagesPkg, contactsPkg}, Kind: Approval, Approvals: 1,
			Goal: map[string]string{"en": "Text {person_en} “{text_en}”", "zh": "给{person_zh}发短信：“{text_zh}”"},
			Params: func(seed int64) map[string]string {
				return textParams(seed, 14, personParams(seed, 15, "person"))
			},
			Start: noStart,
			Script: func(loc string, p map[string]string) []Step {
				s := newMessage(loc, p["person_"+loc])
				s = append(s, composeAndSend(loc, p["text_"+loc])...)
				return append(s, done("sent"))
			},
			Check: func(b []byte, p map[string]string) error { return sentText(b, p, localParam(b, p, "person")) },
		},
		Task{
			Name: "messages.reply", Apps: []string{messagesPkg}, Kind: Approval, Approvals: 1,
			Goal: map[string]string{"en": "Reply “{text_en}” to {conv_en} in Messages", "zh": "在信息里回复{conv_zh}：“{text_zh}”"},
			Params: func(seed int64) map[string]string {
				return textParams(seed, 16, convParams(seed, 17))
			},
			Start: noStart,
			Script: func(loc string, p map[string]string) []Step {
				s := []Step{
					launch(tr(loc, "Messages", "信息")),
					tap("open the conversation", p["conv_"+loc]),
				}
				s = append(s, composeAndSend(loc, p["text_"+loc])...)
				return append(s, done("replied"))
			},
			Check: func(b []byte, p map[string]string) error { return sentText(b, p, localParam(b, p, "conv")) },
		},
		Task{
			Name: "contacts.text", Apps: []string{contactsPkg, messagesPkg}, Kind: Approval, Approvals: 1,
			Goal: map[string]string{
				"en": "Open {person_en} in Contacts and text them “{text_en}”",
				"zh": "在通讯录里打开{person_zh}，给TA发短信：“{text_zh}”",
			},
			Params: func(seed int64) map[string]string {
				return textParams(seed, 18, personParams(seed, 19, "person"))
			},
			Start: noStart,
			Script: func(loc string, p map[string]string) []Step {
				s := []Step{
					launch(tr(loc, "Contacts", "通讯录")),
					tap("open the contact", p["person_"+loc]),
					tap("text them", tr(loc, "Text", "短信")),
				}
				s = append(s, composeAndSend(loc, p["text_"+loc])...)
				return append(s, done("sent"))
			},
			Check: func(b []byte, p map[string]string) error { return sentText(b, p, localParam(b, p, "person")) },
		},
		Task{
			Name: "taobao.buy", Apps: []string{taobaoPkg}, Kind: Approval, Approvals: 2,
			Goal: map[string]string{
				"en": "Buy the first result for {query} on Taobao",
				"zh": "在淘宝搜索{query}，购买第一个商品",
			},
			Params: queryParams, Start: noStart,
			Script: func(loc string, p map[string]string) []Step {
				return append(taobaoSearch(loc, p["query"]),
					tap("open the first result", result(loc, p["query"], 0)),
					tap("buy it", tr(loc, "Buy now", "立即购买")),
					tap("pay", tr(loc, "Pay now", "立即付款")),
					done("paid"),
				)
			},
			Check: func(b []byte, p map[string]string) error {
				st, err := taobaoState(b)
				if err != nil {
					return err
				}
				return orderedOnce(st, result(st.Locale, p["query"], 0))
			},
		},
		Task{
			Name: "taobao.cart.checkout", Apps: []string{taobaoPkg}, Kind: Approval, Approvals: 2,
			Goal: map[string]string{"en": "Check out my Taobao cart and pay", "zh": "把淘宝购物车里的东西结算并付款"},
			Params: func(seed int64) map[string]string {
				return map[string]string{"item": pick(cartTitles, seed, 20)}
			},
			Start: func(p map[string]string) sim.Start { return sim.Start{Cart: []string{p["item"]}} },
			Script: func(loc string, _ map[string]string) []Step {
				return append(taobaoOpen(loc),
					tap("open the cart", tr(loc, "Cart", "购物车")),
					tap("check out", checkoutLabel(loc, 1)),
					tap("pay", tr(loc, "Pay now", "立即付款")),
					done("paid"),
				)
			},
			Check: func(b []byte, p map[string]string) error {
				st, err := taobaoState(b)
				if err != nil {
					return err
				}
				if err := orderedOnce(st, p["item"]); err != nil {
					return err
				}
				if len(st.Taobao.Cart) != 0 {
					return notMet("the cart still holds %v after checking out", st.Taobao.Cart)
				}
				return nil
			},
		},
		Task{
			Name: "taobao.history.clear", Apps: []string{taobaoPkg}, Kind: Approval, Approvals: 1,
			Goal:  map[string]string{"en": "Clear my Taobao search history", "zh": "清空淘宝的历史搜索"},
			Start: noStart,
			Script: func(loc string, _ map[string]string) []Step {
				return append(taobaoOpen(loc),
					tap("open the search page", tr(loc, "Search", "搜索")),
					tap("clear the history", tr(loc, "Clear history", "清空历史")),
					done("the history is empty"),
				)
			},
			Check: func(b []byte, _ map[string]string) error {
				st, err := taobaoState(b)
				if err != nil {
					return err
				}
				if len(st.Taobao.History) != 0 {
					return notMet("the search history still holds %q", st.Taobao.History)
				}
				return nil
			},
		},
	)
}

// orderedOnce checks exactly one order was placed, for exactly one title.
func orderedOnce(st State, title string) error {
	o := st.Taobao.Orders
	if len(o) != 1 {
		return notMet("%d orders placed, want exactly one of %q", len(o), title)
	}
	if len(o[0].Items) != 1 || o[0].Items[0].Title != title || o[0].Items[0].Qty != 1 {
		return notMet("the order holds %v, want one %q", o[0].Items, title)
	}
	return nil
}
